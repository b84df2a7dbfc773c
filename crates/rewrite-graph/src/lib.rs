//! The rewriter's lowest layer: the ONNX model as the rewriter reads and edits it.
//!
//! It owns the graph index ([`graph::GraphIndex`]) and the editing of a graph under that index
//! ([`indexed::IndexedGraph`]), the op versions the rewriter knows ([`versions`]), the library's
//! ops with their standard-op bodies ([`library`]), and the errors of a model ([`GraphError`]).
//!
//! Architecture invariant: this crate knows no shape inference, no pattern and no target. It
//! depends on the protobuf types alone; every other rewriter crate depends on it
//! (docs/architecture.md, "The rewriter's layers").

pub mod error;
pub mod forms;
pub mod graph;
pub mod indexed;
pub mod library;
pub mod text;
pub mod versions;

pub use error::{GraphError, MAX_SUBGRAPH_DEPTH};
