//! Shape inference for the indexing ops between NonZero and the masks built from its results
//! (torchvision's post-processing filters boxes twice: the second mask is computed from the
//! first selection, so its length is the first NonZero's count).

use crate::graph::{int_attr, ints_attr, is_onnx_op, GraphIndex};
use crate::shapes::{Dim, ShapeTable, TensorInfo};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{GraphProto, NodeProto};

/// Normalises `axis` for `rank`, `None` when out of range.
fn axis_in(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

/// The type and shape of the first output of NonZero, Transpose, Gather, GatherND, Squeeze,
/// Unsqueeze and the BooleanMask/ArgWhere this crate emits.
pub fn infer_indexing(
    node: &NodeProto,
    table: &ShapeTable,
    graph: &GraphProto,
    index: &GraphIndex,
) -> Option<TensorInfo> {
    let op = node.op_type.as_deref()?;
    let out = node.output.first()?;
    let input = |i: usize| node.input.get(i).map(|n| table.get(n)).unwrap_or_default();
    let dims = |i: usize| input(i).dims;
    let ints = |name: &str, slot: usize| match ints_attr(node, name) {
        Ok(Some(v)) => Some(v),
        Ok(None) => index.const_ints(graph, node.input.get(slot)?),
        Err(()) => None,
    };
    if !is_onnx_op(node, op) {
        return None;
    }
    let (elem_type, dims) = match op {
        "NonZero" => {
            let rank = i64::try_from(dims(0)?.len()).ok()?;
            (
                Some(DataType::Int64 as i32),
                vec![Dim::Static(rank), Dim::Fresh(out.clone())],
            )
        }
        "Transpose" => {
            let d = dims(0)?;
            let perm = ints_attr(node, "perm")
                .ok()?
                .unwrap_or_else(|| (0..d.len() as i64).rev().collect());
            let permuted: Option<Vec<Dim>> = perm
                .iter()
                .map(|&p| axis_in(p, d.len()).map(|a| d[a].clone()))
                .collect();
            (input(0).elem_type, permuted.filter(|p| p.len() == d.len())?)
        }
        "Gather" => {
            let d = dims(0)?;
            let axis = axis_in(int_attr(node, "axis").ok()?.unwrap_or(0), d.len())?;
            let idx = dims(1)?;
            let mut out_dims = d[..axis].to_vec();
            out_dims.extend(idx);
            out_dims.extend_from_slice(&d[axis + 1..]);
            (input(0).elem_type, out_dims)
        }
        "GatherND" if int_attr(node, "batch_dims").ok()?.unwrap_or(0) == 0 => {
            let (d, i) = (dims(0)?, dims(1)?);
            let Some(Dim::Static(k)) = i.last() else {
                return None;
            };
            let k = usize::try_from(*k).ok().filter(|&k| k <= d.len())?;
            let mut out_dims = i[..i.len() - 1].to_vec();
            out_dims.extend_from_slice(&d[k..]);
            (input(0).elem_type, out_dims)
        }
        "Squeeze" => {
            let d = dims(0)?;
            let axes: Vec<usize> = ints("axes", 1)?
                .iter()
                .map(|&a| axis_in(a, d.len()))
                .collect::<Option<_>>()?;
            let kept = d
                .iter()
                .enumerate()
                .filter(|(i, _)| !axes.contains(i))
                .map(|(_, x)| x.clone())
                .collect();
            (input(0).elem_type, kept)
        }
        "Unsqueeze" => {
            let d = dims(0)?;
            let rank = d.len() + ints("axes", 1)?.len();
            let axes: Vec<usize> = ints("axes", 1)?
                .iter()
                .map(|&a| axis_in(a, rank))
                .collect::<Option<_>>()?;
            let mut rest = d.into_iter();
            let out_dims = (0..rank)
                .map(|i| {
                    if axes.contains(&i) {
                        Some(Dim::Static(1))
                    } else {
                        rest.next()
                    }
                })
                .collect::<Option<Vec<_>>>()?;
            (input(0).elem_type, out_dims)
        }
        // One output: the whole input (TorchScript's column split of a 1-D mask's coordinates).
        "Split" if node.output.len() == 1 => (input(0).elem_type, dims(0)?),
        "Constant" => {
            let value = crate::graph::attr(node, "value").and_then(|a| a.t.as_ref());
            if let Some(t) = value {
                (
                    t.data_type,
                    t.dims.iter().map(|&x| Dim::Static(x)).collect(),
                )
            } else if let Ok(Some(v)) = ints_attr(node, "value_ints") {
                (
                    Some(DataType::Int64 as i32),
                    vec![Dim::Static(v.len() as i64)],
                )
            } else if let Ok(Some(_)) = int_attr(node, "value_int") {
                (Some(DataType::Int64 as i32), vec![])
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
