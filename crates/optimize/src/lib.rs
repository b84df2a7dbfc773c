//! `nonzero optimize`: rewrites the NonZero neighbourhoods that PyTorch's exporters emit into the
//! `nonzero`-domain ops of `libnonzero_ort` (ArgWhere, BooleanMask). See docs/optimize.md.
//!
//! The rewriter only rewrites what the graph proves equivalent (attributes, declared or inferred
//! shapes and types, readers of every tensor), recurses into If/Loop/Scan bodies, removes the
//! nodes its rewrites made dead, and returns the input bytes untouched when nothing matched.

mod graph;
mod patterns;
mod rewrite;
mod shapes;
mod shapes_index;
mod trace;

#[cfg(test)]
mod tests;

pub use patterns::{Kind, DOMAIN, DOMAIN_VERSION};

use nonzero_proto::onnx::{ModelProto, OperatorSetIdProto};
use nonzero_proto::Message;
use std::fmt;

/// Subgraphs nested deeper than this are refused (prost's decoder already stops at 100 levels
/// of messages; real models nest a few).
pub const MAX_SUBGRAPH_DEPTH: usize = 32;

/// One applied rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    pub kind: Kind,
    /// One line for people: what was replaced by what.
    pub line: String,
}

/// What [`optimize`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub rewrites: Vec<Rewrite>,
    /// Nodes removed because the rewrites left them unread.
    pub removed_nodes: usize,
    /// Graphs visited (the main graph and every subgraph).
    pub graphs: usize,
}

impl Report {
    /// How many rewrites of `kind`.
    pub fn count(&self, kind: Kind) -> usize {
        self.rewrites.iter().filter(|r| r.kind == kind).count()
    }

    /// One line: rewrites per kind, nodes removed, graphs visited.
    pub fn summary(&self) -> String {
        if self.rewrites.is_empty() {
            return format!(
                "nothing to rewrite ({} graph{} searched); model unchanged",
                self.graphs,
                if self.graphs == 1 { "" } else { "s" }
            );
        }
        let kinds = [
            Kind::BooleanMaskGatherNd,
            Kind::BooleanMaskGather,
            Kind::ArgWhere,
        ];
        let parts: Vec<String> = kinds
            .iter()
            .filter(|&&k| self.count(k) > 0)
            .map(|&k| format!("{} {}", self.count(k), k.label()))
            .collect();
        format!(
            "{} rewrite{}: {}; {} node{} removed; {} graph{} searched",
            self.rewrites.len(),
            if self.rewrites.len() == 1 { "" } else { "s" },
            parts.join(", "),
            self.removed_nodes,
            if self.removed_nodes == 1 { "" } else { "s" },
            self.graphs,
            if self.graphs == 1 { "" } else { "s" }
        )
    }
}

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
            OptimizeError::TooDeep => write!(
                f,
                "subgraphs are nested more than {MAX_SUBGRAPH_DEPTH} levels deep; refused"
            ),
        }
    }
}

impl std::error::Error for OptimizeError {}

/// Rewrites a serialized ONNX model. Returns the new model's bytes (the input bytes themselves
/// when nothing was rewritten) and what was done.
pub fn optimize(model_bytes: &[u8]) -> Result<(Vec<u8>, Report), OptimizeError> {
    let mut model =
        ModelProto::decode(model_bytes).map_err(|e| OptimizeError::NotAModel(e.to_string()))?;
    if model.ir_version.is_none() {
        return Err(OptimizeError::Incomplete("ir_version"));
    }
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
    let mut report = Report::default();
    let graph = model
        .graph
        .as_mut()
        .ok_or(OptimizeError::Incomplete("graph"))?;
    rewrite::optimize_graph(graph, None, 0, &mut report)?;
    if report.rewrites.is_empty() {
        return Ok((model_bytes.to_vec(), report));
    }
    if !imported {
        model.opset_import.push(OperatorSetIdProto {
            domain: Some(DOMAIN.to_string()),
            version: Some(DOMAIN_VERSION),
        });
    }
    Ok((model.encode_to_vec(), report))
}
