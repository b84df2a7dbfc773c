//! TorchScript's `x[torch.where(c)]` for a k-D c gathers `Flatten(x)` at the linear index
//! `r * W + c` (nonzero-rewrite-match's `linear_index`). A padded -1 there would turn into another
//! valid index, so before compaction the chain becomes what it equals, `GatherND(x, T)` of the
//! transposed coordinates T, whose padding [`super::padding`] proves safe.

use super::emit::Emitter;
use super::scope::Scope;
use crate::graph::describe;
use crate::trace::View;
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_match::{gathers::leading_dims_match, linear_index};

/// The first linear-index selection: the node to replace, and the emitted `GatherND`.
pub fn find(view: &View, graph: &GraphProto, scope: &Scope) -> Option<(usize, Emitter, String)> {
    view.graph.node.iter().enumerate().find_map(|(at, node)| {
        let linear = linear_index::candidate(view, node)?;
        let k = linear.traced.mask_rank;
        leading_dims_match(view, &linear.data, &linear.traced, k).ok()?;
        // The traced chain starts NonZero -> Transpose: its second tensor is T.
        let coordinates = linear.traced.chain.get(1)?;
        let mut e = Emitter::new(graph, scope, &describe(node));
        e.op("GatherND", &[&linear.data, coordinates], vec![]);
        e.finish_as(&node.output[0]);
        let line = format!(
            "the linear index over Flatten({}) ({}) became GatherND({}, {coordinates}) -> {}",
            linear.data,
            describe(linear.gather),
            linear.data,
            node.output[0]
        );
        Some((at, e, line))
    })
}
