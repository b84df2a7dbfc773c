//! Rewritten models that run without the library: every `nonzero`-domain op the rewriter writes
//! comes with a model-local function (FunctionProto, domain `nonzero`) whose body is standard
//! ONNX ops equal to the op. ONNX Runtime without the library inlines the body; with the
//! library registered, its kernel runs instead (docs/optimize.md, "Without the library").
//!
//! Rules: the function imports the model's own `ai.onnx` opset (no overloads); `ir_version` is
//! raised to 8 (functions need it) and never past what the model had, so ONNX Runtime 1.17 (IR 9
//! at most) still loads it. A `nonzero` function in the input that is not exactly the one this
//! module writes is an error: the rewriter would otherwise stand behind a body it did not check.

use nonzero_proto::onnx::{ModelProto, NodeProto};
use nonzero_rewrite_graph::library::{function, DOMAIN};
use nonzero_rewrite_graph::{GraphError, MAX_SUBGRAPH_DEPTH};
use std::collections::BTreeSet;

/// The IR version that brought model-local functions.
const FUNCTIONS_IR_VERSION: i64 = 8;

/// Refuses a model that defines a `nonzero`-domain function other than the one [`function`]
/// writes for it at the model's opset.
pub fn check_existing(model: &ModelProto, opset: Option<i64>) -> Result<(), GraphError> {
    for f in model
        .functions
        .iter()
        .filter(|f| f.domain.as_deref() == Some(DOMAIN))
    {
        let name = f.name.as_deref().unwrap_or("");
        let ours = opset.and_then(|v| function(name, v));
        if ours.as_ref() != Some(f) {
            return Err(GraphError::Invalid(format!(
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
    if depth > MAX_SUBGRAPH_DEPTH {
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
