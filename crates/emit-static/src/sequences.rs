//! TorchScript's `unbind` of coordinates (`idx = mask.nonzero(); x[idx[:, 0], idx[:, 1]]` and
//! Longformer's global attention indices): `SplitToSequence` of the `[n, rank]` coordinates into
//! unit parts along the columns, each read by a `SequenceAt` at a constant position. That part
//! is a Gather of one column (or a Slice of width one), which the padding's column steps know;
//! a sequence is not.
//!
//! ONNX Runtime (1.17.3 and 1.31.1) squeezes the split axis where `keepdims` is 0 and the split
//! is absent or a scalar, and keeps it where the split is a 1-D list (the ONNX text says a given
//! split ignores `keepdims`): a Gather at the scalar k in the first case, a Slice `[k, k + 1)`
//! in the second, so the part has ONNX Runtime's shape either way.

use super::emit::{int_attr as attribute, Emitter};
use super::scope::Scope;
use crate::graph::{describe, int_attr, names_read_in_bodies};
use crate::trace::View;
use nonzero_proto::onnx::{GraphProto, NodeProto};
use std::collections::{HashMap, HashSet};

/// A SplitToSequence into unit parts: its input, the axis, the number of parts, and whether each
/// part keeps the axis.
struct UnitSplit {
    input: String,
    axis: i64,
    parts: i64,
    keeps_axis: bool,
}

/// Each `SequenceAt` of a unit `SplitToSequence` becomes a Gather; the sequence is then dead.
/// One line per sequence, and the names the replaced reads read (for dead-node removal).
pub fn rewrite(graph: &mut GraphProto, scope: &Scope) -> (Vec<String>, HashSet<String>) {
    let (index, shapes) = scope.shapes_of(graph);
    let view = View {
        graph,
        index: &index,
        shapes: &shapes,
    };
    let mut splits: HashMap<String, (UnitSplit, String)> = HashMap::new();
    for node in &graph.node {
        if let Some(split) = unit_split(&view, node) {
            splits.insert(node.output[0].clone(), (split, describe(node)));
        }
    }
    // Only sequences that nothing but a SequenceAt at a constant position reads.
    let mut positions: HashMap<String, Vec<(usize, i64)>> = HashMap::new();
    let mut refused: Vec<String> = vec![];
    for (at, node) in graph.node.iter().enumerate() {
        for (slot, input) in node.input.iter().enumerate() {
            let Some((split, _)) = splits.get(input) else {
                continue;
            };
            let position = (view.is_op(node, "SequenceAt") && slot == 0)
                .then(|| view.const_ints(node.input.get(1)?))
                .flatten()
                .filter(|_| view.shapes.info(&node.input[1]).and_then(|i| i.rank()) == Some(0));
            match position.as_deref() {
                Some(&[k]) if (-split.parts..split.parts).contains(&k) => {
                    positions.entry(input.clone()).or_default().push((at, k))
                }
                _ => refused.push(input.clone()),
            }
        }
    }
    let mut names_in_bodies = HashSet::new();
    for node in &graph.node {
        names_read_in_bodies(node, &mut names_in_bodies);
    }
    let outputs: Vec<&str> = graph
        .output
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    let mut lines = vec![];
    let mut rewrites: Vec<(usize, Emitter)> = vec![];
    for (sequence, reads) in &positions {
        if refused.contains(sequence)
            || names_in_bodies.contains(sequence)
            || outputs.contains(&sequence.as_str())
        {
            continue;
        }
        let (split, described) = &splits[sequence];
        for &(at, k) in reads {
            let read = &graph.node[at];
            let mut e = Emitter::new(graph, scope, &describe(read));
            // A position from the end counts from the fixed number of parts.
            let k = if k < 0 { k + split.parts } else { k };
            if split.keeps_axis {
                // A Slice of width one: the column step the padding's proofs know.
                let (start, end, axis) = (e.ints(&[k]), e.ints(&[k + 1]), e.ints(&[split.axis]));
                e.op("Slice", &[&split.input, &start, &end, &axis], vec![]);
            } else {
                let position = e.scalar(k);
                e.op(
                    "Gather",
                    &[&split.input, &position],
                    vec![attribute("axis", split.axis)],
                );
            }
            e.finish_as(&read.output[0]);
            rewrites.push((at, e));
        }
        lines.push(format!(
            "unbind: {described} splits {} into {} unit parts along axis {}, each read by a SequenceAt at a constant position: each became a Gather (or a Slice) of that part",
            split.input, split.parts, split.axis
        ));
    }
    // From the last node back, so that each position still names its node.
    rewrites.sort_by_key(|(at, _)| std::cmp::Reverse(*at));
    let mut read = HashSet::new();
    for (at, e) in rewrites {
        read.extend(super::replace(graph, at, e));
    }
    lines.sort();
    (lines, read)
}

/// A SplitToSequence of `x` into parts of size 1 along an axis of fixed size: the split absent
/// or a constant 1 (a scalar), or a constant list of ones.
fn unit_split(view: &View, node: &NodeProto) -> Option<UnitSplit> {
    if !view.is_op(node, "SplitToSequence") || node.output.len() != 1 {
        return None;
    }
    let input = node.input.first()?.clone();
    let rank = view.shapes.info(&input)?.rank()? as i64;
    let axis = int_attr(node, "axis").ok()?.unwrap_or(0);
    let axis = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&axis) {
        return None;
    }
    let parts = view
        .shapes
        .info(&input)?
        .dims
        .as_ref()?
        .get(axis as usize)?
        .as_static()?;
    let keepdims = int_attr(node, "keepdims").ok()?.unwrap_or(1) != 0;
    let keeps_axis = match node.input.get(1).filter(|s| !s.is_empty()) {
        None => keepdims,
        Some(split) => {
            let values = view.const_ints(split)?;
            let scalar = view.shapes.info(split)?.rank()? == 0;
            match (scalar, values.as_slice()) {
                (true, [1]) => keepdims,
                (false, ones) if ones.len() as i64 == parts && ones.iter().all(|&v| v == 1) => true,
                _ => return None,
            }
        }
    };
    Some(UnitSplit {
        input,
        axis,
        parts,
        keeps_axis,
    })
}
