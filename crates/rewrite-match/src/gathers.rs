//! Chains that end in a gather of a mask's coordinates, and the proof that a fused gather equals
//! them: the candidates each pattern starts from, and the checks of sizes and types.

use crate::graph::int_attr;
use crate::trace::{trace, Traced, View};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;
use nonzero_rewrite_analysis::findings::{Fact, Reason};

/// The first opset whose Slice takes its bounds as inputs (the guarded form's size check).
pub const SLICE_INPUTS: i64 = 10;

/// The traced mask when `node` is a `GatherND(batch_dims=0)` reading a whole `[nnz, k]`
/// coordinate tensor.
pub fn gather_nd_candidate(view: &View, node: &NodeProto) -> Option<Traced> {
    let shape_ok = view.is_op(node, "GatherND")
        && node.input.len() == 2
        && node.output.len() == 1
        && int_attr(node, "batch_dims").ok()?.unwrap_or(0) == 0;
    if !shape_ok {
        return None;
    }
    trace(view, &node.input[1]).filter(|t| !t.squeezed)
}

/// The traced mask when `node` is a `Gather(axis=0)` reading the `[nnz]` column.
pub fn column_candidate(view: &View, node: &NodeProto) -> Option<Traced> {
    let shape_ok = view.is_op(node, "Gather")
        && node.input.len() == 2
        && node.output.len() == 1
        && int_attr(node, "axis").ok()?.unwrap_or(0) == 0;
    if !shape_ok {
        return None;
    }
    trace(view, &node.input[1]).filter(|t| t.squeezed)
}

/// The traced 1-D bool mask and the axis when `node` is a Gather of its `[nnz]` positions, or a
/// GatherND of its `[nnz, 1]` coordinates (the same rows: axis 0).
pub fn axis_candidate(view: &View, node: &NodeProto) -> Option<(Traced, i64)> {
    if node.input.len() != 2 || node.output.len() != 1 {
        return None;
    }
    let (axis, squeezed) = if view.is_op(node, "Gather") {
        (int_attr(node, "axis").ok()?.unwrap_or(0), true)
    } else if view.is_op(node, "GatherND") && int_attr(node, "batch_dims").ok()?.unwrap_or(0) == 0 {
        (0, false)
    } else {
        return None;
    };
    let traced = trace(view, &node.input[1])?;
    let bool_mask = view.shapes.get(&traced.mask).elem_type == Some(DataType::Bool as i32);
    (traced.squeezed == squeezed && traced.mask_rank == 1 && bool_mask).then_some((traced, axis))
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
                size: size.report_text(),
            }),
    );
    Ok(facts)
}
/// True when the guarded form may be written for unproven sizes: a mask of rank 2 or more,
/// opset 10 or later, data of known rank at least the mask's, and no size of the mask fixed to
/// another than data's (the If would always take the original's branch).
///
/// Not for a 1-D mask: there ArgWhere and ONNX Runtime's Gather of rows are nearly as fast as
/// BooleanMask at low density, and the If's own cost (tens of microseconds) made the guarded
/// form up to 1.4x slower at 1% (3-5x faster at 50%); with a k-D mask, ONNX Runtime's GatherND
/// is slow enough that it is no slower at 1% and 9-24x faster at 50% (benches/guarded_forms.py).
pub fn guardable(view: &View, data: &str, traced: &Traced) -> bool {
    if traced.mask_rank < 2 {
        return false;
    }
    let opset = view.shapes.opset().unwrap_or(0);
    let (mask, data) = (view.shapes.get(&traced.mask), view.shapes.get(data));
    let (Some(mask_dims), Some(data_dims)) = (mask.dims, data.dims) else {
        return false;
    };
    let differ = mask_dims
        .iter()
        .zip(&data_dims)
        .any(|(m, d)| matches!((m.as_static(), d.as_static()), (Some(a), Some(b)) if a != b));
    opset >= SLICE_INPUTS && data_dims.len() >= traced.mask_rank && !differ
}
