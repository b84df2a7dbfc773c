//! The rewrites that change no output, before any fixed capacity: masked writes as Where
//! ([`super::writes`]), TorchScript's linear-index selections as GatherND ([`super::gathers`]),
//! mask-then-NMS over every box ([`super::nms`]) and count uses as a sum ([`super::counts`]).

use super::emit::Emitter;
use super::scope::Scope;
use super::summary::StaticReport;
use super::{counts, gathers, nms, replace, writes};
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
