//! The last step of static mode: every node that nothing reads goes, in the main graph and in
//! every body. The passes leave some (a compaction's padding mask that no reader took, a
//! rejoin's cut), and a static model is meant to run as written on every ONNX Runtime: on
//! 1.17.3 and 1.18.1, memory patterns gave an unread tensor a buffer that overlapped live ones
//! from a session's second run on (fixed in 1.19), so a dead Less corrupted a compaction's
//! indices. `test_static_rejoin.py` and `test_static_topk.py` run each session several times.

use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_graph::indexed::remove_dead;
use std::collections::HashSet;

/// Every node output of `graph` and of its bodies.
pub fn outputs(graph: &GraphProto) -> HashSet<String> {
    let mut names = HashSet::new();
    collect(graph, &mut names);
    names
}

fn collect(graph: &GraphProto, names: &mut HashSet<String>) {
    for node in &graph.node {
        names.extend(node.output.iter().filter(|o| !o.is_empty()).cloned());
        for attribute in &node.attribute {
            for body in attribute.g.iter().chain(attribute.graphs.iter()) {
                collect(body, names);
            }
        }
    }
}

/// Removes the nodes of `graph` and of its bodies whose outputs nobody reads (nor a graph
/// output); a node with one output read keeps the others (TopK's values). Returns how many of
/// the removed nodes wrote a name in `original` (the model's own nodes, for the report).
pub fn sweep(graph: &mut GraphProto, original: &HashSet<String>) -> usize {
    let mut removed = 0;
    for node in &mut graph.node {
        for attribute in &mut node.attribute {
            for body in attribute.g.iter_mut().chain(attribute.graphs.iter_mut()) {
                removed += sweep(body, original);
            }
        }
    }
    // Each node by its first output that has a name (a node with none is never removed).
    let before: Vec<String> = graph
        .node
        .iter()
        .filter_map(|n| n.output.iter().find(|o| !o.is_empty()).cloned())
        .collect();
    if remove_dead(graph, before.iter().cloned().collect()) == 0 {
        return removed;
    }
    let after: HashSet<&String> = graph.node.iter().flat_map(|n| &n.output).collect();
    removed
        + before
            .iter()
            .filter(|name| !after.contains(name) && original.contains(name.as_str()))
            .count()
}
