//! `nonzero optimize`: rewrites the NonZero neighbourhoods that PyTorch's exporters emit into the
//! `nonzero`-domain ops of `libnonzero_ort` (ArgWhere, BooleanMask). See docs/optimize.md.
//!
//! The rewriter only rewrites what the graph proves equivalent (attributes, declared or inferred
//! shapes and types, readers of every tensor), recurses into If/Loop/Scan bodies, removes the
//! nodes its rewrites made dead, and returns the input bytes untouched when nothing matched.
//!
//! This crate is the rewriter's driver and its facade: validation, the passes over graphs,
//! subgraphs and functions, the report, and the public API. The layers below it, one crate each
//! and one way (docs/architecture.md, "The rewriter's layers"): nonzero-rewrite-graph,
//! nonzero-rewrite-analysis, nonzero-rewrite-match, then the targets nonzero-emit-library and
//! nonzero-emit-static.

mod functions;
mod options;
mod output;
mod report;
mod report_json;
mod rewrite;
mod validate;

#[cfg(test)]
mod tests;

pub use nonzero_emit_static::StaticReport;
pub use nonzero_emit_static::Target;
/// How reports name a node (its name, else `<Op -> first output>`): for hosts that match a
/// report's node names against a model.
pub use nonzero_rewrite_graph::graph::describe as node_label;
pub use nonzero_rewrite_graph::library::{DOMAIN, DOMAIN_VERSION};
pub use nonzero_rewrite_graph::{versions, MAX_SUBGRAPH_DEPTH};
pub use options::{Options, Provider};
pub use output::Optimized;
pub use report::{Fact, Kind, Left, Reason, Report, Rewrite, UsedCoordinates};
pub use validate::check_model;

use nonzero_emit_library::fallback;
use nonzero_emit_static::StaticError;
use nonzero_proto::onnx::{ModelProto, OperatorSetIdProto};
use nonzero_proto::{Bytes, Message};
use nonzero_rewrite_analysis::infer;
use nonzero_rewrite_graph::{graph, GraphError};
use std::collections::HashMap;
use std::fmt;

/// Why a model could not be optimized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptimizeError {
    /// The bytes are not a protobuf ModelProto.
    NotAModel(String),
    /// A ModelProto without `ir_version` or graph: not an ONNX model (or a truncated one).
    Incomplete(&'static str),
    /// The model already imports domain `nonzero` at another version.
    DomainVersion(i64),
    /// Subgraphs nested deeper than [`MAX_SUBGRAPH_DEPTH`].
    TooDeep,
    /// The model breaks a rule that ONNX Runtime enforces when loading it (see `validate`): the
    /// message names the graph, the node and the name.
    Invalid(String),
    /// Static mode could not make the model static (inputs without fixed shapes, nodes left
    /// dynamic without `allow_dynamic`, a `<name>_count` that exists); nothing is written.
    Static(String),
}

impl fmt::Display for OptimizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptimizeError::NotAModel(e) => write!(
                f,
                "not an ONNX model: the bytes do not decode as an onnx.ModelProto ({e}); is the file truncated?"
            ),
            OptimizeError::Incomplete(what) => write!(
                f,
                "not an ONNX model: the ModelProto has no {what} (a truncated file, or not a model)"
            ),
            OptimizeError::DomainVersion(v) => write!(
                f,
                "the model imports domain '{DOMAIN}' at version {v}; the rewriter emits version {DOMAIN_VERSION} ops"
            ),
            OptimizeError::Invalid(why) => write!(f, "invalid model, nothing rewritten: {why}"),
            OptimizeError::Static(why) => write!(f, "static mode: {why}"),
            OptimizeError::TooDeep => write!(
                f,
                "subgraphs are nested more than {MAX_SUBGRAPH_DEPTH} levels deep; refused"
            ),
        }
    }
}

impl std::error::Error for OptimizeError {}

impl From<GraphError> for OptimizeError {
    fn from(e: GraphError) -> Self {
        match e {
            GraphError::Incomplete(what) => OptimizeError::Incomplete(what),
            GraphError::TooDeep => OptimizeError::TooDeep,
            GraphError::Invalid(why) => OptimizeError::Invalid(why),
        }
    }
}

impl From<StaticError> for OptimizeError {
    fn from(e: StaticError) -> Self {
        match e {
            StaticError::Graph(e) => e.into(),
            StaticError::Refused(why) => OptimizeError::Static(why),
        }
    }
}

/// Rewrites a serialized ONNX model with the default [`Options`]. Returns the new model's
/// bytes (the input bytes themselves when nothing was rewritten) and what was done.
pub fn optimize(model_bytes: &[u8]) -> Result<(Vec<u8>, Report), OptimizeError> {
    optimize_with(model_bytes, &Options::default())
}

/// Rewrites a serialized ONNX model as `options` say.
pub fn optimize_with(
    model_bytes: &[u8],
    options: &Options,
) -> Result<(Vec<u8>, Report), OptimizeError> {
    let (optimized, report) = optimize_bytes(Bytes::copy_from_slice(model_bytes), options)?;
    Ok((optimized.into_vec(), report))
}

/// [`optimize_with`] on a buffer it may keep: the model's tensors (`raw_data`) are decoded as
/// slices of `model_bytes` instead of copies, and the result is serialized only when asked
/// ([`Optimized::write_to`] streams it; when nothing is rewritten it is `model_bytes` itself).
/// The CLI reads files this way, so a large model takes about its size in memory, not three times.
pub fn optimize_bytes(
    model_bytes: Bytes,
    options: &Options,
) -> Result<(Optimized, Report), OptimizeError> {
    let mut model = ModelProto::decode(model_bytes.clone())
        .map_err(|e| OptimizeError::NotAModel(e.to_string()))?;
    if model.ir_version.is_none() {
        return Err(OptimizeError::Incomplete("ir_version"));
    }
    validate::check_model(&model)?;
    options.check().map_err(OptimizeError::Static)?;
    if options.static_shapes {
        let (summary, tally) = nonzero_emit_static::run(&mut model, &options.static_settings())?;
        let report = Report {
            nonzero_nodes: tally.nonzero_nodes,
            left: tally.left,
            removed_nodes: tally.removed_nodes,
            graphs: tally.graphs,
            static_mode: Some(summary),
            ..Report::default()
        };
        return Ok((Optimized::model(model), report));
    }
    let onnx_opset = versions::onnx_opset(&model.opset_import);
    fallback::check_existing(&model, onnx_opset)?;
    let imported = model
        .opset_import
        .iter()
        .find(|o| o.domain.as_deref() == Some(DOMAIN));
    if let Some(version) = imported.and_then(|o| o.version) {
        if version != DOMAIN_VERSION {
            return Err(OptimizeError::DomainVersion(version));
        }
    }
    let imported = imported.is_some();
    let mut pass = rewrite::Pass {
        options,
        onnx_opset,
        report: Report::default(),
        call_sites: model
            .functions
            .iter()
            .map(|f| (functions::key(f), vec![]))
            .collect::<HashMap<_, _>>(),
    };
    let graph = model
        .graph
        .as_mut()
        .ok_or(OptimizeError::Incomplete("graph"))?;
    pass.optimize_graph(graph, None, infer::BodyInputs::Declared, "main", 0)?;
    functions::optimize_functions(&mut pass, &mut model)?;
    let mut report = pass.report;
    if options.rewrites_nothing() {
        report.note = Some(options.provider.why_nothing().to_string());
    }
    if report.rewrites.is_empty() && report.moved_to_domain == 0 {
        return Ok((Optimized::unchanged(model_bytes), report));
    }
    if !imported {
        model.opset_import.push(OperatorSetIdProto {
            domain: Some(DOMAIN.to_string()),
            version: Some(DOMAIN_VERSION),
        });
    }
    if !options.no_fallback {
        if let Some(opset) = onnx_opset {
            report.fallback_functions = fallback::add_functions(&mut model, opset);
        }
    }
    Ok((Optimized::model(model), report))
}
