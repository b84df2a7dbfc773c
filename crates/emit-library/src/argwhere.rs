//! `NonZero(X) -> Transpose(perm=[1,0])` is `ArgWhere(X)`, for X of rank >= 1 (a scalar's
//! NonZero is `[0 or 1, nnz]` on ONNX Runtime but ArgWhere gives `[nnz, 0]`). Whatever reads the
//! transposed output (an output, Split columns of a 2-D mask, ScatterND) now reads ArgWhere's.

use super::{chain_text, nonzero_node, Edit, Kind};
use crate::graph::{describe, fresh_node_name};
use crate::trace::{trace, View};
use nonzero_rewrite_analysis::findings::Fact;

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        if !view.is_op(node, "Transpose") {
            return None;
        }
        let out = node.output.first()?;
        // Unread: a BooleanMask rewrite consumed it; dead-node removal takes it away.
        if view.index.unused(out) {
            return None;
        }
        let traced = trace(view, out)?;
        let nonzero_out = node.input.first()?;
        let others = view
            .index
            .readers_of(nonzero_out)
            .iter()
            .any(|&(reader, _)| reader != i)
            || view.index.graph_outputs.contains(nonzero_out);
        let name = fresh_node_name(view.graph, &format!("{}_argwhere", describe(node)));
        let line = format!(
            "ArgWhere: {} ({} -> {}) became ArgWhere({}) -> {}{}",
            chain_text(view, &traced.chain),
            describe(view.producer(nonzero_out)?),
            describe(node),
            traced.mask,
            out,
            if others {
                "; NonZero kept for its other readers"
            } else {
                ""
            }
        );
        Some(Edit {
            node: i,
            prelude: vec![],
            replacement: nonzero_node("ArgWhere", name, &[&traced.mask], out),
            kind: Kind::ArgWhere,
            line,
            facts: vec![Fact::Rank {
                tensor: traced.mask.clone(),
                rank: traced.mask_rank,
            }],
            chain: traced.chain,
        })
    })
}
