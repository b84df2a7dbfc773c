//! `GatherND(data, Transpose(NonZero(mask)), batch_dims=0)` is `BooleanMask(data, mask)` when
//! the mask is bool, of rank k >= 1, and data's first k dimensions are provably the mask's: both
//! give `[nnz] + data.shape[k:]`, the selected slices in row-major order. The index operand may
//! come through value-preserving steps (see `crate::trace`), which covers the dynamo exporter's
//! 1-D form; a mask made by `Expand(m, Shape(data))` has data's shape by construction.

use super::guarded::{fused_or_guarded, Reads};
use super::{chain_text, nonzero_node, Edit, Kind};
use crate::graph::{describe, fresh_node_name};
use crate::trace::{Traced, View};
use nonzero_proto::onnx::NodeProto;
use nonzero_rewrite_analysis::findings::Fact;
use nonzero_rewrite_match::gathers::gather_nd_candidate;

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let traced = gather_nd_candidate(view, node)?;
        fused_or_guarded(
            view,
            i,
            node,
            traced,
            Kind::BooleanMaskGatherNd,
            Reads::GatherNd,
        )
    })
}

/// The edit that replaces the gather `node` (index `i`, inputs `data, indices`) by
/// `BooleanMask(data, traced.mask)`, once the caller has proved the two equal.
pub fn boolean_mask_edit(
    view: &View,
    i: usize,
    node: &NodeProto,
    traced: Traced,
    kind: Kind,
    facts: Vec<Fact>,
) -> Edit {
    let (data, out) = (&node.input[0], &node.output[0]);
    let name = fresh_node_name(view.graph, &format!("{}_boolean_mask", describe(node)));
    let line = format!(
        "BooleanMask: {} -> {} ({}) became BooleanMask({}, {}) -> {}",
        chain_text(view, &traced.chain),
        node.op_type.as_deref().unwrap_or_default(),
        describe(node),
        data,
        traced.mask,
        out
    );
    Edit {
        node: i,
        prelude: vec![],
        replacement: nonzero_node("BooleanMask", name, &[data, &traced.mask], out),
        kind,
        line,
        chain: traced.chain,
        facts,
    }
}
