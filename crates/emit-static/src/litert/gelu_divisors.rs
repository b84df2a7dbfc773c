//! The divisor of an exported GELU, `0.5 * x * (1 + Erf(x / 1.4142135))`, becomes a `[1]`
//! tensor where it is a rank-0 constant (`Div(x, [1.4142135])`).
//!
//! Why: onnx2tf 2.6.9 fuses that chain into LiteRT's GELU builtin only where its Div's divisor
//! is a TensorFlow constant: its ops/Div.py asks the divisor for `.numpy()`, and a rank-0
//! divisor stays the numpy array its scalar path leaves it, while a `[1]` one goes through its
//! broadcast and comes out a TensorFlow constant. Unfused, `tf_converter` writes the Erf as the
//! Flex op FlexErf, which LiteRT does not run: the GELUs of BART, LLaVA's projector and
//! Longformer as TorchScript's exporter writes them, with a rank-0 divisor. `flatbuffer_direct`
//! fuses either. The dynamo exporter's GELU, `x * (0.5 * (1 + Erf(x / 1.4142135)))`, is not the
//! chain onnx2tf looks for whatever the divisor (its Muls in the other order), and stays unfused.
//! Exact: a dividend of rank 1 or more divided by `[d]` is divided by `d`, element by element,
//! into the same shape; a dividend not known to be of rank 1 or more is left as it is.

use crate::scope::{names_in, Scope};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{GraphProto, TensorProto};
use nonzero_rewrite_graph::graph::{is_onnx_op, GraphIndex};
use std::collections::HashSet;

/// √2 as exporters write it (float32): the divisor onnx2tf's GELU fusion looks for.
const SQRT_2: f32 = std::f32::consts::SQRT_2;

/// Gives each such Div (its output read by an Erf alone) a divisor of shape `[1]`; returns how
/// many Divs changed.
pub fn as_one_element(graph: &mut GraphProto, scope: &Scope) -> usize {
    let (index, shapes) = scope.shapes_of(graph);
    let known_ranked = |name: &str| {
        shapes
            .info(name)
            .and_then(|i| i.dims.as_ref())
            .is_some_and(|d| !d.is_empty())
    };
    // Of rank 1 or more: known so, or broadcast from an operand that is (LLaVA's projector
    // adds its bias, `[C]`, to a MatMul whose shape the analysis does not follow).
    let ranked = |name: &str| {
        known_ranked(name)
            || index.producer_of(graph, name).is_some_and(|p| {
                ["Add", "Sub", "Mul", "Div"]
                    .iter()
                    .any(|op| is_onnx_op(p, op))
                    && p.input.iter().any(|i| known_ranked(i))
            })
    };
    let divs: Vec<usize> = (0..graph.node.len())
        .filter(|&at| {
            let node = &graph.node[at];
            let [dividend, divisor] = node.input.as_slice() else {
                return false;
            };
            let [quotient] = node.output.as_slice() else {
                return false;
            };
            let to_erf = match index.readers_of(quotient) {
                [(reader, 0)] => is_onnx_op(&graph.node[*reader], "Erf"),
                _ => false,
            };
            is_onnx_op(node, "Div")
                && to_erf
                && !index.graph_outputs.contains(quotient)
                && ranked(dividend)
                && rank_zero_sqrt_2(graph, &index, divisor)
        })
        .collect();
    let mut names = HashSet::new();
    names_in(graph, &mut names, 0);
    for &at in &divs {
        let base = format!("{}/divisor", graph.node[at].output[0]);
        let name = (0..)
            .map(|i| format!("{base}{i}"))
            .find(|n| !names.contains(n))
            .expect("a free name");
        names.insert(name.clone());
        graph.initializer.push(TensorProto {
            name: Some(name.clone()),
            dims: vec![1],
            data_type: Some(DataType::Float as i32),
            float_data: vec![SQRT_2],
            ..Default::default()
        });
        graph.node[at].input[1] = name;
    }
    divs.len()
}

/// True where `name` is a float32 constant of rank 0 holding √2.
fn rank_zero_sqrt_2(graph: &GraphProto, index: &GraphIndex, name: &str) -> bool {
    index.constant(graph, name).is_some_and(|t| {
        t.dims.is_empty()
            && t.data_type == Some(DataType::Float as i32)
            && index.const_floats(graph, name).as_deref() == Some(&[SQRT_2])
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::infer::BodyInputs;
    use crate::Target;
    use nonzero_proto::onnx::tensor_shape_proto::{dimension, Dimension};
    use nonzero_proto::onnx::type_proto::{self, Value};
    use nonzero_proto::onnx::{NodeProto, TensorShapeProto, TypeProto, ValueInfoProto};

    fn node(op: &str, input: &[&str], output: &str) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            input: input.iter().map(|i| i.to_string()).collect(),
            output: vec![output.into()],
            ..Default::default()
        }
    }

    /// `x` of the given dims, read by a GELU's Div and Erf and by another Div of `d`.
    fn gelu(dims: &[i64], divisor: f32) -> GraphProto {
        let dim = dims.iter().map(|&d| Dimension {
            value: Some(dimension::Value::DimValue(d)),
            ..Default::default()
        });
        GraphProto {
            node: vec![
                node("Div", &["x", "d"], "q"),
                node("Erf", &["q"], "e"),
                node("Div", &["x", "d"], "plain"),
            ],
            input: vec![ValueInfoProto {
                name: Some("x".into()),
                r#type: Some(TypeProto {
                    value: Some(Value::TensorType(type_proto::Tensor {
                        elem_type: Some(DataType::Float as i32),
                        shape: Some(TensorShapeProto { dim: dim.collect() }),
                    })),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            initializer: vec![TensorProto {
                name: Some("d".into()),
                data_type: Some(DataType::Float as i32),
                float_data: vec![divisor],
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn rewritten(mut graph: GraphProto) -> (usize, GraphProto) {
        let (body_inputs, outer_names) = (BodyInputs::Declared, HashSet::new());
        let scope = Scope {
            opset: 17,
            outer: None,
            body_inputs: &body_inputs,
            outer_names: &outer_names,
            label: "main",
            depth: 0,
            target: Target::Litert,
            pad_outputs: false,
        };
        let changed = as_one_element(&mut graph, &scope);
        (changed, graph)
    }

    #[test]
    fn only_a_divisor_of_root_two_before_an_erf_changes() {
        let (changed, graph) = rewritten(gelu(&[2, 3], SQRT_2));
        assert_eq!(changed, 1);
        let divisor = &graph.node[0].input[1];
        let added = graph
            .initializer
            .iter()
            .find(|t| t.name.as_ref() == Some(divisor))
            .expect("the new divisor");
        assert_eq!(
            (added.dims.as_slice(), added.float_data.as_slice()),
            (&[1][..], &[SQRT_2][..])
        );
        // The Div that no Erf reads keeps the rank-0 divisor, which stays.
        assert_eq!(graph.node[2].input[1], "d");
        assert!(graph
            .initializer
            .iter()
            .any(|t| t.name.as_deref() == Some("d")));

        assert_eq!(
            rewritten(gelu(&[2, 3], 1.5)).0,
            0,
            "another divisor is no GELU's"
        );
        // A dividend of unknown shape that adds a `[3]` bias is of rank 1 or more.
        let mut biased = gelu(&[2, 3], SQRT_2);
        biased.input[0].r#type = None;
        biased.node.insert(0, node("Add", &["bias", "x"], "biased"));
        biased.node[1].input[0] = "biased".into();
        let mut bias = biased.initializer[0].clone();
        (bias.name, bias.dims) = (Some("bias".into()), vec![3]);
        bias.float_data = vec![0.0; 3];
        biased.initializer.push(bias);
        assert_eq!(rewritten(biased.clone()).0, 1, "broadcast from the bias");
        biased.initializer.pop();
        assert_eq!(rewritten(biased).0, 0, "the bias's rank unknown");
        assert_eq!(
            rewritten(gelu(&[], SQRT_2)).0,
            0,
            "a rank-0 quotient would become [1]"
        );
    }
}
