//! Applying the patterns to one graph and its subgraphs, then removing what they made dead.

use crate::graph::GraphIndex;
use crate::patterns::{self, Kind};
use crate::shapes::ShapeTable;
use crate::trace::View;
use crate::{OptimizeError, Report, Rewrite, MAX_SUBGRAPH_DEPTH};
use nonzero_proto::onnx::GraphProto;
use std::collections::HashSet;

/// Rewrites `graph` in place: subgraphs first (they see this graph's shapes), then this graph.
pub fn optimize_graph(
    graph: &mut GraphProto,
    outer: Option<&ShapeTable>,
    depth: usize,
    report: &mut Report,
) -> Result<(), OptimizeError> {
    if depth > MAX_SUBGRAPH_DEPTH {
        return Err(OptimizeError::TooDeep);
    }
    report.graphs += 1;
    let shapes = ShapeTable::for_graph(graph, &GraphIndex::new(graph), outer);
    for node in &mut graph.node {
        for attribute in &mut node.attribute {
            for sub in attribute.g.iter_mut().chain(attribute.graphs.iter_mut()) {
                optimize_graph(sub, Some(&shapes), depth + 1, report)?;
            }
        }
    }
    // Every edit replaces a GatherND, Gather or Transpose with a nonzero-domain node, so there
    // are at most as many edits as nodes; the bound makes termination evident.
    for _ in 0..=graph.node.len() {
        let index = GraphIndex::new(graph);
        let view = View {
            graph,
            index: &index,
            shapes: &shapes,
        };
        let Some(edit) = patterns::find(&view) else {
            break;
        };
        let mut chain: HashSet<String> = edit.chain.into_iter().collect();
        chain.insert(graph.node[edit.node].output[0].clone());
        graph.node[edit.node] = edit.replacement;
        report.rewrites.push(Rewrite {
            kind: edit.kind,
            line: edit.line,
        });
        // At once, so that the next search sees the readers that are really left.
        report.removed_nodes += remove_dead(graph, chain);
    }
    Ok(())
}

/// Removes nodes whose outputs are in `candidates` and read by nobody, then the nodes and
/// initializers that only they read, and the value infos of removed tensors. Returns how many
/// nodes went.
fn remove_dead(graph: &mut GraphProto, mut candidates: HashSet<String>) -> usize {
    let mut removed_outputs = HashSet::new();
    let mut removed_inputs = HashSet::new();
    let before = graph.node.len();
    loop {
        let index = GraphIndex::new(graph);
        let dead: Vec<bool> = graph
            .node
            .iter()
            .map(|node| {
                !node.output.is_empty()
                    && node.output.iter().any(|o| candidates.contains(o))
                    && node.output.iter().all(|o| o.is_empty() || index.unused(o))
            })
            .collect();
        if !dead.contains(&true) {
            break;
        }
        for (node, _) in graph.node.iter().zip(&dead).filter(|(_, &d)| d) {
            removed_outputs.extend(node.output.iter().cloned());
            removed_inputs.extend(node.input.iter().cloned());
            // What fed a removed node may now be dead too.
            candidates.extend(node.input.iter().cloned());
        }
        let mut flags = dead.into_iter();
        graph.node.retain(|_| !flags.next().unwrap_or(false));
    }
    let index = GraphIndex::new(graph);
    graph.initializer.retain(|t| {
        let name = t.name.as_deref().unwrap_or("");
        !(removed_inputs.contains(name) && index.unused(name) && !index.graph_inputs.contains(name))
    });
    graph.value_info.retain(|vi| {
        !vi.name
            .as_ref()
            .is_some_and(|n| removed_outputs.contains(n))
    });
    before - graph.node.len()
}

impl Kind {
    pub fn label(self) -> &'static str {
        match self {
            Kind::ArgWhere => "NonZero -> Transpose as ArgWhere",
            Kind::BooleanMaskGatherNd => "GatherND chains as BooleanMask",
            Kind::BooleanMaskGather => "Gather(axis=0) column chains as BooleanMask",
        }
    }
}
