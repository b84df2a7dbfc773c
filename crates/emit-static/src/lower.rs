//! A model that already has the library's ops (the output of `nonzero optimize`) is lowered
//! first: each `nonzero` op is replaced by its fallback function's body (nonzero-rewrite-graph's `library`), the
//! standard-op chain the static rewrites know. The functions and the domain import go once
//! nothing uses them.

use super::emit::Emitter;
use super::scope::Scope;
use crate::graph::is_onnx_op;
use nonzero_proto::onnx::NodeProto;
use nonzero_proto::onnx::{AttributeProto, GraphProto, ModelProto};
use nonzero_proto::Message;
use nonzero_rewrite_graph::library as fallback;
use nonzero_rewrite_graph::library::DOMAIN;
use nonzero_rewrite_graph::MAX_SUBGRAPH_DEPTH;
use std::collections::{HashMap, HashSet};

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

/// Ops whose lowered bodies repeat what an export shares: each BooleanMask of one mask brings its
/// own `NonZero(M) -> Transpose`, where the export had one NonZero for every gather.
const SHARED_ONCE: &[&str] = &["NonZero", "Transpose"];

/// Merges the nodes of [`SHARED_ONCE`] that repeat an earlier one (same op, inputs and
/// attributes) into it, so that one compaction serves every reader, as in the export; returns
/// how many went. A node whose output is a graph output stays.
pub fn merge_repeated(graph: &mut GraphProto) -> usize {
    let outputs: HashSet<String> = graph.output.iter().filter_map(|o| o.name.clone()).collect();
    let mut first: HashMap<Vec<u8>, Vec<String>> = HashMap::new();
    let mut renamed: HashMap<String, String> = HashMap::new();
    let mut kept = Vec::with_capacity(graph.node.len());
    for mut node in std::mem::take(&mut graph.node) {
        for input in &mut node.input {
            if let Some(to) = renamed.get(input) {
                *input = to.clone();
            }
        }
        let shared = SHARED_ONCE.iter().any(|op| is_onnx_op(&node, op))
            && !node.output.iter().any(|o| outputs.contains(o));
        if shared {
            let key = NodeProto {
                name: None,
                output: vec![],
                ..node.clone()
            }
            .encode_to_vec();
            if let Some(earlier) = first.get(&key) {
                renamed.extend(node.output.iter().cloned().zip(earlier.iter().cloned()));
                continue;
            }
            first.insert(key, node.output.clone());
        }
        kept.push(node);
    }
    graph.node = kept;
    rename_reads(graph, &renamed, 0);
    renamed.len()
}

/// Renames every read of a name in `renamed` inside `graph`'s bodies (their captures).
pub(crate) fn rename_reads(
    graph: &mut GraphProto,
    renamed: &HashMap<String, String>,
    depth: usize,
) {
    if renamed.is_empty() || depth > MAX_SUBGRAPH_DEPTH {
        return;
    }
    for node in &mut graph.node {
        if depth > 0 {
            for input in &mut node.input {
                if let Some(to) = renamed.get(input) {
                    *input = to.clone();
                }
            }
        }
        for a in &mut node.attribute {
            for body in a.g.iter_mut().chain(a.graphs.iter_mut()) {
                rename_reads(body, renamed, depth + 1);
            }
        }
    }
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
    depth <= MAX_SUBGRAPH_DEPTH
        && graph.node.iter().any(|n| {
            n.domain.as_deref() == Some(DOMAIN)
                || n.attribute.iter().any(|a| {
                    a.g.iter()
                        .chain(a.graphs.iter())
                        .any(|g| uses_domain(g, depth + 1))
                })
        })
}
