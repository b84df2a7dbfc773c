//! Writing a capped length ([`super::rewrite`]): the capacity in its place, the count, the
//! masks before each reader that mixes along the padded axis, and the padded outputs with their
//! counts.

use super::follow::{Fill, Flow};
use super::length::Steps;
use super::Source;
use crate::emit::Emitter;
use crate::graph::describe;
use crate::scope::Scope;
use crate::StaticError;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::GraphProto;
use std::collections::HashMap;

/// Writes the capped Range at node `at`: its limit the capacity, the count, the masks before
/// each Conv along the frames, and the padded outputs with their counts.
#[allow(clippy::too_many_arguments)]
pub(super) fn emit(
    graph: &mut GraphProto,
    scope: &Scope,
    at: usize,
    source: Source,
    length: &str,
    flow: &Flow,
    capacity: i64,
    cuts: &[i64],
    limit_type: i32,
) -> Result<String, StaticError> {
    let range = graph.node[at].clone();
    let mut e = Emitter::new(graph, scope, &describe(&range));
    let cap = if limit_type == DataType::Int32 as i32 {
        e.int32s(&[capacity as i32], &[])
    } else {
        e.scalar(capacity)
    };
    let limit = e.cast(length, DataType::Int64);
    let count = match source {
        // Never below 0 nor past the bound: the count itself.
        Source::Bounded(_) => limit,
        Source::Range => clamp(&mut e, &limit, capacity),
    };
    // One count per length the masks and outputs read.
    let mut counts: HashMap<Steps, String> = HashMap::new();
    for steps in flow
        .masked
        .iter()
        .map(|m| &m.steps)
        .chain(flow.outputs.iter().map(|o| &o.steps))
    {
        if !counts.contains_key(steps) {
            let c = steps.emit(&mut e, &count);
            counts.insert(steps.clone(), c);
        }
    }
    match source {
        Source::Range => graph.node[at].input[1] = cap,
        // Every reader of a bounded length reads it as a size (the flow proved it): the
        // capacity stands for it there.
        Source::Bounded(_) => {
            for input in graph.node.iter_mut().flat_map(|n| n.input.iter_mut()) {
                if input == length {
                    *input = cap.clone();
                }
            }
        }
    }
    e.insert(graph, at + 1);
    let (_, shapes) = scope.shapes_of(graph);
    // Each masked reader's input masked once per fill, before its first reader.
    let mut masked: HashMap<(String, Fill), String> = HashMap::new();
    for m in &flow.masked {
        let Some(conv) = graph
            .node
            .iter()
            .position(|n| n.output.first() == Some(&m.output))
        else {
            continue;
        };
        let source = graph.node[conv].input[m.slot].clone();
        let name = match masked.get(&(source.clone(), m.fill)) {
            Some(name) => name.clone(),
            None => {
                let elem_type = shapes
                    .get(&source)
                    .elem_type
                    .unwrap_or(DataType::Float as i32);
                let length = m.steps.eval(capacity).expect("evaluated for the capacity");
                let mut e = Emitter::new(
                    graph,
                    scope,
                    &format!("{}/frames", describe(&graph.node[conv])),
                );
                let count = &counts[&m.steps];
                let frames = Frames {
                    length,
                    tail: m.tail,
                    axis: m.axis,
                    rank: m.rank,
                };
                // A bool mask keeps its elements before the padding: And, Or (no Where, which
                // ONNX Runtime has no bool kernel for and QNN's HTP no uint8 one).
                let name = if elem_type == DataType::Bool as i32 {
                    match m.fill {
                        Fill::Zero | Fill::Lowest => {
                            let kept = kept_mask(&mut e, frames, count);
                            e.binary("And", &source, &kept)
                        }
                        Fill::Highest => {
                            let padding = padding_mask(&mut e, frames, count);
                            e.binary("Or", &source, &padding)
                        }
                    }
                } else {
                    let padding = padding_mask(&mut e, frames, count);
                    let fill = match m.fill {
                        Fill::Zero => e.zero(elem_type),
                        Fill::Lowest => e.extreme(elem_type, true),
                        Fill::Highest => e.extreme(elem_type, false),
                    };
                    let fill = fill.ok_or_else(|| {
                        StaticError::Refused(format!(
                            "the frames of {} have a type with no {:?} value",
                            describe(&graph.node[conv]),
                            m.fill
                        ))
                    })?;
                    e.select(&padding, &fill, &source, elem_type)
                };
                e.insert(graph, conv);
                masked.insert((source.clone(), m.fill), name.clone());
                name
            }
        };
        let conv = graph
            .node
            .iter()
            .position(|n| n.output.first() == Some(&m.output))
            .expect("found above");
        graph.node[conv].input[m.slot] = name;
    }
    let mut padded = vec![];
    for (out, &length) in flow.outputs.iter().zip(cuts) {
        let elem_type = shapes
            .get(&out.name)
            .elem_type
            .unwrap_or(DataType::Float as i32);
        let mut e = Emitter::new(graph, scope, &format!("{}/padded", out.name));
        let unpadded = e.fresh("unpadded");
        for node in graph.node.iter_mut() {
            for name in node.output.iter_mut().chain(node.input.iter_mut()) {
                if *name == out.name {
                    *name = unpadded.clone();
                }
            }
        }
        let full = out
            .steps
            .eval(capacity)
            .expect("evaluated for the capacity");
        let (rows, count) = if length < full {
            let (s, l, a) = (e.ints(&[0]), e.ints(&[length]), e.ints(&[out.axis as i64]));
            let cut = e.op("Slice", &[&unpadded, &s, &l, &a], vec![]);
            let n = e.scalar(length);
            (cut, e.binary("Min", &counts[&out.steps], &n))
        } else {
            (unpadded, counts[&out.steps].clone())
        };
        let frames = Frames {
            length,
            tail: 0,
            axis: out.axis,
            rank: out.rank,
        };
        let padding = padding_mask(&mut e, frames, &count);
        let fill = if elem_type == DataType::Int64 as i32 {
            Some(e.scalar(-1))
        } else {
            e.zero(elem_type)
        };
        let fill = fill.ok_or_else(|| {
            StaticError::Refused(format!("the output '{}' has a type with no fill", out.name))
        })?;
        e.select(&padding, &fill, &rows, elem_type);
        e.finish_as(&out.name);
        let end = graph.node.len();
        e.insert(graph, end);
        crate::outputs::add_count_output(graph, &out.name, out.axis, &count, length)?;
        padded.push(format!(
            "'{}' padded to {length} with '{}_count'",
            out.name, out.name
        ));
    }
    // Conv and ConvTranspose counted together as "Conv" (VITS's report says "40 Convs").
    let mut kinds: Vec<(&str, usize)> = vec![];
    for m in &flow.masked {
        let kind = if m.op == "ConvTranspose" {
            "Conv"
        } else {
            m.op.as_str()
        };
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    let masked: Vec<String> = kinds
        .iter()
        .map(|&(kind, n)| nonzero_rewrite_graph::text::plural(n, kind))
        .collect();
    let readers = if masked.is_empty() {
        "0 Convs".to_string()
    } else {
        masked.join(" and ")
    };
    let one = flow.masked.len() == 1;
    let source = match source {
        Source::Range => format!("runs to the capacity {capacity}"),
        Source::Bounded(_) => format!(
            "the most selected elements of any row of a mask, runs to that mask's size along the row, {capacity},"
        ),
    };
    Ok(format!(
        "{}: its length, computed from tensor values, {source} and goes along as a count; {readers} along it read{} the padding masked to {}{}",
        describe(&range),
        if one { "s" } else { "" },
        if flow.masked.iter().all(|m| m.fill == Fill::Zero) { "zero" } else { "their identity (zero, false, or the lowest or highest value)" },
        if padded.is_empty() { String::new() } else { format!("; outputs {}", padded.join(", ")) }
    ))
}

/// `limit` clamped to `[0, capacity]`: Max and Min where they take int64 (opset 12), else
/// Where of a comparison.
fn clamp(e: &mut Emitter, limit: &str, capacity: i64) -> String {
    let (zero, cap) = (e.scalar(0), e.scalar(capacity));
    if e.opset() >= 12 {
        let at_least_zero = e.binary("Max", limit, &zero);
        return e.binary("Min", &at_least_zero, &cap);
    }
    let below = e.binary("Less", limit, &zero);
    let at_least_zero = e.where_(&below, &zero, limit);
    let above = e.binary("Greater", &at_least_zero, &cap);
    e.where_(&above, &cap, &at_least_zero)
}

/// Frames of `length` along `axis` of a rank-`rank` tensor, then `tail` fixed positions (a
/// joined axis): the padding is `[count, length)`.
#[derive(Clone, Copy)]
struct Frames {
    length: i64,
    tail: i64,
    axis: usize,
    rank: usize,
}

/// bool, the complement of [`padding_mask`]: true before `count` and in the tail.
fn kept_mask(e: &mut Emitter, frames: Frames, count: &str) -> String {
    if frames.tail == 0 {
        let positions = positions(e, frames);
        return e.binary("Less", &positions, count);
    }
    let padding = padding_mask(e, frames, count);
    e.op("Not", &[&padding], vec![])
}

/// 0, 1, ... along the frames and the tail, sized to broadcast against the tensor.
fn positions(e: &mut Emitter, frames: Frames) -> String {
    let whole = frames.length + frames.tail;
    let mut dims = vec![whole];
    dims.extend(std::iter::repeat_n(
        1,
        frames.rank.saturating_sub(frames.axis + 1),
    ));
    // A Range, not a constant of `whole` positions: a capacity may be long.
    let positions = e.range(whole);
    e.reshape(&positions, &dims)
}

/// bool, true in the padding of `frames`, sized to broadcast against the tensor.
fn padding_mask(e: &mut Emitter, frames: Frames, count: &str) -> String {
    let positions = positions(e, frames);
    let valid = e.binary("Less", &positions, count);
    let past = e.op("Not", &[&valid], vec![]);
    if frames.tail == 0 {
        return past;
    }
    let end = e.scalar(frames.length);
    let before_tail = e.binary("Less", &positions, &end);
    e.binary("And", &past, &before_tail)
}
