//! Softmax, LogSoftmax, ReduceMax and ReduceMin on capped frames ([`super::follow`]): along
//! another axis they work row by row; along the padded axis they read the padding masked first
//! (the lowest value for a softmax or a max, which adds nothing to the sum of exponentials and
//! never wins; the highest for a min), so every real position is the original's. A max or min
//! over the padded axis has no padding left; one over an empty frame axis is the original's
//! over nothing (ONNX Runtime 1.31.1's -inf or +inf).

use super::follow::{refuse, Fill, Flow, Masked, Reach};
use super::known::axis_in;
use super::length::Steps;
use crate::graph::int_attr;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// What `node` (one of the four ops, its input padded along `axis` of rank `rank`) makes.
pub(super) fn step(
    view: &View,
    node: &NodeProto,
    op: &str,
    reads: &[Option<&Reach>],
    flow: &mut Flow,
    (axis, rank, steps): (usize, usize, &Steps),
    tail: i64,
) -> Result<Vec<Option<Reach>>, String> {
    if reads.iter().skip(1).any(Option::is_some) {
        return refuse("a reduction whose axes are read from the padded length");
    }
    let opset = view.shapes.opset().unwrap_or(0);
    let (mixes, out_axis) = match op {
        "Softmax" | "LogSoftmax" => {
            // Before opset 13 the input is coerced to 2-D at `axis` (default 1): the op
            // normalises over every axis from it on.
            let default = if opset >= 13 { -1 } else { 1 };
            let along = int_attr(node, "axis").map_err(|_| "")?.unwrap_or(default);
            let along = axis_in(along, rank).ok_or("")?;
            let mixes = if opset >= 13 {
                along == axis
            } else {
                axis >= along
            };
            (mixes, Some(axis))
        }
        _ => {
            // ReduceMax and ReduceMin: the axes as an attribute, or an input from opset 18.
            let keepdims = int_attr(node, "keepdims").map_err(|_| "")?.unwrap_or(1) != 0;
            let no_op = int_attr(node, "noop_with_empty_axes")
                .map_err(|_| "")?
                .unwrap_or(0)
                != 0;
            let given = view.axes(node, "axes", 1).unwrap_or_default();
            if given.is_empty() && no_op {
                return Ok(vec![Some(Reach::padded(axis, rank, steps.clone(), tail))]);
            }
            if given.is_empty() && node.input.get(1).is_some_and(|a| !a.is_empty()) {
                return refuse("a reduction whose axes are not constant");
            }
            let reduced: Vec<usize> = if given.is_empty() {
                (0..rank).collect()
            } else {
                given
                    .iter()
                    .map(|&a| axis_in(a, rank))
                    .collect::<Option<_>>()
                    .ok_or("")?
            };
            let mixes = reduced.contains(&axis);
            let moved = if keepdims {
                axis
            } else {
                axis - reduced.iter().filter(|&&a| a < axis).count()
            };
            (mixes, (!mixes).then_some(moved))
        }
    };
    let out_rank = view
        .shapes
        .info(&node.output[0])
        .and_then(|i| i.rank())
        .ok_or("")?;
    if mixes {
        let fill = if op == "ReduceMin" {
            Fill::Highest
        } else {
            Fill::Lowest
        };
        flow.masked
            .push(Masked::of(node, 0, (axis, rank, steps), fill).with_tail(tail));
    }
    Ok(vec![out_axis.map(|axis| {
        Reach::padded(axis, out_rank, steps.clone(), tail)
    })])
}
