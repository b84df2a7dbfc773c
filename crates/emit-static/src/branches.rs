//! With every input shape fixed, an If whose condition is computed from shapes alone has a
//! known branch: the default mode's size guard (`If(Shape(mask) == Shape(data)[:k], fused,
//! original)`, docs/optimize.md), or an export's test of a size. The If is replaced by that
//! branch's nodes, so that what the branch computes is made static with the graph around it: a
//! selection there may then be padded up to the graph's outputs, which no branch output can be.

use super::scope::Scope;
use crate::graph::{describe, is_onnx_op};
use nonzero_proto::onnx::{GraphProto, NodeProto};
use std::collections::HashSet;

/// Replaces every If of `graph` whose condition the shapes prove by its taken branch; returns a
/// report line for each.
pub fn fold_known(graph: &mut GraphProto, scope: &Scope) -> Vec<String> {
    let mut lines = vec![];
    // Each fold removes an If; the bound makes termination evident.
    for _ in 0..graph.node.len() {
        let (_, shapes) = scope.shapes_of(graph);
        let known = graph.node.iter().enumerate().find_map(|(at, node)| {
            if !is_onnx_op(node, "If") || !crate::versions::is_known("If", shapes.opset()) {
                return None;
            }
            let cond = shapes.values(node.input.first()?)?;
            let [value] = cond else { return None };
            let taken = if value.as_static()? != 0 {
                "then_branch"
            } else {
                "else_branch"
            };
            let branch = node
                .attribute
                .iter()
                .find(|a| a.name.as_deref() == Some(taken))?
                .g
                .as_ref()?;
            (branch.output.len() == node.output.len() && !shadows(graph, at, branch))
                .then(|| (at, taken, branch.clone()))
        });
        let Some((at, taken, branch)) = known else {
            break;
        };
        let node = take(graph, at, taken, branch);
        lines.push(scope.line(format!(
            "If {}: the shapes fix its condition, and its {taken} takes its place",
            describe(&node)
        )));
    }
    lines
}

/// Replaces the If at `at` by the nodes of its branch `taken` (named so in `branch`); returns the
/// If. The branch's outputs become the If's: an Identity each (ONNX Runtime removes them).
pub fn take(graph: &mut GraphProto, at: usize, taken: &str, branch: GraphProto) -> NodeProto {
    let node = graph.node.remove(at);
    let mut nodes = branch.node;
    for (inner, outer) in branch.output.iter().zip(&node.output) {
        let inner = inner.name.clone().unwrap_or_default();
        nodes.push(NodeProto {
            input: vec![inner],
            output: vec![outer.clone()],
            name: Some(format!("{outer}/taken_{taken}")),
            op_type: Some("Identity".into()),
            domain: Some(String::new()),
            ..Default::default()
        });
    }
    graph.node.splice(at..at, nodes);
    graph.initializer.extend(branch.initializer);
    node
}

/// True when a name the branch defines is also defined in the rest of `graph` (the If at `at`
/// aside): inlining would then define it twice.
pub fn shadows(graph: &GraphProto, at: usize, branch: &GraphProto) -> bool {
    let mut outside = HashSet::new();
    for (_, node) in graph.node.iter().enumerate().filter(|&(i, _)| i != at) {
        outside.extend(node.output.iter().cloned());
    }
    outside.extend(graph.input.iter().filter_map(|v| v.name.clone()));
    outside.extend(graph.initializer.iter().filter_map(|t| t.name.clone()));
    let mut defined = branch
        .node
        .iter()
        .flat_map(|n| n.output.iter().cloned())
        .chain(branch.initializer.iter().filter_map(|t| t.name.clone()));
    defined.any(|name| !name.is_empty() && outside.contains(&name))
}
