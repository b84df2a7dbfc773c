//! The rewriter's match layer: each chain an exporter writes around NonZero, found and proven.
//!
//! A match is a plain value: the chain's nodes and tensors ([`crate::trace::Traced`], a
//! [`linear_index::Linear`] chain, a [`writes::MaskedWrite`]), and the proof that a fused form
//! equals it (the facts of [`gathers::leading_dims_match`], or why it fails, which [`diagnose`]
//! reports). Both targets start from these values.
//!
//! Architecture invariant: match never names a target and never edits the graph. It uses the
//! graph and analysis layers; the library target (nonzero-emit-library) and the static target
//! (nonzero-emit-static) read its values (docs/architecture.md).

pub mod gathers;
pub mod linear_index;
pub mod writes;

use crate::graph::describe;
use nonzero_rewrite_analysis::findings::{Left, Reason};
use nonzero_rewrite_analysis::trace::View;

// The lower layers' modules at the paths this crate's modules name them by.
use nonzero_rewrite_analysis::{infer, trace};
use nonzero_rewrite_graph::graph;

/// The gathers after a NonZero chain whose BooleanMask proof fails, with the reason (found
/// before rewriting, while the chain is still whole).
pub fn diagnose(view: &View, graph_label: &str) -> Vec<Left> {
    let mut left = vec![];
    for node in &view.graph.node {
        // The node reported is the one that reads the coordinates as indices.
        let (traced, k, data, reader) = if let Some(t) = gathers::gather_nd_candidate(view, node) {
            let k = t.mask_rank;
            (t, k, node.input[0].clone(), node)
        } else if let Some(t) = gathers::column_candidate(view, node) {
            (t, 1, node.input[0].clone(), node)
        } else if let Some(linear) = linear_index::candidate(view, node) {
            let k = linear.traced.mask_rank;
            (linear.traced, k, linear.data, linear.gather)
        } else {
            continue;
        };
        if gathers::axis_candidate(view, reader).is_some() {
            continue; // BooleanMaskAxis is the gather itself: nothing to prove
        }
        if let Err((reason, detail)) = gathers::leading_dims_match(view, &data, &traced, k) {
            // Unproven sizes alone: the guarded form fuses it (not the linear index's).
            let linear = !std::ptr::eq(reader, node);
            if reason == Reason::SizesNotProven
                && !linear
                && gathers::guardable(view, &data, &traced)
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
