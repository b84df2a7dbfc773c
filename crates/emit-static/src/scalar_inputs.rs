//! For `--target rknn` and `--target litert`: each rank-0 graph input is declared `[1]` and
//! reshaped to a scalar as the graph's first node (`x[mask] = v` with a scalar `v`).
//! rknn-toolkit2 2.5.0 builds a rank-0 input as `(1)` anyway, but its simulator's input reader
//! indexes the first axis of the ONNX model's declared shape and fails (IndexError in
//! `get_input_img`), fed a scalar or a `[1]` array alike; onnx2tf 2.6.9's tf_converter gives a
//! rank-0 input the shape_signature `[-1]`, and flatbuffer_direct returns scalars as `[1]`.
//! Declared `[1]`, the input is the `[1]` array those toolchains read. Exact: a Reshape of one
//! element to `[]` is that element. The caller feeds `[1]`; the report says so ([`lines`]).

use crate::lower::rename_reads;
use crate::scope::names_in;
use crate::Target;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::tensor_shape_proto::{dimension, Dimension};
use nonzero_proto::onnx::type_proto::Value;
use nonzero_proto::onnx::{GraphProto, NodeProto, TensorProto};
use std::collections::{HashMap, HashSet};

/// Declares each rank-0 input of `graph` (the main graph) `[1]`, as the module doc says; returns
/// the inputs' names. An input that has an initializer (a default) or is itself a graph output
/// stays as it is.
pub fn declared_as_one(graph: &mut GraphProto) -> Vec<String> {
    let initialized: HashSet<&str> = graph
        .initializer
        .iter()
        .filter_map(|t| t.name.as_deref())
        .collect();
    let outputs: HashSet<&str> = graph
        .output
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    let scalars: Vec<String> = graph
        .input
        .iter()
        .filter(|i| {
            matches!(i.r#type.as_ref().and_then(|t| t.value.as_ref()),
                Some(Value::TensorType(t)) if t.shape.as_ref().is_some_and(|s| s.dim.is_empty()))
        })
        .filter_map(|i| i.name.clone())
        .filter(|n| !initialized.contains(n.as_str()) && !outputs.contains(n.as_str()))
        .collect();
    if scalars.is_empty() {
        return scalars;
    }
    let mut names = HashSet::new();
    names_in(graph, &mut names, 0);
    let mut fresh = |base: String| {
        let name = (0..)
            .map(|i| match i {
                0 => base.clone(),
                i => format!("{base}_{i}"),
            })
            .find(|n| !names.contains(n))
            .expect("a free name");
        names.insert(name.clone());
        name
    };
    let mut renamed = HashMap::new();
    let mut reshapes = vec![];
    for input in &scalars {
        let (scalar, shape) = (
            fresh(format!("{input}/scalar")),
            fresh(format!("{input}/scalar_shape")),
        );
        // An int64 tensor of dims [0]: the shape of a scalar.
        graph.initializer.push(TensorProto {
            name: Some(shape.clone()),
            data_type: Some(DataType::Int64 as i32),
            dims: vec![0],
            ..Default::default()
        });
        reshapes.push(NodeProto {
            op_type: Some("Reshape".into()),
            name: Some(format!("{input}/as_scalar")),
            input: vec![input.clone(), shape],
            output: vec![scalar.clone()],
            ..Default::default()
        });
        renamed.insert(input.clone(), scalar);
    }
    for node in &mut graph.node {
        for read in &mut node.input {
            if let Some(to) = renamed.get(read) {
                *read = to.clone();
            }
        }
    }
    rename_reads(graph, &renamed, 0);
    graph.node.splice(0..0, reshapes);
    for input in &mut graph.input {
        if !input.name.as_ref().is_some_and(|n| renamed.contains_key(n)) {
            continue;
        }
        if let Some(Value::TensorType(t)) = input.r#type.as_mut().and_then(|t| t.value.as_mut()) {
            if let Some(shape) = t.shape.as_mut() {
                shape.dim = vec![Dimension {
                    value: Some(dimension::Value::DimValue(1)),
                    ..Default::default()
                }];
            }
        }
    }
    scalars
}

/// The report's line (kind, line) for each input of [`declared_as_one`] under `target`.
pub fn lines(inputs: Vec<String>, target: Target) -> Vec<(String, String)> {
    let why = match target {
        Target::Rknn => "rknn-toolkit2's simulator cannot read a rank-0 input, and its build declares it (1)",
        _ => "onnx2tf's tf_converter gives a rank-0 input the shape [-1], and LiteRT's scalars are [1]",
    };
    inputs
        .into_iter()
        .map(|input| {
            let line = format!(
                "scalar input: {input} is declared [1] and reshaped to a scalar inside (feed it as [1]): {why}"
            );
            ("one-element-input".to_string(), line)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use nonzero_proto::onnx::{type_proto, TensorShapeProto, TypeProto, ValueInfoProto};

    fn scalar(name: &str) -> ValueInfoProto {
        ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(TypeProto {
                value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                    elem_type: Some(DataType::Float as i32),
                    shape: Some(TensorShapeProto { dim: vec![] }),
                })),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn mul(a: &str, b: &str, out: &str) -> NodeProto {
        NodeProto {
            op_type: Some("Mul".into()),
            input: vec![a.into(), b.into()],
            output: vec![out.into()],
            ..Default::default()
        }
    }

    #[test]
    fn only_plain_rank_0_inputs_are_declared_one_element() {
        let mut graph = GraphProto {
            node: vec![mul("v", "d", "y")],
            // `d` has a default (an initializer), `p` is passed through to an output.
            input: vec![scalar("v"), scalar("d"), scalar("p")],
            initializer: vec![TensorProto {
                name: Some("d".into()),
                data_type: Some(DataType::Float as i32),
                float_data: vec![2.0],
                ..Default::default()
            }],
            output: vec![scalar("y"), scalar("p")],
            ..Default::default()
        };
        assert_eq!(declared_as_one(&mut graph), ["v"]);
        let dims = |i: &ValueInfoProto| match i.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(Value::TensorType(t)) => t.shape.as_ref().map(|s| s.dim.len()),
            _ => None,
        };
        assert_eq!(
            graph.input.iter().map(dims).collect::<Vec<_>>(),
            [Some(1), Some(0), Some(0)]
        );
        let reshape = &graph.node[0];
        assert_eq!(reshape.op_type.as_deref(), Some("Reshape"));
        assert_eq!(reshape.input, ["v", "v/scalar_shape"]);
        assert_eq!(graph.node[1].input, ["v/scalar", "d"]);
        let shape = graph.initializer.last().unwrap();
        assert_eq!(
            (shape.dims.as_slice(), shape.int64_data.len()),
            (&[0][..], 0)
        );
        assert!(
            declared_as_one(&mut graph).is_empty(),
            "nothing rank 0 is left to declare"
        );
    }
}
