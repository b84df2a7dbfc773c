//! What keeps a model dynamic after the static rewrites: ops whose output size depends on
//! tensor values (NonZero, NonMaxSuppression, Unique, Compress, the library's own), and shape
//! operands (Reshape's shape, Expand's, a Slice's bounds, ...) computed from tensor values.
//! Shape arithmetic itself is not folded: with every input shape fixed, a `Shape` or `Size`
//! output is constant, so only values reached from the inputs' values count.

use crate::graph::{describe, GraphIndex};
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_analysis::findings::{Left, Reason};
use nonzero_rewrite_graph::library::DOMAIN;
use nonzero_rewrite_graph::MAX_SUBGRAPH_DEPTH;
use std::collections::{HashMap, HashSet};

/// Ops whose output size depends on the values of their inputs.
const DATA_DEPENDENT: &[&str] = &["NonZero", "NonMaxSuppression", "Unique", "Compress"];

/// The input slots whose values set an output's size, per op.
fn shape_operands(op: &str) -> &'static [usize] {
    match op {
        "Reshape" | "Expand" | "Tile" | "Pad" | "TopK" | "OneHot" | "Upsample" => &[1],
        "ConstantOfShape" => &[0],
        "Range" => &[0, 1, 2],
        "Slice" => &[1, 2, 3, 4],
        "Resize" => &[2, 3],
        "Split" | "Squeeze" | "Unsqueeze" => &[1],
        _ => &[],
    }
}

/// Every data-dependent node of `graph` and its subgraphs. `known` gives the reason already
/// found for a NonZero (by its output name); others get `data-dependent`.
pub fn scan(
    graph: &GraphProto,
    label: &str,
    known: &HashMap<String, (Reason, String)>,
    depth: usize,
    left: &mut Vec<Left>,
) {
    let index = GraphIndex::new(graph);
    let mut from_values: HashSet<&str> = index
        .graph_inputs
        .iter()
        .map(String::as_str)
        .filter(|n| {
            !graph
                .initializer
                .iter()
                .any(|t| t.name.as_deref() == Some(*n))
        })
        .collect();
    for node in &graph.node {
        let op = node.op_type.as_deref().unwrap_or("");
        let library = node.domain.as_deref() == Some(DOMAIN);
        let onnx = matches!(node.domain.as_deref(), None | Some("") | Some("ai.onnx"));
        let mut push = |reason: Reason, detail: String| {
            left.push(Left {
                graph: label.to_string(),
                node: describe(node),
                op: op.to_string(),
                reason,
                detail,
            })
        };
        if library || (onnx && DATA_DEPENDENT.contains(&op)) {
            let found = node.output.first().and_then(|o| known.get(o)).cloned();
            let (reason, detail) = match found {
                Some(known) => known,
                None => (
                    Reason::DataDependent,
                    format!("{op}: its output size depends on the values of its inputs"),
                ),
            };
            push(reason, detail);
        } else if onnx {
            for &slot in shape_operands(op) {
                let Some(name) = node.input.get(slot).filter(|n| !n.is_empty()) else {
                    continue;
                };
                if from_values.contains(name.as_str()) {
                    // A capped Range refused says why (crate::capped).
                    let (reason, detail) = node.output.first().and_then(|o| known.get(o)).cloned().unwrap_or_else(|| (
                        Reason::ValueDependentShape,
                        format!("input {slot} ('{name}') sets an output size and is computed from tensor values"),
                    ));
                    push(reason, detail);
                    break;
                }
            }
        }
        let shape_only = onnx && matches!(op, "Shape" | "Size");
        if !shape_only && node.input.iter().any(|i| from_values.contains(i.as_str()))
            || library
            || (onnx && DATA_DEPENDENT.contains(&op))
        {
            from_values.extend(node.output.iter().map(String::as_str));
        }
        for a in &node.attribute {
            for g in a.g.iter().chain(a.graphs.iter()) {
                let sub = format!(
                    "{label}/{}.{}",
                    describe(node),
                    a.name.as_deref().unwrap_or("")
                );
                if depth < MAX_SUBGRAPH_DEPTH {
                    scan(g, &sub, known, depth + 1, left);
                }
            }
        }
    }
}
