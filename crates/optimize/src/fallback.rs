//! Rewritten models that run without the library: every `nonzero`-domain op the rewriter writes
//! comes with a model-local function (FunctionProto, domain `nonzero`) whose body is standard
//! ONNX ops equal to the op. ONNX Runtime without the library inlines the body; with the
//! library registered, its kernel runs instead (docs/optimize.md, "Without the library").
//!
//! Rules: the function imports the model's own `ai.onnx` opset (no overloads); `ir_version` is
//! raised to 8 (functions need it) and never past what the model had, so ONNX Runtime 1.17 (IR 9
//! at most) still loads it. A `nonzero` function in the input that is not exactly the one this
//! module writes is an error: the rewriter would otherwise stand behind a body it did not check.

use crate::patterns::DOMAIN;
use crate::versions::since_version;
use crate::OptimizeError;
use nonzero_proto::onnx::attribute_proto::AttributeType;
use nonzero_proto::onnx::{
    self as onnx, AttributeProto, FunctionProto, ModelProto, NodeProto, OperatorSetIdProto,
    TensorProto,
};
use std::collections::BTreeSet;

/// The IR version that brought model-local functions.
const FUNCTIONS_IR_VERSION: i64 = 8;

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

/// Refuses a model that defines a `nonzero`-domain function other than the one [`function`]
/// writes for it at the model's opset.
pub fn check_existing(model: &ModelProto, opset: Option<i64>) -> Result<(), OptimizeError> {
    for f in model
        .functions
        .iter()
        .filter(|f| f.domain.as_deref() == Some(DOMAIN))
    {
        let name = f.name.as_deref().unwrap_or("");
        let ours = opset.and_then(|v| function(name, v));
        if ours.as_ref() != Some(f) {
            return Err(OptimizeError::Invalid(format!(
                "the model defines the function {DOMAIN}.{name}, which is not the fallback this rewriter writes for it; the domain '{DOMAIN}' is the library's"
            )));
        }
    }
    Ok(())
}

/// Adds the fallback function of every `nonzero` op the model uses (that it lacks), and raises
/// `ir_version` as the module doc says. Returns how many functions were added.
pub fn add_functions(model: &mut ModelProto, opset: i64) -> usize {
    let mut used = BTreeSet::new();
    if let Some(g) = &model.graph {
        ops_used(&g.node, &mut used, 0);
    }
    for f in model
        .functions
        .iter()
        .filter(|f| f.domain.as_deref() != Some(DOMAIN))
    {
        ops_used(&f.node, &mut used, 0);
    }
    let mut added = 0;
    for op in used {
        let present = model
            .functions
            .iter()
            .any(|f| f.domain.as_deref() == Some(DOMAIN) && f.name.as_deref() == Some(&op));
        if present {
            continue;
        }
        if let Some(f) = function(&op, opset) {
            model.functions.push(f);
            added += 1;
        }
    }
    if added > 0 && model.ir_version.unwrap_or(0) < FUNCTIONS_IR_VERSION {
        model.ir_version = Some(FUNCTIONS_IR_VERSION);
    }
    added
}

/// The `nonzero`-domain op types used by `nodes` and their subgraphs.
fn ops_used(nodes: &[NodeProto], used: &mut BTreeSet<String>, depth: usize) {
    if depth > crate::MAX_SUBGRAPH_DEPTH {
        return;
    }
    for node in nodes {
        if node.domain.as_deref() == Some(DOMAIN) {
            used.insert(node.op_type.clone().unwrap_or_default());
        }
        for a in &node.attribute {
            for g in a.g.iter().chain(a.graphs.iter()) {
                ops_used(&g.node, used, depth + 1);
            }
        }
    }
}
