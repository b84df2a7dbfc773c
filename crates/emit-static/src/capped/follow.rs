//! Where the frames of a capped Range reach ([`follow`]): each tensor computed from them is
//! padded along one axis, and its padding is never read into a real position by the ops
//! allowed here. Elementwise work, shape moves that keep the axis, MatMul with it as rows, Conv
//! and ConvTranspose along it (their input's padding masked to zero first, [`Flow::masked`]),
//! and reads of its size that only size tensors padded alike (the capacity standing for the
//! count). Anything else refuses, naming the node.

use super::known::{axis_in, ints, other_sizes};
use super::length::{Step, Steps};
use super::ops::{broadcast, conv_step, expanded, matmul, reshape};
use super::shape_reads::{constant_is, shape_step};
use crate::graph::{attr, describe, int_attr, ints_attr};
use crate::padding::{BINARY, UNARY};
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;
use std::collections::{HashMap, HashSet};

pub use super::reach::{Fill, Flow, Masked, Output, Reach};

/// Ops of one input whose output element reads only the same input element (and random
/// generators of its shape).
pub(super) fn elementwise_unary(op: &str) -> bool {
    UNARY.contains(&op)
        || matches!(
            op,
            "Gelu" | "Mish" | "HardSwish" | "Softsign" | "RandomNormalLike" | "RandomUniformLike"
        )
}

/// Follows `start`: the output of a capped Range (a rank-1 tensor padded along axis 0), or,
/// with `is_length`, the length itself (a scalar read only as a size).
pub fn follow(view: &View, start: &str, is_length: bool) -> Result<Flow, String> {
    let mut reach: HashMap<String, Reach> = HashMap::new();
    let steps = Steps::default();
    let first = if is_length {
        Reach::Length { steps }
    } else {
        Reach::Frames {
            axis: 0,
            rank: 1,
            steps,
        }
    };
    reach.insert(start.to_string(), first);
    let mut flow = Flow::default();
    let mut read_in_bodies = HashSet::new();
    for node in &view.graph.node {
        crate::graph::names_read_in_bodies(node, &mut read_in_bodies);
        let reads: Vec<Option<&Reach>> = node.input.iter().map(|i| reach.get(i)).collect();
        if reads.iter().all(Option::is_none) {
            continue;
        }
        if node.output.is_empty() {
            return Err(format!(
                "{} reads the frames and writes nothing",
                describe(node)
            ));
        }
        let outputs = step(view, node, &reads, &mut flow)
            .or_else(unknown)
            .map_err(|why| format!("{} {why}", describe(node)))?;
        for (name, r) in node.output.iter().zip(outputs) {
            if let Some(r) = r {
                // Each padded tensor's whole length along its axis (a joined one's tail too).
                let whole = match &r {
                    Reach::Frames { axis, steps, .. } => Some((*axis, steps.clone())),
                    Reach::Joined {
                        axis, steps, tail, ..
                    } => {
                        let step = Step::Affine {
                            scale: 1,
                            offset: *tail,
                        };
                        Some((
                            *axis,
                            steps.then(step).ok_or_else(|| {
                                format!("{} joins an axis too long", describe(node))
                            })?,
                        ))
                    }
                    _ => None,
                };
                if let Some((axis, steps)) = whole {
                    flow.padded
                        .push((name.clone(), other_sizes(view, name, axis), axis, steps));
                }
                reach.insert(name.clone(), r);
            }
        }
    }
    if let Some(name) = reach.keys().find(|n| read_in_bodies.contains(*n)) {
        return Err(format!(
            "{name} is read inside a subgraph (not padding-safe)"
        ));
    }
    for name in &view.index.graph_outputs {
        match reach.get(name) {
            Some(Reach::Frames { axis, rank, steps }) => flow.outputs.push(Output {
                name: name.clone(),
                axis: *axis,
                rank: *rank,
                steps: steps.clone(),
            }),
            Some(Reach::Exact { .. }) | None => {}
            Some(Reach::Joined { .. }) => {
                return Err(format!(
                    "the graph output '{name}' holds frames joined with other positions, their padding between them (not padding-safe)"
                ))
            }
            Some(_) => {
                let by = view
                    .producer(name)
                    .map_or(String::new(), |n| format!(", written by {},", describe(n)));
                return Err(format!(
                    "the graph output '{name}'{by} holds the padded length, which stands for the count only inside the graph"
                ));
            }
        }
    }
    flow.outputs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(flow)
}

pub(super) fn frames(r: Option<&Reach>) -> Option<(usize, usize, &Steps)> {
    match r {
        Some(Reach::Frames { axis, rank, steps }) => Some((*axis, *rank, steps)),
        _ => None,
    }
}

/// What `node` makes of the padded tensors it reads (`reads`, per input slot): one entry per
/// output, `None` for an output that holds no padding. `Err` says why it is not safe.
fn step(
    view: &View,
    node: &NodeProto,
    reads: &[Option<&Reach>],
    flow: &mut Flow,
) -> Result<Vec<Option<Reach>>, String> {
    let op = node.op_type.as_deref().unwrap_or("");
    if !view.is_op(node, op) {
        return refuse("not an ONNX op this rewriter knows");
    }
    let only_first = reads.iter().skip(1).all(Option::is_none);
    let out = |r: Reach| Ok(vec![Some(r)]);
    let shape_read = reads
        .iter()
        .any(|r| matches!(r, Some(Reach::ShapeOf { .. } | Reach::Length { .. })));
    if shape_read {
        if let Some(r) = shape_step(view, node, op, reads)? {
            return Ok(vec![r]);
        }
    }
    // `arange(length)`: frames padded alike (their padding holds the positions past the count).
    if let ("Range", [None, Some(Reach::Length { steps }), None]) = (op, reads) {
        if constant_is(view, arg(node, 0)?, 0) && constant_is(view, arg(node, 2)?, 1) {
            return out(Reach::Frames {
                axis: 0,
                rank: 1,
                steps: steps.clone(),
            });
        }
    }
    let linear = |r: &Option<&Reach>| {
        matches!(
            r,
            Some(Reach::Merged { .. } | Reach::Strided { .. } | Reach::Linear { .. })
        )
    };
    if reads.iter().any(linear) {
        return super::linear::step(view, node, op, reads, flow).or_else(unknown);
    }
    if reads
        .iter()
        .any(|r| matches!(r, Some(Reach::Joined { .. })))
    {
        return super::joined::step(view, node, op, reads, flow).or_else(unknown);
    }
    // A value the length does not change: whatever reads it computes what the original does.
    if reads
        .iter()
        .all(|r| matches!(r, None | Some(Reach::Exact { .. })))
    {
        return Ok(node.output.iter().map(|_| None).collect());
    }
    // The capacity standing for the count: it may only size tensors padded alike.
    let sized_by = reads.iter().enumerate().find_map(|(slot, r)| match r {
        Some(Reach::ShapeOf { entry, steps }) if slot > 0 => Some((*entry, steps.clone())),
        _ => None,
    });
    if let Some((entry, steps)) = sized_by {
        return match (op, reads.first().copied().flatten()) {
            ("Reshape", Some(Reach::Frames { .. })) => reshape(view, node, reads, Some(entry)),
            ("Expand", None) => expanded(view, node, entry, steps),
            _ => refuse("the padded length sizes a tensor that is not padded alike"),
        }
        .or_else(unknown);
    }
    if reads
        .iter()
        .any(|r| matches!(r, Some(Reach::ShapeOf { .. } | Reach::Length { .. })))
    {
        return refuse("the padded length is read as a value");
    }
    let (axis, r, steps) = frames(reads.iter().copied().flatten().next()).expect("a padded input");
    let steps = steps.clone();
    let same = |axis| {
        out(Reach::Frames {
            axis,
            rank: r,
            steps: steps.clone(),
        })
    };
    match op {
        _ if elementwise_unary(op) && only_first && node.output.len() == 1 => same(axis),
        "Clip" | "Dropout" if only_first => Ok(std::iter::once(Some(Reach::Frames {
            axis,
            rank: r,
            steps: steps.clone(),
        }))
        .chain(node.output.iter().skip(1).map(|_| None))
        .collect()),
        _ if BINARY.contains(&op)
            || matches!(op, "Where" | "Sum" | "Mean" | "Max" | "Min" | "PRelu") =>
        {
            broadcast(view, node, reads)
        }
        "Unsqueeze" if only_first => {
            let axes = view.axes(node, "axes", 1).ok_or("")?;
            let out_rank = r + axes.len();
            let inserted: Vec<usize> = axes
                .iter()
                .map(|&a| axis_in(a, out_rank))
                .collect::<Option<_>>()
                .ok_or("")?;
            let kept = (0..out_rank)
                .filter(|a| !inserted.contains(a))
                .nth(axis)
                .ok_or("")?;
            out(Reach::Frames {
                axis: kept,
                rank: out_rank,
                steps,
            })
        }
        "Squeeze" if only_first => {
            let axes = view.axes(node, "axes", 1).ok_or("")?;
            let removed: Vec<usize> = axes
                .iter()
                .map(|&a| axis_in(a, r))
                .collect::<Option<_>>()
                .ok_or("")?;
            if removed.contains(&axis) {
                return refuse("Squeeze of the padded axis");
            }
            let moved = axis - removed.iter().filter(|&&a| a < axis).count();
            out(Reach::Frames {
                axis: moved,
                rank: r - removed.len(),
                steps,
            })
        }
        "Transpose" if only_first => {
            let perm = ints_attr(node, "perm")
                .map_err(|_| "")?
                .unwrap_or_else(|| (0..r as i64).rev().collect());
            let to = perm.iter().position(|&p| p == axis as i64).ok_or("")?;
            same(to)
        }
        "Reshape" if only_first => reshape(view, node, reads, None),
        "Flatten" if only_first => super::linear::flatten(view, node, (axis, r, &steps)),
        "Slice" if only_first => {
            let starts = ints(view, arg(node, 1)?).ok_or("")?;
            let axes = match node.input.get(3).filter(|n| !n.is_empty()) {
                Some(a) => ints(view, a).ok_or("")?,
                None => (0..starts.len() as i64).collect(),
            };
            let cut: Vec<usize> = axes
                .iter()
                .map(|&a| axis_in(a, r))
                .collect::<Option<_>>()
                .ok_or("")?;
            if cut.contains(&axis) {
                return refuse("a Slice along the padded axis");
            }
            same(axis)
        }
        "Split" if only_first => {
            let along =
                axis_in(int_attr(node, "axis").map_err(|_| "")?.unwrap_or(0), r).ok_or("")?;
            if along == axis {
                return refuse("a Split along the padded axis");
            }
            Ok(every_output(node, axis, r, &steps))
        }
        "Concat" => {
            let along =
                axis_in(int_attr(node, "axis").map_err(|_| "")?.unwrap_or(0), r).ok_or("")?;
            if along == axis {
                return super::joined::concat(view, node, reads, (axis, r, &steps), 0);
            }
            let alike = reads.iter().all(|x| frames(*x) == Some((axis, r, &steps)));
            if !alike {
                return refuse("a Concat of tensors not padded alike");
            }
            same(axis)
        }
        "Pad" if only_first => {
            let mode = attr(node, "mode")
                .and_then(|a| a.s.as_deref())
                .unwrap_or(b"constant");
            let pads = ints(view, node.input.get(1).ok_or("")?).ok_or("")?;
            let no_axes = node.input.get(3).is_none_or(|a| a.is_empty());
            if mode != b"constant"
                || !no_axes
                || pads.len() != 2 * r
                || pads[axis] != 0
                || pads[axis + r] != 0
            {
                return refuse("a Pad along the padded axis");
            }
            same(axis)
        }
        "MatMul" => matmul(view, node, reads, flow),
        "Einsum" if node.output.len() == 1 => super::einsum::einsum(node, reads, flow),
        "Conv" | "ConvTranspose" if only_first && axis == 0 => same(0),
        "Conv" | "ConvTranspose" if only_first && axis >= 2 => {
            let next = conv_step(view, node, op, axis - 2).ok_or("")?;
            flow.masked
                .push(Masked::of(node, 0, (axis, r, &steps), Fill::Zero));
            out(Reach::Frames {
                axis,
                rank: r,
                steps: steps.then(next).ok_or("")?,
            })
        }
        // A NonZero of the frames reads its padding as false: the coordinates are the
        // original's (every real position keeps its place in row-major order), and hold no
        // padding (their length is the count of the selection, compacted in its turn).
        "NonZero" if node.input.len() == 1 => {
            flow.masked
                .push(Masked::of(node, 0, (axis, r, &steps), Fill::Zero));
            Ok(vec![None])
        }
        "ScatterND" if node.output.len() == 1 => {
            super::writes::scatter_nd(view, node, reads, (axis, r))
        }
        "Softmax" | "LogSoftmax" | "ReduceMax" | "ReduceMin" if node.output.len() == 1 => {
            super::mixing::step(view, node, op, reads, flow, (axis, r, &steps), 0)
        }
        "Shape" if only_first => super::shape_reads::shape(node, r, axis, steps),
        "Expand" if only_first => broadcast(view, node, reads),
        _ => refuse("not an op the padding may pass"),
    }
    .or_else(unknown)
}

/// Each output of `node` padded along `axis` of rank `rank` (a Split's parts, an elementwise
/// op's one).
pub(super) fn every_output(
    node: &NodeProto,
    axis: usize,
    rank: usize,
    steps: &Steps,
) -> Vec<Option<Reach>> {
    let frames = Reach::Frames {
        axis,
        rank,
        steps: steps.clone(),
    };
    node.output.iter().map(|_| Some(frames.clone())).collect()
}

/// Input `slot` of `node`; an empty error (not known) where the node has no such input.
pub(super) fn arg(node: &NodeProto, slot: usize) -> Result<&str, String> {
    node.input
        .get(slot)
        .map(String::as_str)
        .ok_or_else(String::new)
}

pub(super) fn refuse<T>(why: &str) -> Result<T, String> {
    Err(format!(
        "reads the capped length's padding: {why} (not padding-safe)"
    ))
}

/// An empty error: an operand that is not constant or a rank that is not known.
fn unknown<T>(why: String) -> Result<T, String> {
    if why.is_empty() {
        refuse("its operands are not constant, or its ranks not known")
    } else {
        Err(why)
    }
}
