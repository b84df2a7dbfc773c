//! Padded values listed as a masked write's updates, in the Where form writes.rs makes of it:
//! `Gather(Concat(X[0:1], U), CumSum(M))` (VITS's spline writing its results back:
//! `outputs[inside] = spline(inputs[inside])`). The indices are a running count of a mask, from
//! 0 up; wherever the original runs they are in range, at most |U|, so they reach X's first
//! element and U's real rows, never past U's count: the padding is not read, and the gather's
//! output (the indices' shape) holds none.

use super::Padded;
use crate::graph::int_attr;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// ONNX's int32 element type.
const INT32: i64 = nonzero_proto::onnx::tensor_proto::DataType::Int32 as i64;

/// How many Casts and Reshapes may sit around the running count.
const MAX_STEPS: usize = 4;

/// True when `node` is `Concat([head, t], axis 0)`, t padded 1-D values and head fixed, read
/// only by 1-D gathers at a running count of a fixed-shape mask.
pub(super) fn read_at_running_count(
    view: &View,
    node: &NodeProto,
    slot: usize,
    t: &Padded,
) -> bool {
    let concat = view.is_op(node, "Concat")
        && node.input.len() == 2
        && node.output.len() == 1
        && slot == 1
        && int_attr(node, "axis").ok().flatten() == Some(0);
    if !concat || t.coords || t.rank != 1 || t.axis != 0 {
        return false;
    }
    if super::static_dims(view.shapes, &node.input[0]).is_none() {
        return false;
    }
    let readers = view.index.readers_of(&node.output[0]);
    !readers.is_empty()
        && readers.iter().all(|&(r, at)| {
            let gather = &view.graph.node[r];
            let one_d = (view.is_op(gather, "Gather") || view.is_op(gather, "GatherElements"))
                && int_attr(gather, "axis").ok().flatten().unwrap_or(0) == 0
                && gather.input.len() == 2;
            at == 0 && one_d && running_count(view, &gather.input[1], 0)
        })
}

/// True when `name` is `CumSum(Cast(b), axis 0)` (through Casts and Reshapes) of a bool `b` of
/// fixed shape: 0 or more, and at most b's count.
fn running_count(view: &View, name: &str, depth: usize) -> bool {
    if depth > MAX_STEPS {
        return false;
    }
    let Some(node) = view.producer(name) else {
        return false;
    };
    // A Cast to a narrower integer could wrap a count to a negative index, which reads from
    // the end: only int32 and int64 keep it.
    let to = int_attr(node, "to").ok().flatten();
    let keeps_count = to.is_some_and(|t| [INT32, super::INT64 as i64].contains(&t));
    if (view.is_op(node, "Cast") && keeps_count) || view.is_op(node, "Reshape") {
        return running_count(view, &node.input[0], depth + 1);
    }
    if !view.is_op(node, "CumSum") || node.input.len() != 2 {
        return false;
    }
    let forward = int_attr(node, "exclusive").ok().flatten().unwrap_or(0) == 0
        && int_attr(node, "reverse").ok().flatten().unwrap_or(0) == 0;
    let axis_zero = view.const_ints(&node.input[1]).is_some_and(|a| a == [0]);
    forward && axis_zero && ones(view, &node.input[0], 0)
}

/// True when `name` is a Cast of a bool of fixed shape (through Reshapes): each element 0 or 1.
fn ones(view: &View, name: &str, depth: usize) -> bool {
    if depth > MAX_STEPS {
        return false;
    }
    let Some(node) = view.producer(name) else {
        return false;
    };
    let bool_input = |n: &str| {
        view.shapes.get(n).elem_type == Some(super::BOOL)
            && super::static_dims(view.shapes, n).is_some()
    };
    if view.is_op(node, "Cast") {
        return bool_input(&node.input[0]);
    }
    view.is_op(node, "Reshape") && ones(view, &node.input[0], depth + 1)
}
