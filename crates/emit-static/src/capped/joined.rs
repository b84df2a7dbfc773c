//! Frames joined with real positions after them ([`Reach::Joined`], [`super::follow`]):
//! Longformer's scores of the global slots (padded to the capacity) concatenated with the
//! window's along the same axis, `cat((global, window), -1)`, softmaxed over both, then cut apart
//! again at the length: `narrow(-1, 0, L)` and `narrow(-1, L, size - L)`. The padding is the
//! middle segment, from the length to the capacity's length; the tail keeps its size. Only the
//! ops here pass a joined axis: elementwise work (operands joined alike), Softmax and the
//! reductions along it (the middle segment masked, [`super::mixing`]), its Shape (the length plus
//! the tail), and the two Slices that cut it apart. Anything else refuses.

use super::follow::{arg, elementwise_unary, frames, refuse, Flow, Reach};
use super::known::{axis_in, ints, size};
use super::length::{Step, Steps};
use super::ops::broadcast;
use crate::graph::int_attr;
use crate::padding::BINARY;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// The padded axis of a joined tensor: its rank, its frames' steps and its tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Axis {
    pub axis: usize,
    pub rank: usize,
    pub steps: Steps,
    pub tail: i64,
}

impl Axis {
    fn of(r: Option<&Reach>) -> Option<Axis> {
        match r {
            Some(Reach::Joined {
                axis,
                rank,
                steps,
                tail,
            }) => Some(Axis {
                axis: *axis,
                rank: *rank,
                steps: steps.clone(),
                tail: *tail,
            }),
            _ => None,
        }
    }

    fn reach(&self, axis: usize, rank: usize) -> Reach {
        Reach::padded(axis, rank, self.steps.clone(), self.tail)
    }

    /// The length of the whole axis: the frames' plus the tail.
    pub fn whole(&self) -> Option<Steps> {
        self.steps.then(Step::Affine {
            scale: 1,
            offset: self.tail,
        })
    }
}

/// `Concat` along the padded axis of `frames` (its first input), every other input of a fixed
/// size there and not padded: the frames joined with those sizes after them.
pub(super) fn concat(
    view: &View,
    node: &NodeProto,
    reads: &[Option<&Reach>],
    (axis, rank, steps): (usize, usize, &Steps),
    tail: i64,
) -> Result<Vec<Option<Reach>>, String> {
    if frames(reads[0]).is_none() && Axis::of(reads[0]).is_none() {
        return refuse("a Concat along the padded axis with the frames not first");
    }
    let mut tail = tail;
    for (name, r) in node.input.iter().zip(reads).skip(1) {
        if r.is_some() {
            return refuse("a Concat along the padded axis of two padded tensors");
        }
        let n = size(view, name, axis).ok_or("")?;
        tail = tail.checked_add(n).ok_or("")?;
    }
    Ok(vec![Some(Reach::padded(axis, rank, steps.clone(), tail))])
}

/// What `node` makes of a joined tensor it reads (every padded operand joined alike).
pub(super) fn step(
    view: &View,
    node: &NodeProto,
    op: &str,
    reads: &[Option<&Reach>],
    flow: &mut Flow,
) -> Result<Vec<Option<Reach>>, String> {
    let joined = reads.iter().find_map(|r| Axis::of(*r)).ok_or("")?;
    let only_first = reads.iter().skip(1).all(Option::is_none);
    let same = || Ok(vec![Some(joined.reach(joined.axis, joined.rank))]);
    match op {
        _ if elementwise_unary(op) && only_first && node.output.len() == 1 => same(),
        _ if BINARY.contains(&op) || matches!(op, "Where" | "Sum" | "Mean" | "Max" | "Min") => {
            // As frames of the same steps (broadcast's checks), once every padded operand is
            // joined alike.
            if reads.iter().flatten().any(|r| {
                Axis::of(Some(r)).is_none_or(|a| a.steps != joined.steps || a.tail != joined.tail)
            }) {
                return refuse("operands of a joined axis padded differently");
            }
            let as_frames: Vec<Option<Reach>> = reads
                .iter()
                .map(|r| {
                    Axis::of(*r).map(|a| Reach::Frames {
                        axis: a.axis,
                        rank: a.rank,
                        steps: a.steps,
                    })
                })
                .collect();
            let as_frames: Vec<Option<&Reach>> = as_frames.iter().map(Option::as_ref).collect();
            let out = broadcast(view, node, &as_frames)?;
            Ok(out
                .into_iter()
                .map(|r| match r {
                    Some(Reach::Frames { axis, rank, .. }) => Some(joined.reach(axis, rank)),
                    other => other,
                })
                .collect())
        }
        "Softmax" | "LogSoftmax" | "ReduceMax" | "ReduceMin"
            if only_first && node.output.len() == 1 =>
        {
            super::mixing::step(
                view,
                node,
                op,
                reads,
                flow,
                (joined.axis, joined.rank, &joined.steps),
                joined.tail,
            )
        }
        "Concat" if reads[0].is_some() => {
            let along = int_attr(node, "axis").map_err(|_| "")?.unwrap_or(0);
            if axis_in(along, joined.rank) != Some(joined.axis) {
                return refuse("a Concat of a joined axis along another");
            }
            concat(
                view,
                node,
                reads,
                (joined.axis, joined.rank, &joined.steps),
                joined.tail,
            )
        }
        "Shape" if only_first => {
            let whole = joined.whole().ok_or("")?;
            super::shape_reads::shape(node, joined.rank, joined.axis, whole)
        }
        "Slice" if node.input.len() <= 5 && reads[0].is_some() => slice(view, node, reads, &joined),
        _ => refuse("not an op a joined axis may pass"),
    }
}

/// One end of a Slice of the joined axis.
enum End {
    Constant(i64),
    /// The length after these steps (a one-element shape vector of it).
    Length(Steps),
}

/// A Slice of a joined tensor. Along other axes (constant bounds) it stays joined; along the
/// joined axis it cuts out the frames, `[0, L)`, or the tail, `[L, L + tail)` or `[L, end)`.
fn slice(
    view: &View,
    node: &NodeProto,
    reads: &[Option<&Reach>],
    joined: &Axis,
) -> Result<Vec<Option<Reach>>, String> {
    if reads.iter().skip(3).any(Option::is_some) {
        return refuse("a Slice whose axes or steps are read from the padded length");
    }
    let unit_steps = node
        .input
        .get(4)
        .filter(|s| !s.is_empty())
        .is_none_or(|s| ints(view, s).is_some_and(|v| v.iter().all(|&x| x == 1)));
    let starts_len = size(view, arg(node, 1)?, 0).ok_or("")?;
    let axes = match node.input.get(3).filter(|a| !a.is_empty()) {
        Some(a) => ints(view, a).ok_or("")?,
        None => (0..starts_len).collect(),
    };
    let axes: Vec<usize> = axes
        .iter()
        .map(|&a| axis_in(a, joined.rank))
        .collect::<Option<_>>()
        .ok_or("")?;
    if !unit_steps {
        return refuse("a Slice of a joined tensor with a step");
    }
    if !axes.contains(&joined.axis) {
        if reads.iter().skip(1).take(2).any(Option::is_some) {
            return refuse("a Slice of another axis at bounds read from the padded length");
        }
        return Ok(vec![Some(joined.reach(joined.axis, joined.rank))]);
    }
    if axes.len() != 1 {
        return refuse("a Slice of the joined axis and another at once");
    }
    let end = |slot: usize| -> Result<End, String> {
        let name = arg(node, slot)?;
        match reads[slot] {
            None => match ints(view, name).as_deref() {
                Some(&[v]) => Ok(End::Constant(v)),
                _ => Err(String::new()),
            },
            Some(Reach::ShapeOf { entry: 0, steps }) if size(view, name, 0) == Some(1) => {
                Ok(End::Length(steps.clone()))
            }
            Some(_) => refuse("a Slice of the joined axis at a bound that is not a length"),
        }
    };
    let whole = joined.whole().ok_or("")?;
    match (end(1)?, end(2)?) {
        // The frames alone: padded as they were before the join.
        (End::Constant(0), End::Length(e)) if e == joined.steps => Ok(vec![Some(Reach::Frames {
            axis: joined.axis,
            rank: joined.rank,
            steps: joined.steps.clone(),
        })]),
        // The tail alone: the same positions in the original and at the capacity.
        (End::Length(s), End::Length(e)) if s == joined.steps && e == whole => Ok(vec![None]),
        (End::Length(s), End::Constant(e)) if s == joined.steps && e >= i64::MAX / 2 => {
            Ok(vec![None])
        }
        _ => refuse("a Slice of the joined axis other than its frames or its tail"),
    }
}
