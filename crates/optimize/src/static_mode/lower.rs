//! A model that already has the library's ops (the output of `nonzero optimize`) is lowered
//! first: each `nonzero` op is replaced by its fallback function's body (crate::fallback), the
//! standard-op chain the static rewrites know. The functions and the domain import go once
//! nothing uses them.

use super::emit::Emitter;
use super::scope::Scope;
use crate::fallback;
use crate::patterns::DOMAIN;
use nonzero_proto::onnx::{AttributeProto, GraphProto, ModelProto};
use std::collections::HashMap;

/// Lowers every `nonzero` op of `graph` (not its bodies) that has a body at the scope's opset;
/// returns how many.
pub fn lower_library_ops(graph: &mut GraphProto, scope: &Scope) -> usize {
    let mut lowered = 0;
    let mut i = 0;
    while i < graph.node.len() {
        let node = &graph.node[i];
        let body = (node.domain.as_deref() == Some(DOMAIN))
            .then(|| fallback::function(node.op_type.as_deref().unwrap_or(""), scope.opset))
            .flatten();
        let Some(body) = body.filter(|f| f.input.len() >= node.input.len()) else {
            i += 1;
            continue;
        };
        let node = graph.node.remove(i);
        let mut names: HashMap<String, String> = body
            .input
            .iter()
            .zip(&node.input)
            .map(|(formal, actual)| (formal.clone(), actual.clone()))
            .collect();
        names.extend(body.output.iter().cloned().zip(node.output.iter().cloned()));
        let mut emitter = Emitter::new(graph, scope, &crate::graph::describe(&node));
        for inner in &body.node {
            let mut copy = inner.clone();
            for name in copy.input.iter_mut().chain(copy.output.iter_mut()) {
                let fresh = names
                    .entry(name.clone())
                    .or_insert_with(|| emitter.fresh(name))
                    .clone();
                *name = fresh;
            }
            copy.name = Some(emitter.fresh(inner.op_type.as_deref().unwrap_or("node")));
            // An attribute the body takes from its caller: the caller's value, or none.
            copy.attribute = copy
                .attribute
                .into_iter()
                .filter_map(|a| match a.ref_attr_name.as_deref() {
                    None | Some("") => Some(a),
                    Some(from) => node
                        .attribute
                        .iter()
                        .find(|c| c.name.as_deref() == Some(from))
                        .map(|c| AttributeProto {
                            name: a.name.clone(),
                            ..c.clone()
                        }),
                })
                .collect();
            emitter.nodes.push(copy);
        }
        i += emitter.insert(graph, i);
        lowered += 1;
    }
    lowered
}

/// Drops the `nonzero` functions and domain import when no node uses the domain any more.
pub fn drop_unused_domain(model: &mut ModelProto) {
    let used = model.graph.as_ref().is_some_and(|g| uses_domain(g, 0));
    if used {
        return;
    }
    model
        .functions
        .retain(|f| f.domain.as_deref() != Some(DOMAIN));
    model
        .opset_import
        .retain(|o| o.domain.as_deref() != Some(DOMAIN));
}

fn uses_domain(graph: &GraphProto, depth: usize) -> bool {
    depth <= crate::MAX_SUBGRAPH_DEPTH
        && graph.node.iter().any(|n| {
            n.domain.as_deref() == Some(DOMAIN)
                || n.attribute.iter().any(|a| {
                    a.g.iter()
                        .chain(a.graphs.iter())
                        .any(|g| uses_domain(g, depth + 1))
                })
        })
}
