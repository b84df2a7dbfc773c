//! Every reader of the coordinates an ArgWhere leaves, accounted for (issue 25). Once the
//! rewrites are done, the readers of each ArgWhere output are followed through the index
//! plumbing exporters put between the coordinates and their use (column picks by Gather,
//! squeezes,
//! reshapes, concatenations, linear-index arithmetic). What they end in is either
//! - a gather (`Gather`, `GatherND`, `GatherElements` reading them as indices): a selection that
//!   stays unfused, reported as a gather kept with the reason `gather-not-fused`, unless an earlier
//!   proof already gave it a reason; or
//! - a reader that needs the coordinates themselves (ScatterND, ScatterElements, a graph output,
//!   a subgraph, anything else): listed under `coordinates_used`, not as left.

use crate::findings::{Left, Reason, UsedCoordinates};
use crate::graph::{describe, GraphIndex};
use crate::library::DOMAIN;
use nonzero_proto::onnx::GraphProto;
use std::collections::HashSet;

/// Ops that carry coordinates on to another reader without using them.
const PLUMBING: &[&str] = &[
    "Split",
    "Slice",
    "Squeeze",
    "Unsqueeze",
    "Reshape",
    "Flatten",
    "Concat",
    "Identity",
    "Cast",
    "Add",
    "Mul",
    "Transpose",
];
/// Ops that select by coordinates (input 1 is the index tensor).
const GATHERS: &[&str] = &["Gather", "GatherND", "GatherElements"];
/// How many tensors one walk may visit.
const MAX_VISITS: usize = 256;

/// Adds the readers of every ArgWhere output in `graph` to `used`, and its unfused gathers to
/// `left` (unless a proof already put them there).
pub fn account(
    graph: &GraphProto,
    label: &str,
    left: &mut Vec<Left>,
    used: &mut Vec<UsedCoordinates>,
) {
    let index = GraphIndex::new(graph);
    let already: HashSet<String> = left
        .iter()
        .filter(|l| l.graph == label)
        .map(|l| l.node.clone())
        .collect();
    for argwhere in graph
        .node
        .iter()
        .filter(|n| n.domain.as_deref() == Some(DOMAIN) && n.op_type.as_deref() == Some("ArgWhere"))
    {
        let Some(start) = argwhere.output.first() else {
            continue;
        };
        let mut seen = HashSet::new();
        let mut todo = vec![start.clone()];
        while let Some(tensor) = todo.pop() {
            if !seen.insert(tensor.clone()) || seen.len() > MAX_VISITS {
                continue;
            }
            let source = describe(argwhere);
            if index.graph_outputs.contains(&tensor) {
                used.push(UsedCoordinates {
                    graph: label.to_string(),
                    argwhere: source.clone(),
                    reader: "the graph's outputs".to_string(),
                    op: "output".to_string(),
                });
            }
            for &(r, slot) in index.readers_of(&tensor) {
                let reader = &graph.node[r];
                let op = reader.op_type.as_deref().unwrap_or("");
                let onnx = matches!(reader.domain.as_deref(), None | Some("") | Some("ai.onnx"));
                // A gather of the coordinates themselves (a column pick) is plumbing too.
                let picks = GATHERS.contains(&op) && slot == 0;
                if onnx && (PLUMBING.contains(&op) || picks) && slot != usize::MAX {
                    todo.extend(reader.output.iter().filter(|o| !o.is_empty()).cloned());
                } else if onnx && GATHERS.contains(&op) && slot == 1 {
                    let node = describe(reader);
                    if !already.contains(&node)
                        && !left.iter().any(|l| l.graph == label && l.node == node)
                    {
                        left.push(Left {
                            graph: label.to_string(),
                            node,
                            op: op.to_string(),
                            reason: Reason::GatherNotFused,
                            detail: format!("reads the coordinates of {source} as indices; no fused form is proven for this chain"),
                        });
                    }
                } else {
                    used.push(UsedCoordinates {
                        graph: label.to_string(),
                        argwhere: source.clone(),
                        reader: describe(reader),
                        op: if slot == usize::MAX {
                            format!("a subgraph of {op}")
                        } else {
                            op.to_string()
                        },
                    });
                }
            }
        }
    }
}
