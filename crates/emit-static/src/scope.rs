//! Where a graph sits in the model: the static rewrites run on the main graph and on every If,
//! Loop and Scan body, each body first (it sees its enclosing graph's shapes), then the graph.

use crate::graph::GraphIndex;
use crate::infer::{BodyInputs, ShapeTable};
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_graph::MAX_SUBGRAPH_DEPTH;
use std::collections::HashSet;

/// One graph's place: the model's opset, what its enclosing graphs know, and their names.
#[derive(Clone, Copy)]
pub struct Scope<'a> {
    pub opset: i64,
    /// The enclosing graphs' shapes (`None` for the main graph).
    pub outer: Option<&'a ShapeTable>,
    /// Loop and Scan bodies do not trust their own inputs' declared shapes.
    pub body_inputs: &'a BodyInputs,
    /// Every name of the enclosing graphs: a fresh name inside a body must shadow none.
    pub outer_names: &'a HashSet<String>,
    /// The graph's path for reports: `main`, `main/If_0.then_branch`, ...
    pub label: &'a str,
    pub depth: usize,
    /// The toolchain the forms are for.
    pub target: super::Target,
    /// An If branch whose outputs are the main graph's: a selection there may be padded, its
    /// count joined with the other branch's ([`crate::if_outputs`]).
    pub pad_outputs: bool,
}

impl Scope<'_> {
    /// What is known of `graph`'s tensors, enclosing graphs included.
    pub fn shapes_of(&self, graph: &GraphProto) -> (GraphIndex, ShapeTable) {
        let index = GraphIndex::new(graph);
        let root = ShapeTable::scope(Some(self.opset));
        let outer = self.outer.unwrap_or(&root);
        let shapes = ShapeTable::for_graph(graph, &index, Some(outer), self.body_inputs);
        (index, shapes)
    }

    /// A report line, with the body it was written in (the main graph's lines as they were).
    pub fn line(&self, line: String) -> String {
        if self.depth == 0 {
            line
        } else {
            format!("in {}: {line}", self.label)
        }
    }
}

/// The names of `graph` (and its bodies) that start with `prefix`, into `names`.
pub fn names_under(graph: &GraphProto, prefix: &str, names: &mut HashSet<String>, depth: usize) {
    if depth > MAX_SUBGRAPH_DEPTH {
        return;
    }
    let mut own: Vec<&String> = vec![];
    for node in &graph.node {
        own.extend(node.input.iter().chain(&node.output).chain(&node.name));
        for a in &node.attribute {
            for g in a.g.iter().chain(a.graphs.iter()) {
                names_under(g, prefix, names, depth + 1);
            }
        }
    }
    let declared = graph
        .input
        .iter()
        .chain(&graph.output)
        .chain(&graph.value_info);
    own.extend(declared.filter_map(|v| v.name.as_ref()));
    own.extend(graph.initializer.iter().filter_map(|t| t.name.as_ref()));
    names.extend(own.into_iter().filter(|n| n.starts_with(prefix)).cloned());
}

/// Every name `graph` and its bodies define or read: tensors, node names, inputs, outputs.
pub fn names_in(graph: &GraphProto, names: &mut HashSet<String>, depth: usize) {
    names_under(graph, "", names, depth);
}
