//! Applying the patterns to one graph and its subgraphs, then removing what they made dead,
//! and saying why each NonZero that is left was left.

use crate::graph::{describe, ints_attr, is_onnx_op, GraphIndex};
use crate::infer::{BodyInputs, ShapeTable, TensorInfo};
use crate::report::{Left, Reason, Report, Rewrite};
use crate::versions::nonzero_opset_problem;
use crate::{OptimizeError, Options, DOMAIN, MAX_SUBGRAPH_DEPTH};
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_analysis::trace::{mask_rank, View};
use nonzero_rewrite_graph::indexed::IndexedGraph;
use std::collections::{HashMap, HashSet};

/// A function's key: (domain, name).
pub type FunctionKey = (String, String);

/// State shared by every graph of one model.
pub struct Pass<'o> {
    pub options: &'o Options,
    /// The `ai.onnx` opset of the graphs this pass rewrites (the model's, or a function's own).
    pub onnx_opset: Option<i64>,
    pub report: Report,
    /// The model's functions, and what is known about the inputs at each call site.
    pub call_sites: HashMap<FunctionKey, Vec<Vec<TensorInfo>>>,
}

impl Pass<'_> {
    /// Rewrites `graph` in place: subgraphs first (they see this graph's shapes), then this graph.
    pub fn optimize_graph(
        &mut self,
        graph: &mut GraphProto,
        outer: Option<&ShapeTable>,
        body_inputs: BodyInputs,
        label: &str,
        depth: usize,
    ) -> Result<(), OptimizeError> {
        if depth > MAX_SUBGRAPH_DEPTH {
            return Err(OptimizeError::TooDeep);
        }
        self.report.graphs += 1;
        let scope = ShapeTable::scope(self.onnx_opset);
        let outer = Some(outer.unwrap_or(&scope));
        let shapes = ShapeTable::for_graph(graph, &GraphIndex::new(graph), outer, &body_inputs);
        self.record_call_sites(graph, &shapes);
        for node in &mut graph.node {
            let body_inputs = BodyInputs::of(node, &shapes);
            let node_label = format!("{label}/{}", describe(node));
            for attribute in &mut node.attribute {
                let attr_name = attribute.name.clone().unwrap_or_default();
                for sub in attribute.g.iter_mut().chain(attribute.graphs.iter_mut()) {
                    let sub_label = format!("{node_label}.{attr_name}");
                    self.optimize_graph(
                        sub,
                        Some(&shapes),
                        body_inputs.clone(),
                        &sub_label,
                        depth + 1,
                    )?;
                }
            }
        }
        self.report.nonzero_nodes += graph
            .node
            .iter()
            .filter(|n| is_onnx_op(n, "NonZero"))
            .count();
        if self.options.rewrites_nothing() || nonzero_opset_problem(shapes.opset()).is_some() {
            self.report_left(graph, &shapes, label);
            return Ok(());
        }
        // One index for the whole search: each edit updates it (nonzero-rewrite-graph's `indexed`).
        let mut edited = IndexedGraph::new(graph);
        self.report.left.extend(nonzero_rewrite_match::diagnose(
            &View::of(&edited, &shapes),
            label,
        ));
        // Every edit replaces a GatherND, Gather or Transpose with a nonzero-domain node, so there
        // are at most as many edits as nodes; the bound makes termination evident.
        for _ in 0..=edited.graph().node.len() {
            let Some(edit) = nonzero_emit_library::find(&View::of(&edited, &shapes)) else {
                break;
            };
            let mut chain: HashSet<String> = edit.chain.into_iter().collect();
            chain.insert(edited.graph().node[edit.node].output[0].clone());
            let at = edit.node + edit.prelude.len();
            edited.insert(edit.node, edit.prelude);
            let replaced = describe(&edited.replace(at, edit.replacement));
            self.report.rewrites.push(Rewrite {
                kind: edit.kind,
                line: edit.line,
                graph: label.to_string(),
                node: replaced,
                facts: edit.facts,
            });
            // At once, so that the next search sees the readers that are really left.
            self.report.removed_nodes += edited.remove_dead(chain);
        }
        self.report_left(graph, &shapes, label);
        nonzero_rewrite_analysis::readers::account(
            graph,
            label,
            &mut self.report.left,
            &mut self.report.coordinates_used,
        );
        Ok(())
    }

    /// Notes the inputs of every call of a model function in `graph`.
    fn record_call_sites(&mut self, graph: &GraphProto, shapes: &ShapeTable) {
        for node in &graph.node {
            let key = (
                node.domain.clone().unwrap_or_default(),
                node.op_type.clone().unwrap_or_default(),
            );
            if let Some(sites) = self.call_sites.get_mut(&key) {
                sites.push(node.input.iter().map(|i| shapes.get(i)).collect());
            }
        }
    }

    /// Every ONNX NonZero still in `graph`, with the reason it is there; in the
    /// `nonzero_domain` mode, those of proven rank >= 1 move to the `nonzero` domain instead.
    fn report_left(&mut self, graph: &mut GraphProto, shapes: &ShapeTable, label: &str) {
        let index = GraphIndex::new(graph);
        let mut moves = vec![];
        for (i, node) in graph.node.iter().enumerate() {
            if !is_onnx_op(node, "NonZero") || node.input.len() != 1 || node.output.len() != 1 {
                continue;
            }
            let (mask, out) = (&node.input[0], &node.output[0]);
            let view = View {
                graph,
                index: &index,
                shapes,
            };
            let rank = mask_rank(&view, mask, out);
            let shape = format!("input {mask} {}", shapes.get(mask).shape_text());
            let (reason, detail) = if let Some(problem) = nonzero_opset_problem(shapes.opset()) {
                (Reason::UnknownOpset, problem)
            } else if self.options.rewrites_nothing() {
                (
                    Reason::Provider,
                    self.options.provider.why_nothing().to_string(),
                )
            } else if let Some(conflict) = shapes.conflict(mask) {
                (Reason::Conflict, format!("{mask}: {conflict}"))
            } else if rank.is_none() && shapes.get(mask).rank() == Some(0) {
                (Reason::ScalarInput, shape)
            } else if rank.is_none() {
                let origin = unknown_origin(graph, &index, shapes, mask);
                (Reason::UnknownRank, format!("{shape}; {origin}"))
            } else {
                let readers = readers_text(graph, &index, out);
                if self.options.nonzero_domain {
                    moves.push(i);
                    continue;
                }
                let transposed = index.readers_of(out).iter().any(|&(r, _)| {
                    let reader = &graph.node[r];
                    is_onnx_op(reader, "Transpose")
                        && matches!(
                            ints_attr(reader, "perm")
                                .ok()
                                .map(|p| p.as_deref() == Some(&[1, 0]) || p.is_none()),
                            Some(true)
                        )
                });
                let reason = if transposed {
                    Reason::OtherReaders
                } else {
                    Reason::NotTransposed
                };
                (reason, format!("{shape}; output {out} read by {readers}"))
            };
            self.report.left.push(Left {
                graph: label.to_string(),
                node: describe(node),
                op: "NonZero".to_string(),
                reason,
                detail,
            });
        }
        for i in moves {
            graph.node[i].domain = Some(DOMAIN.to_string());
            self.report.moved_to_domain += 1;
        }
    }
}

/// Where an unknown rank comes from: the first node upstream of `name` whose output rank the
/// inference could not prove although every input's is known (an op it does not cover).
fn unknown_origin(
    graph: &GraphProto,
    index: &GraphIndex,
    shapes: &ShapeTable,
    name: &str,
) -> String {
    let mut seen = HashSet::new();
    let mut todo = vec![name.to_string()];
    while let Some(tensor) = todo.pop() {
        if !seen.insert(tensor.clone()) || seen.len() > 10_000 {
            continue;
        }
        let Some(node) = index.producer_of(graph, &tensor) else {
            return format!("{tensor} is an input or outer value of unknown rank");
        };
        let unknown: Vec<&String> = node
            .input
            .iter()
            .filter(|i| !i.is_empty() && shapes.get(i).rank().is_none())
            .collect();
        if unknown.is_empty() {
            let op = node.op_type.as_deref().unwrap_or("?");
            return format!("the inference stops at {op} {}", describe(node));
        }
        todo.extend(unknown.into_iter().cloned());
    }
    "origin not found".to_string()
}

/// The readers of `name`, for reports: op types, a graph output, a subgraph.
fn readers_text(graph: &GraphProto, index: &GraphIndex, name: &str) -> String {
    let mut parts: Vec<String> = index
        .readers_of(name)
        .iter()
        .map(|&(r, slot)| {
            let op = graph.node[r].op_type.clone().unwrap_or_default();
            if slot == usize::MAX {
                format!("a subgraph of {op}")
            } else {
                op
            }
        })
        .collect();
    if index.graph_outputs.contains(name) {
        parts.push("the graph's outputs".to_string());
    }
    if parts.is_empty() {
        "nothing".to_string()
    } else {
        parts.join(", ")
    }
}
