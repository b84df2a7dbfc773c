//! `GatherND(data, Transpose(NonZero(mask)), batch_dims=0)` is `BooleanMask(data, mask)` when
//! the mask is bool, of rank k >= 1, and data's first k dimensions are provably the mask's: both
//! give `[nnz] + data.shape[k:]`, the selected slices in row-major order. The index operand may
//! come through value-preserving steps (see `crate::trace`), which covers the dynamo exporter's
//! 1-D form; a mask made by `Expand(m, Shape(data))` has data's shape by construction.

use super::{chain_text, nonzero_node, Edit, Kind};
use crate::graph::{describe, fresh_node_name, int_attr, is_onnx_op};
use crate::trace::{trace, Traced, View};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let shape_ok = is_onnx_op(node, "GatherND")
            && node.input.len() == 2
            && node.output.len() == 1
            && int_attr(node, "batch_dims").ok()?.unwrap_or(0) == 0;
        if !shape_ok {
            return None;
        }
        let traced = trace(view, &node.input[1]).filter(|t| !t.squeezed)?;
        leading_dims_match(view, &node.input[0], &traced, traced.mask_rank)?;
        Some(boolean_mask_edit(
            view,
            i,
            node,
            traced,
            Kind::BooleanMaskGatherNd,
        ))
    })
}

/// The edit that replaces the gather `node` (index `i`, inputs `data, indices`) by
/// `BooleanMask(data, traced.mask)`, once the caller has proved the two equal.
pub fn boolean_mask_edit(
    view: &View,
    i: usize,
    node: &NodeProto,
    traced: Traced,
    kind: Kind,
) -> Edit {
    let (data, out) = (&node.input[0], &node.output[0]);
    let name = fresh_node_name(view.graph, &format!("{}_boolean_mask", describe(node)));
    let line = format!(
        "BooleanMask: {} -> {} ({}) became BooleanMask({}, {}) -> {}",
        chain_text(view, &traced.chain),
        node.op_type.as_deref().unwrap_or_default(),
        describe(node),
        data,
        traced.mask,
        out
    );
    Edit {
        node: i,
        replacement: nonzero_node("BooleanMask", name, &[data, &traced.mask], out),
        kind,
        line,
        chain: traced.chain,
    }
}

/// `Some(())` when the mask is bool and data's first `k` dimensions are provably the mask's.
pub fn leading_dims_match(view: &View, data: &str, traced: &Traced, k: usize) -> Option<()> {
    let mask = view.shapes.get(&traced.mask);
    let data = view.shapes.get(data);
    let (mask_dims, data_dims) = (mask.dims?, data.dims?);
    let proven = mask.elem_type == Some(DataType::Bool as i32)
        && mask_dims.len() == k
        && data_dims.len() >= k
        && mask_dims.iter().zip(&data_dims).all(|(m, d)| m.same(d));
    proven.then_some(())
}
