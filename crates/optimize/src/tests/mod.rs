//! Graph in -> graph out tests, on models built here node by node.

mod bad_input;
mod chains;
mod columns;
mod editing;
mod fallback;
mod functions;
mod guards;
mod inference;
mod inference_ops;
mod loop_bodies;
mod masked_writes;
mod readers;
mod static_bodies;
mod static_bounded_lengths;
mod static_capacities;
mod static_capped_lengths;
mod static_folding;
mod static_fuzz;
mod static_grid_columns;
mod static_grid_writes;
mod static_heads;
mod static_keypoints;
mod static_limits;
mod static_litert;
mod static_mode;
mod static_nms;
mod static_nms_prefix;
mod static_partners;
mod static_prefix;
mod static_reductions;
mod static_row_ops;
mod static_rows;
mod static_unbind;
mod static_whole_split;
mod validity;

use crate::{optimize, Report};
use nonzero_proto::onnx::attribute_proto::AttributeType;
pub use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::tensor_shape_proto::{dimension, Dimension};
use nonzero_proto::onnx::{
    type_proto, AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    TensorShapeProto, TypeProto, ValueInfoProto,
};
use nonzero_proto::Message;

pub fn node(op: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        name: Some(format!("{op}_{}", outputs.first().unwrap_or(&""))),
        op_type: Some(op.into()),
        domain: Some(String::new()),
        attribute: attrs,
        ..Default::default()
    }
}

pub fn ints(name: &str, values: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: values.to_vec(),
        ..Default::default()
    }
}

pub fn int(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(value),
        ..Default::default()
    }
}

pub fn graph_attr(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(g),
        ..Default::default()
    }
}

/// A tensor value info; dims are numbers or symbolic names, `None` for unknown rank.
pub fn value(name: &str, elem: DataType, dims: Option<&[&str]>) -> ValueInfoProto {
    let shape = dims.map(|dims| TensorShapeProto {
        dim: dims
            .iter()
            .map(|d| Dimension {
                value: Some(match d.parse::<i64>() {
                    Ok(v) => dimension::Value::DimValue(v),
                    Err(_) => dimension::Value::DimParam(d.to_string()),
                }),
                ..Default::default()
            })
            .collect(),
    });
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem as i32),
                shape,
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub fn int64s(name: &str, values: &[i64]) -> TensorProto {
    TensorProto {
        dims: vec![values.len() as i64],
        data_type: Some(DataType::Int64 as i32),
        name: Some(name.into()),
        int64_data: values.to_vec(),
        ..Default::default()
    }
}

/// A scalar int64 initializer (no dims).
pub fn scalar(name: &str, value: i64) -> TensorProto {
    TensorProto {
        dims: vec![],
        ..int64s(name, &[value])
    }
}

/// A float tensor of `dims` (empty: a scalar).
pub fn float_tensor(name: &str, dims: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        dims: dims.to_vec(),
        data_type: Some(DataType::Float as i32),
        name: Some(name.into()),
        float_data: values.to_vec(),
        ..Default::default()
    }
}

pub fn graph(
    nodes: Vec<NodeProto>,
    inputs: Vec<ValueInfoProto>,
    outputs: &[&str],
    initializers: Vec<TensorProto>,
) -> GraphProto {
    GraphProto {
        node: nodes,
        name: Some("g".into()),
        initializer: initializers,
        input: inputs,
        output: outputs
            .iter()
            .map(|o| value(o, DataType::Undefined, None))
            .collect(),
        ..Default::default()
    }
}

pub fn model(g: GraphProto, opset: i64) -> Vec<u8> {
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opset),
        }],
        graph: Some(g),
        ..Default::default()
    }
    .encode_to_vec()
}

/// Optimizes and returns the decoded result and report.
pub fn run(bytes: &[u8]) -> (ModelProto, Report) {
    let (out, report) = optimize(bytes).expect("optimize");
    (
        ModelProto::decode(out.as_slice()).expect("re-parse"),
        report,
    )
}

/// `op(inputs)->outputs` per node, domain-qualified for non-ONNX ops.
pub fn listing(g: &GraphProto) -> Vec<String> {
    g.node
        .iter()
        .map(|n| {
            let domain = n.domain.as_deref().unwrap_or("");
            let op = n.op_type.as_deref().unwrap_or("");
            let qualified = if domain.is_empty() {
                op.to_string()
            } else {
                format!("{domain}.{op}")
            };
            format!("{qualified}({})->{}", n.input.join(","), n.output.join(","))
        })
        .collect()
}

/// True when a rewrite is the guarded form (sizes compared at run time: patterns/guarded.rs),
/// and the graph's last node is the If that writes `output`.
pub fn guarded(m: &ModelProto, report: &Report, output: &str) -> bool {
    let checked = report.rewrites.iter().any(|r| {
        r.facts
            .iter()
            .any(|f| matches!(f, crate::report::Fact::CheckedAtRunTime { .. }))
    });
    let last = main_listing(m).pop().unwrap_or_default();
    checked && last.starts_with("If(") && last.ends_with(&format!("->{output}"))
}

/// The kinds of the static rewrites a report lists, in order.
pub fn rewrite_kinds(report: &Report) -> Vec<&str> {
    let rewrites = &report.static_mode.as_ref().expect("static mode").rewrites;
    rewrites.iter().map(|(k, _)| k.as_str()).collect()
}

/// The main graph's output names, in order.
pub fn output_names(m: &ModelProto) -> Vec<&str> {
    let g = m.graph.as_ref().expect("a graph");
    g.output.iter().filter_map(|o| o.name.as_deref()).collect()
}

pub fn main_listing(m: &ModelProto) -> Vec<String> {
    listing(m.graph.as_ref().unwrap())
}

/// Static-mode options with these input shapes.
/// The static-mode refusal of `bytes` under `options` (a test fails on anything else).
pub fn static_error(bytes: &[u8], options: &crate::Options) -> String {
    match crate::optimize_with(bytes, options) {
        Err(crate::OptimizeError::Static(why)) => why,
        other => panic!("expected a static-mode error, got {other:?}"),
    }
}

pub fn static_options(shapes: &[(&str, &[i64])]) -> crate::Options {
    crate::Options {
        static_shapes: true,
        input_shapes: shapes
            .iter()
            .map(|(n, d)| (n.to_string(), d.to_vec()))
            .collect(),
        ..crate::Options::default()
    }
}

/// Every op of `g` and its bodies, and every tensor they write (asserted written once).
pub fn ops_and_outputs(
    g: &GraphProto,
    ops: &mut Vec<String>,
    written: &mut std::collections::HashSet<String>,
) {
    for n in &g.node {
        ops.push(n.op_type.clone().unwrap_or_default());
        for o in n.output.iter().filter(|o| !o.is_empty()) {
            assert!(written.insert(o.clone()), "{o} is written twice");
        }
        for a in &n.attribute {
            for b in a.g.iter().chain(&a.graphs) {
                ops_and_outputs(b, ops, written);
            }
        }
    }
}
