//! The rewriter's library target: each proven chain becomes one of the library's ops (domain
//! `nonzero`), and the model gains their standard-op bodies as fallback functions
//! ([`fallback`]). One file per rewrite: each takes the first match in a graph and writes the
//! edit; the driver applies it and looks again.
//!
//! Architecture invariant: this target knows no other target. It reads the matches and proofs
//! of nonzero-rewrite-match, builds nodes, and never applies them to a graph itself
//! (docs/architecture.md).

mod argwhere;
pub mod fallback;
mod gather_columns;
mod gather_nd;
mod guarded;
mod linear_index;
mod mask_axis;
mod masked_write;
mod prelude;

use nonzero_proto::onnx::{AttributeProto, NodeProto};
use nonzero_rewrite_analysis::findings::Fact;
use nonzero_rewrite_graph::library::DOMAIN;

// The lower layers' modules at the paths this crate's modules name them by.
use nonzero_rewrite_analysis::trace;
use nonzero_rewrite_graph::graph;
use trace::View;

/// Which op a rewrite introduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// `NonZero -> Transpose` became `ArgWhere`.
    ArgWhere,
    /// `NonZero -> Transpose -> ... -> GatherND` became `BooleanMask`.
    BooleanMaskGatherNd,
    /// `NonZero -> Transpose -> Split/Slice -> Squeeze -> Gather(axis=0)` became `BooleanMask`.
    BooleanMaskGather,
    /// TorchScript's `Split -> Squeeze` columns, linear index, `Gather(Flatten(x))` and
    /// Reshapes (`x[torch.where(c)]`, c of rank >= 2) became `BooleanMask`.
    BooleanMaskLinear,
    /// `NonZero -> Transpose -> (Squeeze) -> Gather(axis)` of a 1-D bool mask's positions, the
    /// sizes unproven or the axis not 0, became `BooleanMaskAxis`.
    BooleanMaskAxis,
    /// `ScatterND` at a mask's coordinates with one value (`x[m] = v`) became `MaskedFill`.
    MaskedFill,
    /// `ScatterND` at a mask's coordinates with the first nnz values of a list
    /// (`masked_scatter`) became `MaskedScatter`.
    MaskedScatter,
}

impl Kind {
    pub fn op_type(self) -> &'static str {
        match self {
            Kind::ArgWhere => "ArgWhere",
            Kind::BooleanMaskGatherNd | Kind::BooleanMaskGather | Kind::BooleanMaskLinear => {
                "BooleanMask"
            }
            Kind::BooleanMaskAxis => "BooleanMaskAxis",
            Kind::MaskedFill => "MaskedFill",
            Kind::MaskedScatter => "MaskedScatter",
        }
    }

    /// What the report's summary calls the rewrites of this kind.
    pub fn label(self) -> &'static str {
        match self {
            Kind::ArgWhere => "NonZero -> Transpose as ArgWhere",
            Kind::BooleanMaskGatherNd => "GatherND chains as BooleanMask",
            Kind::BooleanMaskGather => "Gather(axis=0) column chains as BooleanMask",
            Kind::BooleanMaskLinear => "linear-index Gather chains as BooleanMask",
            Kind::BooleanMaskAxis => "Gather chains along an axis as BooleanMaskAxis",
            Kind::MaskedFill => "masked writes of one value as MaskedFill",
            Kind::MaskedScatter => "masked writes of values in order as MaskedScatter",
        }
    }
}

/// One rewrite: node `node` is replaced by `replacement` (same outputs).
#[derive(Debug)]
pub struct Edit {
    pub node: usize,
    /// Nodes to insert before the replaced one (the guarded form's size check).
    pub prelude: Vec<NodeProto>,
    pub replacement: NodeProto,
    pub kind: Kind,
    pub line: String,
    /// Outputs of the nodes the replaced one made redundant (removed if nothing else reads them).
    pub chain: Vec<String>,
    /// What the proof relied on.
    pub facts: Vec<Fact>,
}

/// The first rewrite to apply in the graph, if any: a write of a selection's own source first
/// (its gather goes with it), BooleanMask patterns before ArgWhere, so that a chain ending in
/// GatherND/Gather is fused whole rather than cut at the Transpose.
pub fn find(view: &View) -> Option<Edit> {
    masked_write::find_copy(view)
        .or_else(|| gather_nd::find(view))
        .or_else(|| gather_columns::find(view))
        .or_else(|| linear_index::find(view))
        .or_else(|| masked_write::find(view))
        .or_else(|| mask_axis::find(view))
        .or_else(|| argwhere::find(view))
}

/// A node of the `nonzero` domain.
fn nonzero_node(op_type: &str, name: String, inputs: &[&str], output: &str) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.to_string()],
        name: Some(name),
        op_type: Some(op_type.to_string()),
        domain: Some(DOMAIN.to_string()),
        attribute: Vec::<AttributeProto>::new(),
        ..Default::default()
    }
}

/// `NonZero -> Transpose -> Squeeze ...` as text for reports.
fn chain_text(view: &View, chain: &[String]) -> String {
    chain
        .iter()
        .filter_map(|n| view.producer(n))
        .map(|n| n.op_type.clone().unwrap_or_default())
        .collect::<Vec<_>>()
        .join(" -> ")
}
