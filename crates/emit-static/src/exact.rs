//! The rewrites that change no output, before any fixed capacity: a sequence's unit parts read
//! one by one as Gathers ([`super::sequences`]), a second NonZero of the same
//! mask read as the first ([`merge_duplicates`]), masked writes as Where ([`super::writes`]),
//! writes at a full index grid as Where ([`super::grid_writes`]), TorchScript's linear-index selections as GatherND ([`super::gathers`]),
//! mask-then-NMS over every box ([`super::nms`]) and count uses as a sum ([`super::counts`]).

use super::emit::Emitter;
use super::scope::Scope;
use super::summary::StaticReport;
use super::{counts, gathers, grid_writes, nms, replace, sequences, writes};
use crate::graph::describe;
use crate::trace::View;
use crate::Tally;
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_graph::indexed::remove_dead;
use std::collections::HashMap;

/// Masked writes, linear-index selections, mask-then-NMS and count uses, one at a time, each
/// followed by dead-node removal.
pub fn rewrites(
    graph: &mut GraphProto,
    scope: &Scope,
    summary: &mut StaticReport,
    report: &mut Tally,
) {
    let (lines, read) = sequences::rewrite(graph, scope);
    report.removed_nodes += remove_dead(graph, read);
    for line in lines {
        summary
            .rewrites
            .push(("unbind".to_string(), scope.line(line)));
    }
    for line in merge_duplicates(graph) {
        summary
            .rewrites
            .push(("duplicate".to_string(), scope.line(line)));
    }
    // Each rewritten NMS output -> its unremapped selected_indices (nms.rs).
    let mut unremapped = HashMap::new();
    for _ in 0..=graph.node.len() {
        let (index, shapes) = scope.shapes_of(graph);
        let view = View {
            graph,
            index: &index,
            shapes: &shapes,
        };
        // Fixed shapes only: the Where form is written over the data's element count.
        let write = nonzero_rewrite_match::writes::all(&view)
            .find(|w| w.dims.iter().all(|d| d.as_static().is_some()));
        let applied = if let Some(w) = write {
            let node = &graph.node[w.node];
            let mut e = Emitter::new(graph, scope, &describe(node));
            let output = node.output[0].clone();
            writes::emit(&w, &mut e, &output).map(|_| ("masked-write", w.line, w.node, e))
        } else if let Some((w, e)) = nonzero_rewrite_match::writes::grid::all(&view).find_map(|w| {
            let node = &graph.node[w.node];
            let mut e = Emitter::new(graph, scope, &describe(node));
            let output = node.output[0].clone();
            grid_writes::emit(&w, &graph.node, &mut e, &output).map(|_| (w, e))
        }) {
            Some(("grid-write", w.line, w.node, e))
        } else if let Some((at, e, line)) = gathers::find(&view, graph, scope) {
            Some(("linear-index", line, at, e))
        } else if let Some(n) = nms::find(&view) {
            let node = &graph.node[n.node];
            let mut e = Emitter::new(graph, scope, &describe(node));
            let output = node.output[0].clone();
            n.emit(&mut e, node, &output).map(|full| {
                unremapped.insert(output, full);
                ("mask-then-nms", n.line, n.node, e)
            })
        } else if let Some(r) = nms::reader(&view, &unremapped) {
            let node = &graph.node[r.node];
            let mut e = Emitter::new(graph, scope, &describe(node));
            r.emit(&mut e, node, &node.output[0].clone());
            Some(("nms-reader", r.line, r.node, e))
        } else if let Some(c) = counts::find(&view) {
            let node = &graph.node[c.node];
            let mut e = Emitter::new(graph, scope, &describe(node));
            let output = node.output[0].clone();
            c.emit(&mut e, &output)
                .map(|_| ("count", c.line, c.node, e))
        } else {
            None
        };
        let Some((kind, line, at, e)) = applied else {
            break;
        };
        let candidates = replace(graph, at, e);
        report.removed_nodes += remove_dead(graph, candidates);
        summary.rewrites.push((kind.to_string(), scope.line(line)));
    }
}

/// A NonZero of the same mask as an earlier one (torchvision's detectors take `scores[keep]`
/// and `torch.where(keep)[0]` per level: two NonZeros of `keep`) computes the same coordinates:
/// its readers read the earlier one's, so that one selection, padded once, reaches both. Not
/// where the later output is a graph output or is read inside a body (the name is kept there).
fn merge_duplicates(graph: &mut GraphProto) -> Vec<String> {
    let mut lines = vec![];
    let mut first: HashMap<(String, String), String> = HashMap::new();
    let mut renames: HashMap<String, String> = HashMap::new();
    let outputs: Vec<String> = graph.output.iter().filter_map(|o| o.name.clone()).collect();
    let in_bodies = names_in_bodies(graph);
    for node in &graph.node {
        let [mask] = node.input.as_slice() else {
            continue;
        };
        let [out] = node.output.as_slice() else {
            continue;
        };
        if node.op_type.as_deref() != Some("NonZero") || mask.is_empty() {
            continue;
        }
        let key = (node.domain.clone().unwrap_or_default(), mask.clone());
        match first.get(&key) {
            Some(earlier) if !outputs.contains(out) && !in_bodies.contains(out) => {
                lines.push(format!(
                    "duplicate NonZero: {} reads the same mask '{mask}' as the NonZero of '{earlier}': its readers read '{earlier}'",
                    describe(node)
                ));
                renames.insert(out.clone(), earlier.clone());
            }
            Some(_) => {}
            None => {
                first.insert(key, out.clone());
            }
        }
    }
    if renames.is_empty() {
        return lines;
    }
    graph
        .node
        .retain(|n| !n.output.first().is_some_and(|o| renames.contains_key(o)));
    for input in graph.node.iter_mut().flat_map(|n| n.input.iter_mut()) {
        if let Some(to) = renames.get(input) {
            *input = to.clone();
        }
    }
    lines
}

/// Every name a node inside a body of `graph`'s nodes reads (at any depth).
fn names_in_bodies(graph: &GraphProto) -> std::collections::HashSet<String> {
    let mut names = std::collections::HashSet::new();
    let mut todo: Vec<&GraphProto> = graph
        .node
        .iter()
        .flat_map(|n| n.attribute.iter())
        .flat_map(|a| a.g.iter().chain(a.graphs.iter()))
        .collect();
    while let Some(body) = todo.pop() {
        for node in &body.node {
            names.extend(node.input.iter().cloned());
            todo.extend(
                node.attribute
                    .iter()
                    .flat_map(|a| a.g.iter().chain(a.graphs.iter())),
            );
        }
    }
    names
}
