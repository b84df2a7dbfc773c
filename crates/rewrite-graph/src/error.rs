//! Errors of the layers below the driver. They name the model's faults, never a target: a
//! target's own refusals are its own type, and the driver's `OptimizeError` wraps both.

use std::fmt;

/// Subgraphs nested deeper than this are refused (prost's decoder already stops at 100 levels
/// of messages; real models nest a few).
pub const MAX_SUBGRAPH_DEPTH: usize = 32;

/// Why a model cannot be rewritten, found while reading or editing its graphs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GraphError {
    /// A ModelProto without this part (`ir_version`, `graph`): not an ONNX model, or a
    /// truncated one.
    Incomplete(&'static str),
    /// Subgraphs nested deeper than [`MAX_SUBGRAPH_DEPTH`].
    TooDeep,
    /// The model breaks a rule that ONNX Runtime enforces when loading it: the message names
    /// the graph, the node and the name.
    Invalid(String),
}

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GraphError::Incomplete(what) => write!(
                f,
                "not an ONNX model: the ModelProto has no {what} (a truncated file, or not a model)"
            ),
            GraphError::Invalid(why) => write!(f, "invalid model, nothing rewritten: {why}"),
            GraphError::TooDeep => write!(
                f,
                "subgraphs are nested more than {MAX_SUBGRAPH_DEPTH} levels deep; refused"
            ),
        }
    }
}

impl std::error::Error for GraphError {}
