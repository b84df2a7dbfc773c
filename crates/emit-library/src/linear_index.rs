//! The TorchScript exporter's `x[torch.where(c)]` for a k-D `c` (k >= 2): it splits the
//! transposed NonZero into its columns, makes the row-major linear index
//! `(c0 * d1 + c1) * d2 + ...` with `d_j = x.shape[j]`, gathers `Flatten(x, axis=k)` at it along
//! axis 0, and reshapes the result to `[nnz] + x.shape[k:]`.
//!
//! That is `BooleanMask(x, c)` when c is bool and x's first k dimensions are provably c's: every
//! linear index is then in range and names the element the coordinates name, in the same order.
//! Hand-written top-k MoE routers read their routing weights this way (`weights[token, slot]`).
//! The chain is found and proven by nonzero-rewrite-match's `linear_index`; this writes it.

use super::gather_nd::boolean_mask_edit;
use super::{Edit, Kind};
use crate::graph::describe;
use crate::trace::View;
use nonzero_rewrite_match::gathers::leading_dims_match;
use nonzero_rewrite_match::linear_index::{candidate, Linear};

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let Linear {
            traced,
            data,
            gather,
        } = candidate(view, node)?;
        let k = traced.mask_rank;
        let line = format!(
            "BooleanMask: NonZero -> Transpose -> {k} columns -> linear index -> Gather({}) of \
             Flatten({data}) -> Reshape ({}) became BooleanMask({data}, {}) -> {}",
            describe(gather),
            describe(node),
            traced.mask,
            node.output[0]
        );
        let facts = leading_dims_match(view, &data, &traced, k).ok()?;
        // `boolean_mask_edit` reads (data, output) from the replaced node's first input and
        // output: hand it the Reshape as it would read `data`, and let dead-node removal take
        // the old operands.
        let mut as_gather = node.clone();
        as_gather.input = vec![data, traced.mask.clone()];
        let mut edit =
            boolean_mask_edit(view, i, &as_gather, traced, Kind::BooleanMaskLinear, facts);
        edit.chain.extend(node.input.iter().cloned());
        edit.line = line;
        Some(edit)
    })
}
