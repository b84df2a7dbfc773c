//! The library's ops (domain `nonzero`, opset 1), each defined in standard ONNX ops: the
//! model-local function (FunctionProto) whose body equals the op. The library target adds these
//! bodies to what it writes, so that the model runs without the library; the static target
//! lowers the library's ops to them. Both reach them here, below both targets.
//!
//! Rules: the function imports the model's own `ai.onnx` opset (no overloads).

use crate::versions::since_version;
use nonzero_proto::onnx::attribute_proto::AttributeType;
use nonzero_proto::onnx::{
    self as onnx, AttributeProto, FunctionProto, NodeProto, OperatorSetIdProto, TensorProto,
};

/// The domain of the library's ops, and its opset version.
pub const DOMAIN: &str = "nonzero";
pub const DOMAIN_VERSION: i64 = 1;

/// The function for `op` (ArgWhere, BooleanMask, BooleanMaskAxis, NonZero, MaskedFill,
/// MaskedScatter of domain `nonzero`) at `opset`, or `None` where no standard-op body exists at
/// that opset.
pub fn function(op: &str, opset: i64) -> Option<FunctionProto> {
    let node = |op: &str, inputs: &[&str], output: &str, attribute: Vec<AttributeProto>| {
        since_version(op, opset)?;
        Some(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.to_string()],
            op_type: Some(op.to_string()),
            domain: Some(String::new()),
            attribute,
            ..Default::default()
        })
    };
    let perm = || {
        vec![AttributeProto {
            name: Some("perm".into()),
            r#type: Some(AttributeType::Ints as i32),
            ints: vec![1, 0],
            ..Default::default()
        }]
    };
    let (inputs, nodes): (&[&str], Vec<NodeProto>) = match op {
        "NonZero" => (&["X"], vec![node("NonZero", &["X"], "Y", vec![])?]),
        "ArgWhere" => (
            &["X"],
            vec![
                node("NonZero", &["X"], "coordinates", vec![])?,
                node("Transpose", &["coordinates"], "Y", perm())?,
            ],
        ),
        // GatherND exists from opset 11. Below it the rewriter only writes BooleanMask for a
        // 1-D mask (its GatherND pattern cannot match), where Compress along axis 0 is the same.
        "BooleanMask" if since_version("GatherND", opset).is_some() => (
            &["X", "M"],
            vec![
                node("NonZero", &["M"], "coordinates", vec![])?,
                node("Transpose", &["coordinates"], "indices", perm())?,
                node("GatherND", &["X", "indices"], "Y", vec![])?,
            ],
        ),
        "BooleanMask" => (
            &["X", "M"],
            vec![node(
                "Compress",
                &["X", "M"],
                "Y",
                vec![AttributeProto {
                    name: Some("axis".into()),
                    r#type: Some(AttributeType::Int as i32),
                    i: Some(0),
                    ..Default::default()
                }],
            )?],
        ),
        // The gather it stands for, along the caller's `axis` (absent: 0, as for both), its
        // positions taken as tf2onnx takes them, which `--static` also knows.
        "BooleanMaskAxis" => {
            let squeeze = if since_version("Squeeze", opset)? >= 13 {
                vec![
                    node("Constant", &[], "one", int64s(&[1]))?,
                    node("Squeeze", &["indices", "one"], "positions", vec![])?,
                ]
            } else {
                vec![node(
                    "Squeeze",
                    &["indices"],
                    "positions",
                    ints("axes", &[1]),
                )?]
            };
            let mut nodes = vec![
                node("NonZero", &["M"], "coordinates", vec![])?,
                node("Transpose", &["coordinates"], "indices", perm())?,
            ];
            nodes.extend(squeeze);
            nodes.push(node("Gather", &["X", "positions"], "Y", vec![axis_ref()])?);
            (&["X", "M"], nodes)
        }
        // Where broadcasts V to X's shape, as MaskedFill does.
        "MaskedFill" => (
            &["X", "M", "V"],
            vec![node("Where", &["M", "V", "X"], "Y", vec![])?],
        ),
        // The first nnz values of S, written at M's coordinates (ScatterND and GatherND both
        // came at opset 11). A short S gives ScatterND too few updates: it fails as the op does.
        "MaskedScatter" if since_version("ScatterND", opset).is_some() => (
            &["X", "M", "S"],
            vec![
                node("NonZero", &["M"], "coordinates", vec![])?,
                node("Transpose", &["coordinates"], "indices", perm())?,
                node("Shape", &["indices"], "indices_shape", vec![])?,
                node("Constant", &[], "zero", int64s(&[0]))?,
                node("Constant", &[], "one", int64s(&[1]))?,
                node("Constant", &[], "flat", int64s(&[-1]))?,
                node("Slice", &["indices_shape", "zero", "one"], "count", vec![])?,
                node("Reshape", &["S", "flat"], "source", vec![])?,
                node("Slice", &["source", "zero", "count"], "updates", vec![])?,
                node("ScatterND", &["X", "indices", "updates"], "Y", vec![])?,
            ],
        ),
        _ => return None,
    };
    let attribute = if op == "BooleanMaskAxis" {
        vec!["axis".to_string()]
    } else {
        vec![]
    };
    Some(FunctionProto {
        name: Some(op.to_string()),
        attribute,
        domain: Some(DOMAIN.to_string()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec!["Y".to_string()],
        node: nodes,
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(opset),
        }],
        doc_string: Some(format!(
            "nonzero.{op} in standard ONNX ops, for hosts without libnonzero_ort (written by nonzero optimize)"
        )),
        ..Default::default()
    })
}

/// An ints attribute.
fn ints(name: &str, values: &[i64]) -> Vec<AttributeProto> {
    vec![AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: values.to_vec(),
        ..Default::default()
    }]
}

/// Gather's `axis`, read from the calling node's own `axis`.
fn axis_ref() -> AttributeProto {
    AttributeProto {
        name: Some("axis".into()),
        ref_attr_name: Some("axis".into()),
        r#type: Some(AttributeType::Int as i32),
        ..Default::default()
    }
}

/// A Constant node's `value` attribute: a 1-D int64 tensor.
fn int64s(values: &[i64]) -> Vec<AttributeProto> {
    vec![AttributeProto {
        name: Some("value".into()),
        r#type: Some(AttributeType::Tensor as i32),
        t: Some(TensorProto {
            dims: vec![values.len() as i64],
            data_type: Some(onnx::tensor_proto::DataType::Int64 as i32),
            int64_data: values.to_vec(),
            ..Default::default()
        }),
        ..Default::default()
    }]
}
