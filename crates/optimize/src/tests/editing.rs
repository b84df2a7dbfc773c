//! The kept index (nonzero-rewrite-graph's `indexed`) and the streamed output (crate::output) against the slow,
//! obvious forms they replace: an index rebuilt after each edit, dead-node removal in rounds
//! over the whole graph, and `encode_to_vec`.

use super::{graph_attr, node};
use crate::graph::GraphIndex;
use crate::output::Optimized;
use nonzero_proto::onnx::{GraphProto, ModelProto, StringStringEntryProto, TensorProto};
use nonzero_proto::onnx::{OperatorSetIdProto, ValueInfoProto};
use nonzero_proto::{Bytes, Message};
use nonzero_rewrite_graph::indexed::IndexedGraph;
use std::collections::HashSet;

/// Dead-node removal as it was: rounds over the whole graph, the index rebuilt each round.
fn remove_dead_in_rounds(graph: &mut GraphProto, mut candidates: HashSet<String>) -> usize {
    let (mut removed_outputs, mut removed_inputs) = (HashSet::new(), HashSet::new());
    let before = graph.node.len();
    loop {
        let index = GraphIndex::new(graph);
        let dead: Vec<bool> = graph
            .node
            .iter()
            .map(|n| {
                !n.output.is_empty()
                    && n.output.iter().any(|o| candidates.contains(o))
                    && n.output.iter().all(|o| o.is_empty() || index.unused(o))
            })
            .collect();
        if !dead.contains(&true) {
            break;
        }
        for (n, _) in graph.node.iter().zip(&dead).filter(|(_, &d)| d) {
            removed_outputs.extend(n.output.iter().cloned());
            removed_inputs.extend(n.input.iter().cloned());
            candidates.extend(n.input.iter().cloned());
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

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A random DAG: nodes read earlier tensors, initializers or "" (an omitted input), some
/// outputs are "" or graph outputs, some nodes have a subgraph reading an outer tensor.
fn random_graph(rng: &mut Rng) -> GraphProto {
    let mut names: Vec<String> = vec!["w0".into(), "w1".into(), "x".into()];
    let mut graph = GraphProto {
        initializer: ["w0", "w1", "x"]
            .iter()
            .map(|n| TensorProto {
                name: Some(n.to_string()),
                ..Default::default()
            })
            .collect(),
        input: vec![ValueInfoProto {
            name: Some("x".into()),
            ..Default::default()
        }],
        ..Default::default()
    };
    for i in 0..rng.below(24) + 2 {
        let inputs: Vec<String> = (0..rng.below(3) + 1)
            .map(|_| match rng.below(8) {
                0 => String::new(),
                _ => names[rng.below(names.len())].clone(),
            })
            .collect();
        let outputs: Vec<String> = (0..rng.below(3) + 1)
            .map(|k| match rng.below(6) {
                0 => String::new(),
                _ => format!("t{i}_{k}"),
            })
            .collect();
        let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let outputs_ref: Vec<&str> = outputs.iter().map(String::as_str).collect();
        let mut n = node("Op", &inputs, &outputs_ref, vec![]);
        if rng.below(6) == 0 {
            let inner = names[rng.below(names.len())].clone();
            let body = GraphProto {
                node: vec![node("Identity", &[&inner], &["inner"], vec![])],
                ..Default::default()
            };
            n.attribute.push(graph_attr("body", body));
        }
        for o in outputs.iter().filter(|o| !o.is_empty()) {
            graph.value_info.push(ValueInfoProto {
                name: Some(o.clone()),
                ..Default::default()
            });
            if rng.below(8) == 0 {
                graph.output.push(ValueInfoProto {
                    name: Some(o.clone()),
                    ..Default::default()
                });
            }
        }
        names.extend(outputs.into_iter().filter(|o| !o.is_empty()));
        graph.node.push(n);
    }
    graph
}

#[test]
fn work_list_removes_what_rounds_remove() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..2000 {
        let graph = random_graph(&mut rng);
        let mut names: Vec<String> = graph.node.iter().flat_map(|n| n.output.clone()).collect();
        names.extend(["w1".to_string(), "x".to_string(), String::new()]);
        let candidates: HashSet<String> = (0..rng.below(4))
            .map(|_| names[rng.below(names.len())].clone())
            .collect();
        let (mut want, mut got) = (graph.clone(), graph);
        let want_count = remove_dead_in_rounds(&mut want, candidates.clone());
        // IndexedGraph checks its index against a rebuilt one after each edit in tests.
        let got_count = IndexedGraph::new(&mut got).remove_dead(candidates);
        assert_eq!((got_count, &got), (want_count, &want));
    }
}

#[test]
fn replaced_and_inserted_nodes_are_indexed() {
    let mut rng = Rng(7);
    for _ in 0..300 {
        let mut graph = random_graph(&mut rng);
        let mut edited = IndexedGraph::new(&mut graph);
        let n = edited.graph().node.len();
        let at = rng.below(n);
        let old = edited.graph().node[at].clone();
        let mut new = node("New", &["x", "w0", ""], &[], vec![]);
        new.output = old.output.clone();
        assert_eq!(edited.replace(at, new), old);
        let extra = vec![
            node("Extra", &["x"], &["e1"], vec![]),
            node("Extra", &["e1", "w1"], &["e2"], vec![]),
        ];
        edited.insert(rng.below(n + 1), extra);
        edited.remove_dead(["e2".to_string()].into());
        assert!(!edited
            .graph()
            .node
            .iter()
            .any(|n| n.op_type.as_deref() == Some("Extra")));
    }
}

/// A tensor with fields on both sides of `raw_data` (field 9).
fn tensor(name: &str, bytes: usize) -> TensorProto {
    TensorProto {
        dims: vec![bytes as i64],
        data_type: Some(2),
        name: Some(name.into()),
        raw_data: Some(Bytes::from(
            (0..bytes).map(|i| i as u8).collect::<Vec<u8>>(),
        )),
        doc_string: Some(format!("{name} doc")),
        metadata_props: vec![StringStringEntryProto {
            key: Some("k".into()),
            value: Some("v".into()),
        }],
        ..Default::default()
    }
}

#[test]
fn streamed_model_equals_its_encoding() {
    let graph = GraphProto {
        node: vec![node("ReduceSum", &["big"], &["y"], vec![])],
        name: Some("g".into()),
        initializer: vec![
            tensor("small", 10),
            tensor("big", 3 << 20),
            tensor("b2", 1 << 20),
        ],
        doc_string: Some("after the initializers".into()),
        output: vec![ValueInfoProto {
            name: Some("y".into()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let model = ModelProto {
        ir_version: Some(8),
        producer_name: Some("test".into()),
        graph: Some(graph),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        ..Default::default()
    };
    for model in [
        model.clone(),
        ModelProto {
            graph: None,
            ..model
        },
    ] {
        let want = model.encode_to_vec();
        let mut got = vec![];
        Optimized::model(model).write_to(&mut got).unwrap();
        assert!(got == want, "streamed bytes differ from encode_to_vec");
    }
}
