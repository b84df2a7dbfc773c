//! The model's own ops that QNN HTP does not take, in ops it does, for `--target qnn`: OneHot
//! ([`one_hot`]), Einsums not in a batched MatMul's form ([`einsum_matmul`]), and GatherND at
//! constant indices ([`gather_nd`]). Each would otherwise go to the CPU EP.

mod einsum_matmul;
mod gather_nd;
mod one_hot;

use crate::scope::Scope;
use nonzero_proto::onnx::GraphProto;

/// Rewrites those ops of `graph` (the main graph).
pub fn rewrite(graph: &mut GraphProto, scope: &Scope) {
    one_hot::rewrite(graph, scope);
    einsum_matmul::rewrite(graph, scope);
    gather_nd::rewrite(graph, scope);
}
