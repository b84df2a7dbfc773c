//! The rewriter's analysis layer: what the graph proves, without changing it.
//!
//! It owns shape and value inference ([`infer`]: ranks, sizes as symbolic dims, the folding of
//! shape arithmetic, If/Loop/Scan bodies), the tracing of coordinates back to their mask
//! ([`trace`]), the accounting of who reads an ArgWhere's coordinates ([`readers`]), and the
//! plain values the proofs report ([`findings`]).
//!
//! Architecture invariant: analysis never edits the graph and never names a target. It uses the
//! graph layer only; the matches and the targets read what it proves (docs/architecture.md).

pub mod consts;
pub mod dims;
pub mod findings;
pub mod infer;
pub mod readers;
pub mod trace;

// The graph layer's modules at the paths this crate's modules name them by.
use nonzero_rewrite_graph::{graph, library, versions};
