//! When an op's sizes depend on values the inference does not know (Resize sizes computed in
//! float, Pad amounts, a Reshape target built at run time), its rank usually still follows
//! from the op: the output gets fresh sizes of that rank, so ranks and element types keep
//! flowing to the NonZero behind it.

use super::{Ctx, Dim, TensorInfo};
use crate::graph::attr;
use nonzero_proto::onnx::tensor_proto::DataType;

/// Ops whose outputs have input 0's rank and element type.
const SAME_RANK_OPS: &[&str] = &[
    "Resize", "Upsample", "Pad", "Tile", "Slice", "Split", "TopK",
];

/// Outputs of `op` with the rank its rule gives and fresh sizes, or `None`.
pub fn rank_only(op: &str, ctx: &Ctx) -> Option<Vec<Option<TensorInfo>>> {
    let fresh =
        |slot: usize, rank: usize| (0..rank).map(|a| ctx.fresh(slot, a)).collect::<Vec<Dim>>();
    // A 1-D operand of static length: how many sizes it names.
    let length = |slot: usize| match ctx.dims(slot).as_deref() {
        Some([n]) => n.as_static().and_then(|n| usize::try_from(n).ok()),
        _ => None,
    };
    let info = |elem_type: Option<i32>, dims: Vec<Dim>| {
        Some(TensorInfo {
            elem_type,
            dims: Some(dims),
        })
    };
    let rank0 = ctx.dims(0).map(|d| d.len());
    let outputs = match op {
        _ if SAME_RANK_OPS.contains(&op) => {
            let rank = rank0?;
            let elem = |slot: usize| {
                if op == "TopK" && slot == 1 {
                    Some(DataType::Int64 as i32)
                } else {
                    ctx.elem(0)
                }
            };
            (0..ctx.node.output.len())
                .map(|slot| info(elem(slot), fresh(slot, rank)))
                .collect()
        }
        _ if op.starts_with("Reduce") && ctx.int("keepdims", 1)? != 0 => {
            vec![info(ctx.elem(0), fresh(0, rank0?))]
        }
        "Reshape" => vec![info(ctx.elem(0), partial_reshape(ctx)?)],
        "Expand" => vec![info(ctx.elem(0), fresh(0, rank0?.max(length(1)?)))],
        "Unsqueeze" => vec![info(ctx.elem(0), fresh(0, rank0? + length(1)?))],
        // Its sizes are its shape's values: those proven, and fresh ones for the rest.
        "ConstantOfShape" => {
            let value = attr(ctx.node, "value").and_then(|a| a.t.as_ref());
            let elem_type = value.map_or(Some(DataType::Float as i32), |t| t.data_type);
            let dims = match ctx.entries(0) {
                Some(entries) => entries
                    .into_iter()
                    .enumerate()
                    .map(|(a, d)| d.unwrap_or_else(|| ctx.fresh(0, a)))
                    .collect(),
                None => fresh(0, length(0)?),
            };
            vec![info(elem_type, dims)]
        }
        "OneHot" => vec![info(ctx.elem(2), fresh(0, ctx.dims(0)?.len() + 1))],
        _ => return None,
    };
    Some(outputs)
}

/// A Reshape whose target is partly proven: a positive entry is that size and a 0 (without
/// `allowzero`) the input's; a -1 or an entry not proven is a fresh size (a -1 takes what the
/// others leave, which an unknown entry makes unknown).
fn partial_reshape(ctx: &Ctx) -> Option<Vec<Dim>> {
    let entries = ctx.entries(1)?;
    let input = ctx.dims(0);
    let allow_zero = ctx.int("allowzero", 0)? == 1;
    let dims = entries.into_iter().enumerate().map(|(a, d)| {
        let kept = match d.as_ref().and_then(Dim::as_static) {
            Some(v) if v > 0 => d,
            Some(0) if !allow_zero => input.as_ref().and_then(|i| i.get(a).cloned()),
            _ => None,
        };
        kept.unwrap_or_else(|| ctx.fresh(0, a))
    });
    Some(dims.collect())
}
