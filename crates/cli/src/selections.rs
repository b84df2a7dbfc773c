//! For `--static --capacity N --check`: which of the original model's outputs each selection
//! (NonZero) feeds, and how long each selection is on a given run, so that the check knows which
//! selections the capacity cut on that run and which outputs were computed from them.

use nonzero_optimize::{node_label, StaticReport};
use nonzero_proto::onnx::{
    type_proto, GraphProto, ModelProto, NodeProto, TypeProto, ValueInfoProto,
};
use std::collections::{BTreeMap, BTreeSet};

/// The original's selections and what they feed.
#[derive(Debug, Clone, Default)]
pub struct Selections {
    /// The output of each NonZero of the main graph (its coordinates, `[rank, count]`), and
    /// the node as `--static`'s report names it.
    pub nonzeros: Vec<(String, String)>,
    /// For each graph output: the selections it is computed from (by their NonZero's output),
    /// and whether it is computed from a NonZero inside an If, Loop or Scan body, whose length
    /// no run shows (counted as cut whenever a capacity is given).
    pub feeds: BTreeMap<String, (BTreeSet<String>, bool)>,
}

fn is_nonzero(node: &NodeProto) -> bool {
    node.op_type.as_deref() == Some("NonZero")
        && matches!(node.domain.as_deref(), None | Some("") | Some("ai.onnx"))
}

/// What `--static` compacted to a fixed capacity (its report's `compacted`): the main graph's
/// NonZeros, and whether any in a body.
#[derive(Debug, Clone, Default)]
pub struct Compacted {
    /// The main graph's compacted NonZeros and the rows each holds.
    pub nodes: BTreeMap<String, i64>,
    pub in_bodies: bool,
}

pub fn compacted(report: &StaticReport) -> Compacted {
    let mut found = Compacted::default();
    for (graph, node, rows) in &report.compacted {
        if graph == "main" {
            found.nodes.insert(node.clone(), *rows);
        } else {
            found.in_bodies = true;
        }
    }
    found
}

fn subgraphs(node: &NodeProto) -> impl Iterator<Item = &GraphProto> {
    node.attribute
        .iter()
        .flat_map(|a| a.g.iter().chain(a.graphs.iter()))
}

/// Every name the nodes of `graph` read, in their bodies too (captured outer names included).
fn reads(graph: &GraphProto, into: &mut BTreeSet<String>) {
    for node in &graph.node {
        into.extend(node.input.iter().filter(|n| !n.is_empty()).cloned());
        for body in subgraphs(node) {
            reads(body, into);
        }
    }
}

fn has_nonzero(graph: &GraphProto) -> bool {
    graph
        .node
        .iter()
        .any(|n| is_nonzero(n) || subgraphs(n).any(has_nonzero))
}

impl Selections {
    /// The selections of `model`'s main graph, followed forward to its outputs.
    pub fn of(model: &ModelProto) -> Selections {
        let Some(graph) = &model.graph else {
            return Selections::default();
        };
        // name -> (selections it is computed from, computed from a body's selection)
        let mut taint: BTreeMap<String, (BTreeSet<String>, bool)> = BTreeMap::new();
        let mut nonzeros = vec![];
        for node in &graph.node {
            if is_nonzero(node) {
                if let Some(out) = node.output.first() {
                    nonzeros.push((out.clone(), node_label(node)));
                    taint.insert(out.clone(), ([out.clone()].into(), false));
                }
            }
        }
        let node_reads: Vec<BTreeSet<String>> = graph
            .node
            .iter()
            .map(|n| {
                let mut names: BTreeSet<String> = n.input.iter().cloned().collect();
                subgraphs(n).for_each(|g| reads(g, &mut names));
                names
            })
            .collect();
        // Nodes may be out of order (ONNX Runtime sorts them): repeat until nothing changes.
        loop {
            let mut changed = false;
            for (node, names) in graph.node.iter().zip(&node_reads) {
                let mut from: (BTreeSet<String>, bool) =
                    (BTreeSet::new(), subgraphs(node).any(has_nonzero));
                for name in names {
                    if let Some((sel, body)) = taint.get(name) {
                        from.0.extend(sel.iter().cloned());
                        from.1 |= *body;
                    }
                }
                if from.0.is_empty() && !from.1 {
                    continue;
                }
                for out in node.output.iter().filter(|o| !o.is_empty()) {
                    let entry = taint.entry(out.clone()).or_default();
                    let before = (entry.0.len(), entry.1);
                    entry.0.extend(from.0.iter().cloned());
                    entry.1 |= from.1;
                    changed |= before != (entry.0.len(), entry.1);
                }
            }
            if !changed {
                break;
            }
        }
        let feeds = graph
            .output
            .iter()
            .filter_map(|o| o.name.clone())
            .map(|name| {
                let from = taint.get(&name).cloned().unwrap_or_default();
                (name, from)
            })
            .collect();
        Selections { nonzeros, feeds }
    }

    /// `model` with each selection that is not a graph output already made one (int64 of
    /// unknown shape), so that a run shows each selection's length; and the names added.
    pub fn probed(&self, model: &ModelProto) -> (ModelProto, Vec<String>) {
        let mut model = model.clone();
        let mut added = vec![];
        if let Some(graph) = model.graph.as_mut() {
            for (name, _) in &self.nonzeros {
                if graph.output.iter().any(|o| o.name.as_deref() == Some(name)) {
                    continue;
                }
                graph.output.push(ValueInfoProto {
                    name: Some(name.clone()),
                    r#type: Some(TypeProto {
                        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                            elem_type: Some(7), // INT64
                            shape: None,
                        })),
                        ..Default::default()
                    }),
                    ..Default::default()
                });
                added.push(name.clone());
            }
        }
        (model, added)
    }

    /// Whether `output`, on a run where the selections `cut` were cut (and, with
    /// `bodies_cut`, those in If, Loop and Scan bodies), is computed from a cut one.
    pub fn computed_from_cut(
        &self,
        output: &str,
        cut: &BTreeSet<&String>,
        bodies_cut: bool,
    ) -> bool {
        self.feeds
            .get(output)
            .is_some_and(|(sel, body)| (*body && bodies_cut) || sel.iter().any(|s| cut.contains(s)))
    }

    /// Whether `output` is computed from exactly one selection of the main graph (not one
    /// nested in another, nor a body's).
    pub fn one_selection(&self, output: &str) -> bool {
        self.feeds
            .get(output)
            .is_some_and(|(sel, body)| !*body && sel.len() == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nonzero_proto::onnx::{AttributeProto, ModelProto};

    fn node(op: &str, inputs: &[&str], output: &str) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.into()],
            ..Default::default()
        }
    }

    fn output(name: &str) -> ValueInfoProto {
        ValueInfoProto {
            name: Some(name.into()),
            ..Default::default()
        }
    }

    #[test]
    fn outputs_know_the_selections_they_are_computed_from() {
        let body = GraphProto {
            node: vec![node("NonZero", &["x"], "inner")],
            output: vec![output("inner")],
            ..Default::default()
        };
        let mut branch = node("If", &["cond"], "from_body");
        branch.attribute.push(AttributeProto {
            name: Some("then_branch".into()),
            g: Some(body),
            ..Default::default()
        });
        // Out of order: the ReduceSum comes before the NonZero it reads through the Transpose.
        let graph = GraphProto {
            node: vec![
                node("ReduceSum", &["t"], "sum"),
                node("NonZero", &["m"], "nz"),
                node("Transpose", &["nz"], "t"),
                branch,
                node("Identity", &["x"], "plain"),
                node("Add", &["sum", "from_body"], "both"),
            ],
            output: ["sum", "from_body", "plain", "both", "nz"]
                .map(output)
                .to_vec(),
            ..Default::default()
        };
        let model = ModelProto {
            graph: Some(graph),
            ..Default::default()
        };
        let s = Selections::of(&model);
        assert_eq!(
            s.nonzeros,
            [("nz".to_string(), "<NonZero -> nz>".to_string())]
        );
        let nz = "nz".to_string();
        let cut: BTreeSet<&String> = [&nz].into();
        let none = BTreeSet::new();
        for (out, from_cut, from_body_only, one) in [
            ("sum", true, false, true),
            ("from_body", false, true, false),
            ("plain", false, false, false),
            ("both", true, true, false),
            ("nz", true, false, true),
        ] {
            assert_eq!(s.computed_from_cut(out, &cut, false), from_cut, "{out}");
            assert_eq!(
                s.computed_from_cut(out, &none, true),
                from_body_only,
                "{out}"
            );
            assert!(!s.computed_from_cut(out, &none, false), "{out}");
            assert_eq!(s.one_selection(out), one, "{out}");
        }
        // The probe makes the NonZero's output a graph output only where it is not one.
        let (_, added) = s.probed(&model);
        assert!(added.is_empty());
    }

    #[test]
    fn the_compacted_nonzeros_are_read_from_the_static_report() {
        let report = |compacted: &[(&str, &str)]| StaticReport {
            compacted: compacted
                .iter()
                .map(|(g, n)| (g.to_string(), n.to_string(), 3))
                .collect(),
            ..StaticReport::default()
        };
        let found = compacted(&report(&[("main", "/NonZero")]));
        assert_eq!(found.nodes, [("/NonZero".to_string(), 3)].into());
        assert!(!found.in_bodies);
        let body = compacted(&report(&[("main/If.then_branch", "a")]));
        assert!(body.in_bodies && body.nodes.is_empty());
        let none = compacted(&report(&[]));
        assert!(none.nodes.is_empty() && !none.in_bodies);
    }
}
