//! Lengths that the shapes bound: the most selected elements of any row of a bool mask,
//! `max(m.sum(a))` (Longformer's `max_num_global_attn_indices`: the most global tokens of any
//! sequence). Such a length is computed from values, but it is never more than the mask's
//! size along `a`: that size is its capacity, and no user capacity is needed (nor cut).

use crate::graph::int_attr;
use crate::trace::View;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;

/// For `ReduceMax(ReduceSum(Cast(m), axes=[a], keepdims=0))` over every axis, to a scalar, with
/// `m` bool and its size along `a` fixed: that size. `None` for anything else.
pub fn bound(view: &View, node: &NodeProto) -> Option<i64> {
    let integer = |name: &str| matches!(view.shapes.get(name).elem_type, Some(t) if t == DataType::Int64 as i32 || t == DataType::Int32 as i32);
    let scalar = |name: &str| view.shapes.info(name).and_then(|i| i.rank()) == Some(0);
    let out = node.output.first()?;
    let reduced_whole = view.is_op(node, "ReduceMax")
        && node.output.len() == 1
        && integer(out)
        && scalar(out)
        && view.const_ints(out).is_none();
    if !reduced_whole {
        return None;
    }
    let sum = view.producer(node.input.first()?)?;
    let keepdims = int_attr(sum, "keepdims").ok()?.unwrap_or(1);
    let no_op_when_empty = int_attr(sum, "noop_with_empty_axes").ok()?.unwrap_or(0);
    if !view.is_op(sum, "ReduceSum") || keepdims != 0 || no_op_when_empty != 0 {
        return None;
    }
    let cast = view.producer(sum.input.first()?)?;
    let from_bool = view.is_op(cast, "Cast")
        && view.shapes.get(cast.input.first()?).elem_type == Some(DataType::Bool as i32);
    if !from_bool {
        return None;
    }
    let dims = view.shapes.info(&cast.input[0])?.dims.clone()?;
    let [axis] = view.axes(sum, "axes", 1)?[..] else {
        return None;
    };
    let axis = usize::try_from(if axis < 0 {
        axis + dims.len() as i64
    } else {
        axis
    })
    .ok()?;
    dims.get(axis)?.as_static().filter(|&n| n >= 1)
}
