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

mod bounded;
mod einsum;
mod follow;
mod joined;
mod known;
mod length;
mod linear;
mod mixing;
mod ops;
mod reach;
mod shape_reads;
mod write;
mod writes;

use super::scope::Scope;
use super::StaticError;
use crate::trace::View;
use follow::Flow;
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
        // The sizes the capacity fixed let the exact rewrites that needed them apply now (a
        // write's mask of the data's shape, a linear index's stride, a grid write at a
        // selection's coordinates).
        let before = self.summary.rewrites.len();
        super::exact::rewrites(graph, scope, self.summary, self.report);
        if self.summary.rewrites.len() > before {
            self.fold(graph, scope);
        }
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
    // A bounded length's refusal, for the Ranges that read it (they are tried after it).
    let mut bounded_refusals: HashMap<String, String> = HashMap::new();
    loop {
        let (index, shapes) = scope.shapes_of(graph);
        let view = View {
            graph,
            index: &index,
            shapes: &shapes,
        };
        // Each source once, by its output (a refused one stays, and emits shift the others).
        let Some((at, source)) = graph.node.iter().enumerate().find_map(|(at, n)| {
            if tried.contains(n.output.first()?) {
                return None;
            }
            if value_length(&view, n) {
                return Some((at, Source::Range));
            }
            bounded::bound(&view, n).map(|b| (at, Source::Bounded(b)))
        }) else {
            return Ok(done);
        };
        let node = &graph.node[at];
        let out = node.output[0].clone();
        tried.push(out.clone());
        // The length's own tensor: the Range's limit, or the bounded length itself.
        let limit = match source {
            Source::Range => node.input[1].clone(),
            Source::Bounded(_) => out.clone(),
        };
        let planned =
            follow::follow(&view, &out, matches!(source, Source::Bounded(_))).and_then(|flow| {
                let (capacity, cuts) = match source {
                    Source::Range => capacity(&flow, capacities)?,
                    Source::Bounded(bound) => {
                        let cuts = flow.outputs.iter().map(|o| o.steps.eval(bound));
                        let cuts = cuts.collect::<Option<Vec<_>>>();
                        (bound, cuts.ok_or("an output's length overflows")?)
                    }
                };
                Ok((flow, capacity, cuts))
            });
        // Every length the masks read is a length at the capacity (a Conv of a longer kernel
        // than its input would make it negative).
        let planned = planned.and_then(|(flow, capacity, cuts)| {
            let limit_type = shapes.get(&limit).elem_type;
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
                let limit_type = shapes.get(&limit).elem_type.unwrap_or(0);
                let line = write::emit(
                    graph, scope, at, source, &limit, &flow, capacity, &cuts, limit_type,
                )?;
                done.lines.push(line);
                done.padded
                    .extend(flow.outputs.iter().map(|o| (o.name.clone(), o.axis)));
            }
            Err(why) => match source {
                Source::Bounded(bound) => {
                    let why = format!(
                        "its length, the most selected of any row (at most {bound}), {why}"
                    );
                    bounded_refusals.insert(out, why);
                }
                Source::Range => {
                    let why = through_casts(&view, &limit)
                        .and_then(|l| bounded_refusals.get(&l).cloned())
                        .unwrap_or(why);
                    known.insert(out, (Reason::ValueDependentShape, why));
                }
            },
        }
    }
}

/// What a length comes from.
#[derive(Debug, Clone, Copy)]
pub(super) enum Source {
    /// A Range's limit computed from values (its capacity given by the user).
    Range,
    /// A length the shapes bound ([`bounded`]): the bound is the capacity.
    Bounded(i64),
}

/// `name` read back through Casts, and Adds and Muls of a constant (a length's own steps).
fn through_casts(view: &View, name: &str) -> Option<String> {
    let mut name = name.to_string();
    for _ in 0..8 {
        match view.producer(&name) {
            Some(n) if view.is_op(n, "Cast") => name = n.input.first()?.clone(),
            Some(n) if (view.is_op(n, "Add") || view.is_op(n, "Mul")) && n.input.len() == 2 => {
                let constant = |i: usize| view.const_ints(&n.input[i]).is_some();
                name = match (constant(0), constant(1)) {
                    (false, true) => n.input[0].clone(),
                    (true, false) => n.input[1].clone(),
                    _ => break,
                };
            }
            _ => break,
        }
    }
    Some(name)
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
