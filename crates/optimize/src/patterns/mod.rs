//! The rewrites, one per file. Each finds its first match in a graph and describes the edit;
//! `crate::rewrite` applies it and looks again.

mod argwhere;
mod gather_columns;
mod gather_nd;
mod guarded;
pub(crate) mod linear_index;
mod mask_axis;
mod masked_write;

pub(crate) use gather_nd::leading_dims_match;

use crate::graph::describe;
use crate::report::{Fact, Left, Reason};
use crate::trace::View;
use nonzero_proto::onnx::{AttributeProto, NodeProto};

/// The domain of the ops the rewriter emits, and its opset version.
pub const DOMAIN: &str = "nonzero";
pub const DOMAIN_VERSION: i64 = 1;

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

/// The first rewrite to apply in the graph, if any: BooleanMask patterns before ArgWhere, so
/// that a chain ending in GatherND/Gather is fused whole rather than cut at the Transpose.
pub fn find(view: &View) -> Option<Edit> {
    gather_nd::find(view)
        .or_else(|| gather_columns::find(view))
        .or_else(|| linear_index::find(view))
        .or_else(|| masked_write::find(view))
        .or_else(|| mask_axis::find(view))
        .or_else(|| argwhere::find(view))
}

/// The gathers after a NonZero chain whose BooleanMask proof fails, with the reason (found
/// before rewriting, while the chain is still whole).
pub fn diagnose(view: &View, graph_label: &str) -> Vec<Left> {
    let mut left = vec![];
    for node in &view.graph.node {
        // The node reported is the one that reads the coordinates as indices.
        let (traced, k, data, reader) = if let Some(t) = gather_nd::candidate(view, node) {
            let k = t.mask_rank;
            (t, k, node.input[0].clone(), node)
        } else if let Some(t) = gather_columns::candidate(view, node) {
            (t, 1, node.input[0].clone(), node)
        } else if let Some(linear) = linear_index::candidate(view, node) {
            let k = linear.traced.mask_rank;
            (linear.traced, k, linear.data, linear.gather)
        } else {
            continue;
        };
        if mask_axis::candidate(view, reader).is_some() {
            continue; // BooleanMaskAxis is the gather itself: nothing to prove
        }
        if let Err((reason, detail)) = gather_nd::leading_dims_match(view, &data, &traced, k) {
            // Unproven sizes alone: the guarded form fuses it (not the linear index's).
            let linear = !std::ptr::eq(reader, node);
            if reason == Reason::SizesNotProven
                && !linear
                && guarded::guardable(view, &data, &traced)
            {
                continue;
            }
            left.push(Left {
                graph: graph_label.to_string(),
                node: describe(reader),
                op: reader.op_type.clone().unwrap_or_default(),
                reason,
                detail,
            });
        }
    }
    left
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
