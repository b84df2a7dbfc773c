//! Shape arithmetic made constant. With every graph input's shape fixed, each node whose
//! outputs the analysis evaluates from constants and fixed shapes alone (Shape, Size, and the
//! arithmetic, casts and layout ops that follow them: nonzero-rewrite-analysis's `consts`)
//! is replaced by initializers holding those values. A compiler then sees constants where the
//! export computed sizes (a Pad's pads, a Resize's sizes, a Reshape's shape), and the nodes
//! after them get fixed shapes.
//!
//! Runs on each graph before its selections are padded: a padded tensor's Shape is its
//! capacity, not its count, so no Shape of one is ever folded. A NonZero's count is not a
//! constant (its size is a fresh symbol), nor is anything inside a Loop body that depends on
//! the iteration (a body's own inputs have no values).

use super::scope::Scope;
use crate::graph::{is_onnx_op, names_read_in_bodies};
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_graph::indexed::remove_dead;
use std::collections::HashSet;

/// What one fold did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Folded {
    /// Nodes replaced by constants.
    pub nodes: usize,
    /// Initializers written for the values that remaining nodes read.
    pub initializers: usize,
    /// Nodes that computed only what the folded nodes read (Constants, mostly), removed.
    pub removed: usize,
}

/// Folds every node of `graph` computed from a Shape or Size whose outputs are all constants,
/// except nodes with bodies and nodes writing a graph output (an output stays a node's).
/// What is computed from constants alone is left to the runtime's own folding: the forms this
/// target writes are such nodes, and making a model static twice must change nothing.
pub fn fold_constants(graph: &mut GraphProto, scope: &Scope) -> Folded {
    let (index, shapes) = scope.shapes_of(graph);
    let mut from_shapes: HashSet<&str> = HashSet::new();
    let foldable: Vec<bool> = graph
        .node
        .iter()
        .map(|node| {
            let op = node.op_type.as_deref().unwrap_or("");
            let derived = is_onnx_op(node, "Shape")
                || is_onnx_op(node, "Size")
                || node.input.iter().any(|i| from_shapes.contains(i.as_str()));
            if derived {
                from_shapes.extend(node.output.iter().map(String::as_str));
            }
            derived
                && is_onnx_op(node, op)
                && node
                    .attribute
                    .iter()
                    .all(|a| a.g.is_none() && a.graphs.is_empty())
                && !node.output.is_empty()
                && node.output.iter().all(|o| {
                    !o.is_empty()
                        && !index.graph_outputs.contains(o)
                        // An empty value stays computed (OpenVINO 2026.4 fails to convert a
                        // Loop whose carried value is an initializer with a size 0).
                        && shapes.constant(o).is_some_and(|c| !c.is_empty())
                })
        })
        .collect();
    if !foldable.contains(&true) {
        return Folded::default();
    }
    // What the kept nodes read (inside their bodies too) needs a value.
    let mut read = HashSet::new();
    for (node, _) in graph.node.iter().zip(&foldable).filter(|(_, &f)| !f) {
        read.extend(node.input.iter().cloned());
        names_read_in_bodies(node, &mut read);
    }
    let mut folded = Folded::default();
    let mut inputs = HashSet::new();
    // Every output of a folded node loses its value_info: it is an initializer now (whose
    // type is its own), or gone.
    let mut gone = HashSet::new();
    let mut initializers = vec![];
    for (node, _) in graph.node.iter().zip(&foldable).filter(|(_, &f)| f) {
        folded.nodes += 1;
        inputs.extend(node.input.iter().filter(|i| !i.is_empty()).cloned());
        gone.extend(node.output.iter().cloned());
        for out in node.output.iter().filter(|o| read.contains(*o)) {
            let value = shapes
                .constant(out)
                .expect("every output of a folded node has a value");
            initializers.push(value.to_tensor(out));
        }
    }
    let mut at = 0;
    graph.node.retain(|_| {
        at += 1;
        !foldable[at - 1]
    });
    folded.initializers = initializers.len();
    graph
        .value_info
        .retain(|vi| vi.name.as_ref().is_none_or(|n| !gone.contains(n)));
    graph.initializer.extend(initializers);
    folded.removed = remove_dead(graph, inputs);
    folded
}
