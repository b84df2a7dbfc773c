//! The TorchScript exporter's `x[torch.where(c)]` for a k-D `c` (k >= 2): it splits the
//! transposed NonZero into its columns, makes the row-major linear index
//! `(c0 * d1 + c1) * d2 + ...` with `d_j = x.shape[j]`, gathers `Flatten(x, axis=k)` at it along
//! axis 0, and reshapes the result to `[nnz] + x.shape[k:]`.
//!
//! That is `BooleanMask(x, c)` when c is bool and x's first k dimensions are provably c's: every
//! linear index is then in range and names the element the coordinates name, in the same order.
//! Hand-written top-k MoE routers read their routing weights this way (`weights[token, slot]`).

use crate::graph::int_attr;
use crate::infer::{Dim, TensorInfo};
use crate::trace::{trace_column, Traced, View};
use nonzero_proto::onnx::NodeProto;

/// How many Reshapes may sit between the Gather and the last one (TorchScript writes two).
const MAX_RESHAPES: usize = 4;

/// A linear-index chain, found at its last Reshape.
#[derive(Debug)]
pub struct Linear<'a> {
    /// The mask's coordinates (rank k), as traced to the last column.
    pub traced: Traced,
    /// The data x.
    pub data: String,
    /// The Gather that reads the linear index: the node reports name when the chain is kept.
    pub gather: &'a NodeProto,
}

/// For the last Reshape of the chain: the traced mask, the data and the Gather.
pub fn candidate<'a>(view: &View<'a>, node: &NodeProto) -> Option<Linear<'a>> {
    let found = chain_end(view, node)?;
    // Only the outermost Reshape: a Reshape reading this one that is also a chain end is.
    let outer = view
        .index
        .readers_of(&node.output[0])
        .iter()
        .any(|&(r, _)| {
            let reader = &view.graph.node[r];
            view.is_op(reader, "Reshape") && chain_end(view, reader).is_some()
        });
    (!outer).then_some(found)
}

/// `node` as `Reshape(...Reshape(Gather(Flatten(x, axis=k), linear, axis=0))..., target)` whose
/// inferred shape is `[nnz] + x.shape[k:]`.
fn chain_end<'a>(view: &View<'a>, node: &NodeProto) -> Option<Linear<'a>> {
    let reshape =
        |n: &NodeProto| view.is_op(n, "Reshape") && n.input.len() == 2 && n.output.len() == 1;
    if !reshape(node) {
        return None;
    }
    let mut inner = view.producer(&node.input[0])?;
    for _ in 0..MAX_RESHAPES {
        if !reshape(inner) {
            break;
        }
        inner = view.producer(&inner.input[0])?;
    }
    let gather_ok = view.is_op(inner, "Gather")
        && inner.input.len() == 2
        && inner.output.len() == 1
        && int_attr(inner, "axis").ok()?.unwrap_or(0) == 0;
    // Checked before reading its input: the chain may start at a node without one (a Constant).
    if !gather_ok {
        return None;
    }
    let flatten = view.producer(&inner.input[0])?;
    if !view.is_op(flatten, "Flatten") || flatten.input.len() != 1 {
        return None;
    }
    let data = flatten.input[0].clone();
    let data_dims = view.shapes.info(&data).and_then(|i| i.dims.clone())?;
    let (traced, last) = linear_prefix(view, &inner.input[1], &data_dims, 0)?;
    let k = traced.mask_rank;
    let axis = int_attr(flatten, "axis").ok()?.unwrap_or(1);
    if k < 2 || last + 1 != k || axis != k as i64 || data_dims.len() < k {
        return None;
    }
    // The final shape: the count, then x's trailing dims.
    let nonzero_out = traced.chain.first()?;
    let nnz = match view.shapes.info(nonzero_out)?.dims.as_deref()? {
        [_, n] => n.clone(),
        _ => return None,
    };
    let expected: Vec<Dim> = std::iter::once(nnz)
        .chain(data_dims[k..].iter().cloned())
        .collect();
    // The target's values themselves (a declared output shape may name the count apart); a
    // 0 or -1 in them would mean "copy" or "infer", so none may be static and below 1.
    let target = view.shapes.values(&node.input[1])?;
    let explicit = expected
        .iter()
        .all(|d| d.as_static().is_none_or(|v| v >= 1));
    let same =
        target.len() == expected.len() && target.iter().zip(&expected).all(|(a, b)| a.same(b));
    (explicit && same).then_some(Linear {
        traced,
        data,
        gather: inner,
    })
}

/// `name` as the row-major linear index of columns `0..=last` of one mask's coordinates over
/// `dims`: column 0 itself, or Horner's `Add(column j, Mul(index of 0..j-1, dims[j]))` with the
/// operands of each in either order. Returns the traced column `last` and `last`.
fn linear_prefix(view: &View, name: &str, dims: &[Dim], depth: usize) -> Option<(Traced, usize)> {
    if let Some((t, 0)) = trace_column(view, name) {
        return Some((t, 0));
    }
    let add = view.producer(name)?;
    if depth >= dims.len() || !view.is_op(add, "Add") || add.input.len() != 2 {
        return None;
    }
    for (c, m) in [(0, 1), (1, 0)] {
        let Some((column, j)) = trace_column(view, &add.input[c]).filter(|(_, j)| *j > 0) else {
            continue;
        };
        let Some(mul) = view.producer(&add.input[m]) else {
            continue;
        };
        if !view.is_op(mul, "Mul") || mul.input.len() != 2 || j >= dims.len() {
            continue;
        }
        for (p, s) in [(0, 1), (1, 0)] {
            if !holds_size(view, &mul.input[s], &dims[j]) {
                continue;
            }
            let prefix = linear_prefix(view, &mul.input[p], dims, depth + 1);
            if prefix.is_some_and(|(t, last)| last + 1 == j && t.mask == column.mask) {
                return Some((column, j));
            }
        }
    }
    None
}

/// True when `name` is a scalar or one-element tensor holding the size `dim`.
fn holds_size(view: &View, name: &str, dim: &Dim) -> bool {
    let rank = view.shapes.info(name).and_then(TensorInfo::rank);
    matches!(rank, Some(0 | 1)) && matches!(view.shapes.values(name), Some([v]) if v.same(dim))
}
