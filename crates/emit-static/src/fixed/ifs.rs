//! For the portable targets, an If of the main graph whose branches are fixed-shape work becomes
//! both branches and a Where per output ([`crate::if_outputs::flatten`]): QNN HTP runs no If
//! (its bodies go to the CPU EP), onnx2tf's flatbuffer_direct writes one as a custom op and
//! its tf_converter fails on dynamo's, and rknn-toolkit2 refuses it. An export's data-dependent
//! branch (`if x.sum() > 0: x[m] += v`) is what they are: once `--static` has made the
//! selection inside fixed-shape, nothing needs the If.
//!
//! Fixed-shape work: every tensor of both branches has fixed dims, no branch has a body of its
//! own, and each output has the same dims and type in both, so that the Where neither
//! broadcasts nor converts. The condition's one element is read as the If reads it (a `[1]`
//! condition only where every output has rank 1 or more, so that the Where adds no axis).
//! As with joined selections (`if_outputs`), the branch the condition does not choose is
//! computed too: it cannot fail on fixed shapes, but for an out-of-range index of the model's
//! own, which the If would not have read.

use super::fixed_work;
use crate::graph::is_onnx_op;
use crate::infer::ShapeTable;
use crate::scope::Scope;
use nonzero_proto::onnx::{GraphProto, NodeProto};
use nonzero_rewrite_analysis::dims::static_dims;

/// Flattens every such If of `graph` (the main graph); returns a report line for each.
pub fn flatten(graph: &mut GraphProto, scope: &Scope) -> Vec<(String, String)> {
    if scope.opset < 9 {
        return vec![]; // no Where
    }
    let (_, shapes) = scope.shapes_of(graph);
    let ifs: Vec<String> = graph
        .node
        .iter()
        .filter(|node| fixed_shape(node, scope, &shapes))
        .map(|node| node.output[0].clone())
        .collect();
    crate::if_outputs::flatten(graph, &ifs);
    ifs.iter()
        .map(|first| {
            let line = format!(
                "fixed-shape branches: If -> {first} became both branches and a Where per output ({} takes no If)",
                scope.target.name()
            );
            ("fixed-branches".to_string(), line)
        })
        .collect()
}

/// Whether `node` is an If whose branches are fixed-shape work, as the module doc says.
fn fixed_shape(node: &NodeProto, scope: &Scope, shapes: &ShapeTable) -> bool {
    if !is_onnx_op(node, "If") || node.output.is_empty() || node.output.iter().any(String::is_empty)
    {
        return false;
    }
    let Some(condition) = node.input.first().and_then(|c| static_dims(shapes, c)) else {
        return false;
    };
    let branches: Vec<&GraphProto> = ["then_branch", "else_branch"]
        .iter()
        .filter_map(|side| {
            node.attribute
                .iter()
                .find(|a| a.name.as_deref() == Some(side))?
                .g
                .as_ref()
        })
        .collect();
    let [then_branch, else_branch] = branches[..] else {
        return false;
    };
    let body_scope = Scope {
        outer: Some(shapes),
        depth: 1,
        ..*scope
    };
    let mut outputs = vec![];
    for branch in [then_branch, else_branch] {
        match fixed_work(branch, &body_scope) {
            Some(typed) if typed.len() == node.output.len() => outputs.push(typed),
            _ => return false,
        }
    }
    let read_as_if = condition.iter().all(|&d| d == 1)
        && outputs[0]
            .iter()
            .all(|(dims, _)| condition.len() <= dims.len());
    read_as_if && outputs[0] == outputs[1]
}
