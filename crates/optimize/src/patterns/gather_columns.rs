//! `Gather(data, col, axis=0)` where `col` is the one column of a 1-D bool mask's transposed
//! NonZero (TorchScript: `Split(axis=1) -> Squeeze(1)`; dynamo: `Slice -> Squeeze`) is
//! `BooleanMask(data, mask)` when data's first dimension is provably the mask's: both give
//! `[nnz] + data.shape[1:]`. This is `x[torch.where(m)[0]]` and torchvision's post-processing.

use super::gather_nd::leading_dims_match;
use super::{chain_text, nonzero_node, Edit, Kind};
use crate::graph::{describe, fresh_node_name, int_attr, is_onnx_op};
use crate::trace::{trace, View};

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let shape_ok = is_onnx_op(node, "Gather")
            && node.input.len() == 2
            && node.output.len() == 1
            && int_attr(node, "axis").ok()?.unwrap_or(0) == 0;
        if !shape_ok {
            return None;
        }
        let (data, column, out) = (&node.input[0], &node.input[1], &node.output[0]);
        let traced = trace(view, column).filter(|t| t.squeezed)?;
        leading_dims_match(view, data, &traced, 1)?;
        let name = fresh_node_name(view.graph, &format!("{}_boolean_mask", describe(node)));
        let line = format!(
            "BooleanMask: {} -> Gather ({}) became BooleanMask({}, {}) -> {}",
            chain_text(view, &traced.chain),
            describe(node),
            data,
            traced.mask,
            out
        );
        Some(Edit {
            node: i,
            replacement: nonzero_node("BooleanMask", name, &[data, &traced.mask], out),
            kind: Kind::BooleanMaskGather,
            line,
            chain: traced.chain,
        })
    })
}
