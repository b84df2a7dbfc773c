//! The indexing ops between NonZero and the masks built from its results (torchvision's
//! post-processing filters boxes twice: the second mask is computed from the first selection,
//! so its length is the first NonZero's count), and the ops this crate emits.

use super::{axis_in, Ctx, Dim, TensorInfo};
use nonzero_proto::onnx::tensor_proto::DataType;

const INT64: Option<i32> = Some(DataType::Int64 as i32);

/// The type and shape of the first output of NonZero, Gather, GatherND, GatherElements and
/// the scatters.
pub fn infer_indexing(op: &str, ctx: &Ctx) -> Option<TensorInfo> {
    let out = ctx.node.output.first()?;
    let (elem_type, dims) = match op {
        "NonZero" => {
            let rank = i64::try_from(ctx.dims(0)?.len()).ok()?;
            // The count is data-dependent: a size equal only to itself, or to the count of
            // a NonZero whose mask holds as many elements ([`super::same_count`]).
            let mask = &ctx.node.input[0];
            let counted =
                super::same_count::nonzero_of_equal_count(ctx.graph, ctx.index, ctx.table, mask);
            let count = counted.as_deref().unwrap_or(out);
            (
                INT64,
                vec![Dim::from(rank), Dim::fresh(&format!("nnz:{count}"))],
            )
        }
        "Gather" => {
            let d = ctx.dims(0)?;
            let axis = axis_in(ctx.int("axis", 0)?, d.len())?;
            let mut out_dims = d[..axis].to_vec();
            out_dims.extend(ctx.dims(1)?);
            out_dims.extend_from_slice(&d[axis + 1..]);
            (ctx.elem(0), out_dims)
        }
        "GatherND" => {
            let (d, i) = (ctx.dims(0)?, ctx.dims(1)?);
            let batch = usize::try_from(ctx.int("batch_dims", 0)?).ok()?;
            let k = usize::try_from(i.last()?.as_static()?).ok()?;
            if batch > i.len().saturating_sub(1) || batch + k > d.len() {
                return None;
            }
            let mut out_dims = i[..i.len() - 1].to_vec();
            out_dims.extend_from_slice(&d[batch + k..]);
            (ctx.elem(0), out_dims)
        }
        "GatherElements" => (ctx.elem(0), ctx.dims(1)?),
        "ScatterND" | "ScatterElements" | "Scatter" => (ctx.elem(0), ctx.dims(0)?),
        "Constant" => {
            let value = crate::graph::attr(ctx.node, "value").and_then(|a| a.t.as_ref());
            if let Some(t) = value {
                (t.data_type, t.dims.iter().map(|&x| Dim::from(x)).collect())
            } else if let Ok(Some(v)) = crate::graph::ints_attr(ctx.node, "value_ints") {
                (INT64, vec![Dim::from(v.len() as i64)])
            } else if let Ok(Some(_)) = crate::graph::int_attr(ctx.node, "value_int") {
                (INT64, vec![])
            } else if crate::graph::attr(ctx.node, "value_float").is_some() {
                (Some(DataType::Float as i32), vec![])
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some(TensorInfo {
        elem_type,
        dims: Some(dims),
    })
}
