//! Ranges whose length is a tensor value, run at a capacity: VITS's frames,
//! `arange(max(sum of predicted durations))`, which no shape decides. The Range runs to the
//! capacity C instead; its count (the original length, at most C) goes along as an int64
//! scalar. What the frames reach ([`follow`]) only works on them position by position, except
//! Conv and ConvTranspose along them: their input's padding is masked to zero first, which is
//! the original's own zero padding at its end, so each real position computes exactly as in the
//! original. The count follows each of those by ONNX's output-size rule ([`length`]).
//!
//! A graph output reached is padded to its capacity, written as docs/static.md's fill past its
//! count, and gains `<name>_count`. The capacity is the output's (`--capacity NAME=N`, else
//! `--capacity N`), in the output's own units: C is the least Range length whose output is at
//! least that long, and the output is cut to it. Past the capacity the count saturates and the
//! output is the original's for the frames kept (computed as if the utterance ended there).

mod follow;
mod known;
mod length;
mod ops;
mod shape_reads;

use super::emit::Emitter;
use super::scope::Scope;
use super::StaticError;
use crate::graph::describe;
use crate::trace::View;
use follow::Flow;
use length::Steps;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_analysis::dims::MAX_PADDED_ELEMENTS;
use nonzero_rewrite_analysis::findings::Reason;
use std::collections::{BTreeMap, HashMap};

/// The longest Range the capacity may ask for.
const MAX_LENGTH: i64 = 1 << 31;

/// The capacities given: `--capacity N` and `--capacity NAME=N`.
pub struct Capacities<'a> {
    pub all: Option<i64>,
    pub named: &'a BTreeMap<String, i64>,
}

impl super::StaticPass<'_> {
    /// The main graph's Ranges of a value length run to a capacity (this module); then the shape
    /// reads they fixed are folded (no selection is padded yet, so each Shape read is one the
    /// capped frames' flow proved the capacity may stand for).
    pub(super) fn capped_lengths(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
    ) -> Result<(), StaticError> {
        let capacities = Capacities {
            all: self.capacity,
            named: self.output_capacities,
        };
        let Capped { lines, padded } = rewrite(graph, scope, &capacities, &mut self.known)?;
        for (name, axis) in padded {
            let count = format!("{name}_count");
            self.summary.count_outputs.push((name, count, axis));
        }
        if lines.is_empty() {
            return Ok(());
        }
        for line in lines {
            self.summary
                .rewrites
                .push(("capped-length".to_string(), scope.line(line)));
        }
        self.fold(graph, scope);
        Ok(())
    }
}

/// What [`rewrite`] did: a line per Range capped, and each graph output padded (with its axis).
#[derive(Default)]
pub struct Capped {
    pub lines: Vec<String>,
    pub padded: Vec<(String, usize)>,
}

/// Caps each value-length Range of the main graph it can. Those it cannot are recorded in
/// `known` (by the Range's output) with the reason.
pub fn rewrite(
    graph: &mut GraphProto,
    scope: &Scope,
    capacities: &Capacities,
    known: &mut HashMap<String, (Reason, String)>,
) -> Result<Capped, StaticError> {
    let mut done = Capped::default();
    let mut tried = vec![];
    loop {
        let (index, shapes) = scope.shapes_of(graph);
        let view = View {
            graph,
            index: &index,
            shapes: &shapes,
        };
        // Each Range once, by its output (a refused one stays, and emits shift the others).
        let Some(at) = graph
            .node
            .iter()
            .position(|n| value_length(&view, n) && !tried.contains(&n.output[0]))
        else {
            return Ok(done);
        };
        let range = &graph.node[at];
        let out = range.output[0].clone();
        tried.push(out.clone());
        let planned = follow::follow(&view, &out).and_then(|flow| {
            let (capacity, cuts) = capacity(&flow, capacities)?;
            Ok((flow, capacity, cuts))
        });
        // Every length the masks read is a length at the capacity (a Conv of a longer kernel
        // than its input would make it negative).
        let planned = planned.and_then(|(flow, capacity, cuts)| {
            let limit_type = shapes.get(&range.input[1]).elem_type;
            if limit_type == Some(DataType::Int32 as i32) && i32::try_from(capacity).is_err() {
                return Err(format!(
                    "its int32 limit cannot hold the capacity's Range length {capacity}"
                ));
            }
            // Each padded tensor is allocated whole on every run, as a selection's padding is.
            for (name, sizes, axis, steps) in &flow.padded {
                let whole = sizes.as_ref().and_then(|sizes| {
                    let length = steps.eval(capacity)?;
                    sizes.iter().enumerate().try_fold(1i64, |n, (a, &d)| {
                        n.checked_mul(if a == *axis { length } else { d })
                    })
                });
                if whole.is_none_or(|n| n > MAX_PADDED_ELEMENTS) {
                    return Err(format!(
                        "at the capacity's Range length {capacity}, {name} would hold more than 2^31 elements (or a size not fixed): lower the capacity"
                    ));
                }
            }
            match flow.masked.iter().find(|m| m.steps.eval(capacity).is_none_or(|l| l < 1)) {
                Some(m) => Err(format!(
                    "at the capacity's Range length {capacity}, the input of the node writing {} would be empty",
                    m.output
                )),
                None => Ok((flow, capacity, cuts)),
            }
        });
        match planned {
            Ok((flow, capacity, cuts)) => {
                let limit_type = shapes.get(&range.input[1]).elem_type.unwrap_or(0);
                let line = emit(graph, scope, at, &flow, capacity, &cuts, limit_type)?;
                done.lines.push(line);
                done.padded
                    .extend(flow.outputs.iter().map(|o| (o.name.clone(), o.axis)));
            }
            Err(why) => {
                known.insert(out, (Reason::ValueDependentShape, why));
            }
        }
    }
}

/// `Range(0, n, 1)` with an integer `n` computed from values: its length is not fixed.
fn value_length(view: &View, node: &nonzero_proto::onnx::NodeProto) -> bool {
    let integer = matches!(
        view.shapes.get(node.input.get(1).map_or("", String::as_str)).elem_type,
        Some(t) if t == DataType::Int64 as i32 || t == DataType::Int32 as i32
    );
    view.is_op(node, "Range")
        && node.input.len() == 3
        && node.output.len() == 1
        && integer
        && view.const_ints(&node.input[0]).as_deref() == Some(&[0])
        && view.const_ints(&node.input[2]).as_deref() == Some(&[1])
        && view.const_ints(&node.input[1]).is_none()
        && crate::static_dims(view.shapes, &node.output[0]).is_none()
}

/// The Range's capacity C, and each output's own (its length at C, or less where its capacity
/// cuts it). `Err` names what is missing.
fn capacity(flow: &Flow, given: &Capacities) -> Result<(i64, Vec<i64>), String> {
    if flow.outputs.is_empty() {
        return given.all.map(|c| (c, vec![])).ok_or_else(|| {
            "its length is computed from tensor values and no capacity bounds it: give --capacity N".to_string()
        });
    }
    let mut range = 1;
    let mut wanted = vec![];
    for out in &flow.outputs {
        let Some(n) = given.named.get(&out.name).copied().or(given.all) else {
            return Err(format!(
                "its length is computed from tensor values (the sum of predicted durations, say) and sets the length of the output '{}': give --capacity {}=N",
                out.name, out.name
            ));
        };
        let least = out.steps.least_for(n, MAX_LENGTH).ok_or_else(|| {
            format!(
                "no Range length up to {MAX_LENGTH} gives the output '{}' a length of {n}",
                out.name
            )
        })?;
        range = range.max(least);
        wanted.push(n);
    }
    let lengths = flow.outputs.iter().zip(wanted).map(|(o, n)| {
        o.steps
            .eval(range)
            .map(|len| len.min(n))
            .ok_or("an output's length overflows".to_string())
    });
    Ok((range, lengths.collect::<Result<_, _>>()?))
}

/// Writes the capped Range at node `at`: its limit the capacity, the count, the masks before
/// each Conv along the frames, and the padded outputs with their counts.
fn emit(
    graph: &mut GraphProto,
    scope: &Scope,
    at: usize,
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
    let limit = e.cast(&range.input[1], DataType::Int64);
    let zero = e.scalar(0);
    let at_least_zero = e.binary("Max", &limit, &zero);
    let cap64 = e.scalar(capacity);
    let count = e.binary("Min", &at_least_zero, &cap64);
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
    graph.node[at].input[1] = cap;
    e.insert(graph, at + 1);
    let (_, shapes) = scope.shapes_of(graph);
    // Each Conv's input masked once, before its first reader.
    let mut masked: HashMap<String, String> = HashMap::new();
    for m in &flow.masked {
        let Some(conv) = graph
            .node
            .iter()
            .position(|n| n.output.first() == Some(&m.output))
        else {
            continue;
        };
        let source = graph.node[conv].input[0].clone();
        let name = match masked.get(&source) {
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
                let padding = padding_mask(&mut e, length, m.axis, m.rank, &counts[&m.steps]);
                let zero = e.zero(elem_type).ok_or_else(|| {
                    StaticError::Refused(format!(
                        "the frames of {} have a type with no zero",
                        describe(&graph.node[conv])
                    ))
                })?;
                let name = e.select(&padding, &zero, &source, elem_type);
                e.insert(graph, conv);
                masked.insert(source.clone(), name.clone());
                name
            }
        };
        let conv = graph
            .node
            .iter()
            .position(|n| n.output.first() == Some(&m.output))
            .expect("found above");
        graph.node[conv].input[0] = name;
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
        let padding = padding_mask(&mut e, length, out.axis, out.rank, &count);
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
        super::outputs::add_count_output(graph, &out.name, out.axis, &count, length)?;
        padded.push(format!(
            "'{}' padded to {length} with '{}_count'",
            out.name, out.name
        ));
    }
    let convs = flow.masked.len();
    Ok(format!(
        "{}: its length, computed from tensor values, runs to the capacity {capacity} and goes along as a count; {} along it read{} the padding masked to zero{}",
        describe(&range),
        nonzero_rewrite_graph::text::plural(convs, "Conv"),
        if convs == 1 { "s" } else { "" },
        if padded.is_empty() { String::new() } else { format!("; outputs {}", padded.join(", ")) }
    ))
}

/// bool, true past `count` along `axis` of a rank-`rank` tensor of `length` there (sized to
/// broadcast against it).
fn padding_mask(e: &mut Emitter, length: i64, axis: usize, rank: usize, count: &str) -> String {
    let mut dims = vec![length];
    dims.extend(std::iter::repeat_n(1, rank.saturating_sub(axis + 1)));
    // A Range, not a constant of `length` positions: a capacity may be long.
    let positions = e.range(length);
    let positions = e.reshape(&positions, &dims);
    let valid = e.binary("Less", &positions, count);
    e.op("Not", &[&valid], vec![])
}
