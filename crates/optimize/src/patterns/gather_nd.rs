//! `GatherND(data, Transpose(NonZero(mask)), batch_dims=0)` is `BooleanMask(data, mask)` when
//! the mask is bool, of rank k >= 1, and data's first k dimensions are provably the mask's: both
//! give `[nnz] + data.shape[k:]`, the selected slices in row-major order. The index operand may
//! come through value-preserving steps (see `crate::trace`), which covers the dynamo exporter's
//! 1-D form; a mask made by `Expand(m, Shape(data))` has data's shape by construction.

use super::guarded::{fused_or_guarded, Reads};
use super::{chain_text, nonzero_node, Edit, Kind};
use crate::graph::{describe, fresh_node_name, int_attr};
use crate::report::{Fact, Reason};
use crate::trace::{trace, Traced, View};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;

/// The traced mask when `node` is a `GatherND(batch_dims=0)` reading a whole `[nnz, k]`
/// coordinate tensor.
pub fn candidate(view: &View, node: &NodeProto) -> Option<Traced> {
    let shape_ok = view.is_op(node, "GatherND")
        && node.input.len() == 2
        && node.output.len() == 1
        && int_attr(node, "batch_dims").ok()?.unwrap_or(0) == 0;
    if !shape_ok {
        return None;
    }
    trace(view, &node.input[1]).filter(|t| !t.squeezed)
}

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let traced = candidate(view, node)?;
        fused_or_guarded(
            view,
            i,
            node,
            traced,
            Kind::BooleanMaskGatherNd,
            Reads::GatherNd,
        )
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
    facts: Vec<Fact>,
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
        prelude: vec![],
        replacement: nonzero_node("BooleanMask", name, &[data, &traced.mask], out),
        kind,
        line,
        chain: traced.chain,
        facts,
    }
}

/// The facts proven when the mask is bool and data's first `k` dimensions are provably the
/// mask's; else the failed proof and both shapes.
pub fn leading_dims_match(
    view: &View,
    data: &str,
    traced: &Traced,
    k: usize,
) -> Result<Vec<Fact>, (Reason, String)> {
    let mask_name = &traced.mask;
    let (mask, data_info) = (view.shapes.get(mask_name), view.shapes.get(data));
    let shapes = format!(
        "mask {mask_name} {}, data {data} {}",
        mask.shape_text(),
        data_info.shape_text()
    );
    for name in [mask_name.as_str(), data] {
        if let Some(conflict) = view.shapes.conflict(name) {
            return Err((Reason::Conflict, format!("{name}: {conflict}")));
        }
    }
    if mask.elem_type != Some(DataType::Bool as i32) {
        let elem = mask
            .elem_type
            .and_then(|e| DataType::try_from(e).ok())
            .map_or("unknown".to_string(), |e| format!("{e:?}"));
        return Err((
            Reason::MaskNotBool,
            format!("{shapes}; mask element type {elem}"),
        ));
    }
    let (Some(mask_dims), Some(data_dims)) = (mask.dims, data_info.dims) else {
        return Err((Reason::SizesNotProven, shapes));
    };
    let proven = mask_dims.len() == k
        && data_dims.len() >= k
        && mask_dims.iter().zip(&data_dims).all(|(m, d)| m.same(d));
    if !proven {
        return Err((Reason::SizesNotProven, shapes));
    }
    let mut facts = vec![
        Fact::Bool {
            tensor: mask_name.clone(),
        },
        Fact::Rank {
            tensor: mask_name.clone(),
            rank: k,
        },
    ];
    facts.extend(
        mask_dims
            .iter()
            .enumerate()
            .map(|(axis, size)| Fact::SameSize {
                tensor: mask_name.clone(),
                axis,
                other: data.to_string(),
                other_axis: axis,
                size: size.to_string(),
            }),
    );
    Ok(facts)
}
