//! Models built directly with the prost types.
//!
//! IR version: 7 for opsets up to 12 and 8 for opset 13 and later, which ONNX Runtime 1.17 and
//! 1.31 both accept.

use nonzero_core::DataType;
use nonzero_proto::onnx::{
    attribute_proto::AttributeType, tensor_shape_proto::dimension::Value as DimValue,
    tensor_shape_proto::Dimension, type_proto, AttributeProto, GraphProto, ModelProto, NodeProto,
    OperatorSetIdProto, TensorShapeProto, TypeProto, ValueInfoProto,
};

/// One dimension of a declared shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    /// A fixed size.
    Value(i64),
    /// A symbolic size (`dim_param`).
    Param(String),
}

impl From<i64> for Dim {
    fn from(v: i64) -> Dim {
        Dim::Value(v)
    }
}

impl From<usize> for Dim {
    fn from(v: usize) -> Dim {
        Dim::Value(v as i64)
    }
}

impl From<&str> for Dim {
    fn from(v: &str) -> Dim {
        Dim::Param(v.to_string())
    }
}

/// Fixed dimensions from sizes.
pub fn dims(sizes: &[usize]) -> Vec<Dim> {
    sizes.iter().map(|&s| Dim::from(s)).collect()
}

/// The IR version used for a model importing `opset`.
pub fn ir_version_for(opset: i64) -> i64 {
    if opset >= 13 {
        8
    } else {
        7
    }
}

/// `ValueInfoProto` of a tensor with element type code `elem_type` and `shape`.
pub fn value_info(name: &str, elem_type: i32, shape: &[Dim]) -> ValueInfoProto {
    let dim = shape
        .iter()
        .map(|d| Dimension {
            value: Some(match d {
                Dim::Value(v) => DimValue::DimValue(*v),
                Dim::Param(p) => DimValue::DimParam(p.clone()),
            }),
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem_type),
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `ValueInfoProto` of a tensor of a NonZero data type.
pub fn tensor_info(name: &str, dtype: DataType, shape: &[Dim]) -> ValueInfoProto {
    value_info(name, dtype.onnx_code(), shape)
}

/// An ONNX-domain node.
pub fn node(
    op_type: &str,
    inputs: &[&str],
    outputs: &[&str],
    attributes: Vec<AttributeProto>,
) -> NodeProto {
    NodeProto {
        op_type: Some(op_type.to_string()),
        name: Some(format!(
            "{}_{}",
            op_type.to_lowercase(),
            outputs.first().copied().unwrap_or("")
        )),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        attribute: attributes,
        ..Default::default()
    }
}

/// An `INTS` attribute.
pub fn attr_ints(name: &str, values: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.to_string()),
        r#type: Some(AttributeType::Ints as i32),
        ints: values.to_vec(),
        ..Default::default()
    }
}

/// An `INT` attribute.
pub fn attr_int(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.to_string()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(value),
        ..Default::default()
    }
}

/// A model around `graph` importing the ONNX domain at `opset`.
pub fn model(graph: GraphProto, opset: i64) -> ModelProto {
    ModelProto {
        ir_version: Some(ir_version_for(opset)),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opset),
        }],
        producer_name: Some("nonzero-harness".to_string()),
        producer_version: Some(env!("CARGO_PKG_VERSION").to_string()),
        graph: Some(graph),
        ..Default::default()
    }
}

/// `x -> NonZero -> y`: input `x` of `dtype` and `shape`, output `y` int64 `[rank, "nnz"]`.
pub fn nonzero_model(dtype: DataType, shape: &[Dim], opset: i64) -> ModelProto {
    assert!(
        opset >= dtype.since_opset(),
        "NonZero accepts {dtype} from opset {}",
        dtype.since_opset()
    );
    let graph = GraphProto {
        name: Some(format!("nonzero_{}", dtype.onnx_name())),
        node: vec![node("NonZero", &["x"], &["y"], vec![])],
        input: vec![tensor_info("x", dtype, shape)],
        output: vec![tensor_info(
            "y",
            DataType::Int64,
            &[Dim::from(shape.len()), Dim::from("nnz")],
        )],
        ..Default::default()
    };
    model(graph, opset)
}

/// Masked select: `y = GatherND(x, Transpose(NonZero(mask), perm=[1,0]))`, the values of `x`
/// where `mask` (bool, same shape) is true, in row-major order. Output `y` has shape `["n"]`.
///
/// GatherND exists from opset 11, so this model needs `opset >= 11`.
pub fn masked_select_model(dtype: DataType, shape: &[Dim], opset: i64) -> ModelProto {
    assert!(opset >= 11, "GatherND needs opset 11");
    let graph = GraphProto {
        name: Some("masked_select".to_string()),
        node: vec![
            node("NonZero", &["mask"], &["idx"], vec![]),
            node(
                "Transpose",
                &["idx"],
                &["idx_t"],
                vec![attr_ints("perm", &[1, 0])],
            ),
            node("GatherND", &["x", "idx_t"], &["y"], vec![]),
        ],
        input: vec![
            tensor_info("x", dtype, shape),
            tensor_info("mask", DataType::Bool, shape),
        ],
        output: vec![tensor_info("y", dtype, &[Dim::from("n")])],
        ..Default::default()
    };
    model(graph, opset)
}

/// Detection-score threshold filter: `scores` float `[N]`, `threshold` float scalar;
/// `keep = Greater(scores, threshold)`, `idx = NonZero(keep)` (`[1, k]`), `indices = Squeeze(idx,
/// axes=[0])` (an input from opset 13, an attribute before), `kept = Gather(scores, indices)`.
/// Outputs `indices` int64 `["k"]` and `kept` float `["k"]`. Every op exists at opset 9.
pub fn threshold_filter_model(opset: i64) -> ModelProto {
    assert!(opset >= 9);
    let mut node_list = vec![
        node("Greater", &["scores", "threshold"], &["keep"], vec![]),
        node("NonZero", &["keep"], &["idx"], vec![]),
    ];
    let mut initializer = vec![];
    if opset >= 13 {
        initializer.push(
            crate::Tensor::new(vec![1], crate::TensorData::Int64(vec![0])).to_proto("squeeze_axes"),
        );
        node_list.push(node(
            "Squeeze",
            &["idx", "squeeze_axes"],
            &["indices"],
            vec![],
        ));
    } else {
        node_list.push(node(
            "Squeeze",
            &["idx"],
            &["indices"],
            vec![attr_ints("axes", &[0])],
        ));
    }
    node_list.push(node(
        "Gather",
        &["scores", "indices"],
        &["kept"],
        vec![attr_int("axis", 0)],
    ));
    let graph = GraphProto {
        name: Some("threshold_filter".to_string()),
        node: node_list,
        initializer,
        input: vec![
            tensor_info("scores", DataType::Float32, &[Dim::from("N")]),
            tensor_info("threshold", DataType::Float32, &[]),
        ],
        output: vec![
            tensor_info("indices", DataType::Int64, &[Dim::from("k")]),
            tensor_info("kept", DataType::Float32, &[Dim::from("k")]),
        ],
        ..Default::default()
    };
    model(graph, opset)
}

/// ONNX's backend node test `test_nonzero_example`: one opset-9 NonZero node on a bool `[2, 2]`.
pub fn nonzero_example_model() -> ModelProto {
    let mut m = nonzero_model(DataType::Bool, &dims(&[2, 2]), 9);
    if let Some(g) = m.graph.as_mut() {
        g.name = Some("test_nonzero_example".to_string());
    }
    m
}
