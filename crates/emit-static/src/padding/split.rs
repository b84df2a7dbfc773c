//! A Split of padded rows along the padded axis into constant sizes (the loop a trace unrolled
//! for the rows it saw: transformers' Mixtral, `for expert in experts_hit`, traced as a Split of
//! that selection into one row per expert seen). ONNX's Split needs the sizes to add up to the
//! axis, so the original runs only where the count is exactly their sum S: there the first S
//! padded rows are the rows, with no padding among them, and the parts read nothing else. The
//! static form splits the first S rows ([`crate::whole_split`]).

use crate::graph::{int_attr, ints_attr};
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// A Split that the original runs only on exactly `rows` rows of the padded axis `axis`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WholeSplit {
    /// The Split's first output (its node is found by it).
    pub output: String,
    pub rows: i64,
    pub axis: usize,
}

/// `Split(p, sizes, axis)` of the padded `p` (read in slot 0) along its padded axis `axis` of
/// rank `rank`, with constant sizes (the input of opset 13, the attribute before). A Split
/// without sizes (even parts, `num_outputs`) runs on any count and is not this.
pub(super) fn whole(
    view: &View,
    node: &NodeProto,
    op: &str,
    slot: usize,
    axis: usize,
    rank: usize,
) -> Option<WholeSplit> {
    if op != "Split" || slot != 0 || node.output.is_empty() {
        return None;
    }
    let along = int_attr(node, "axis").ok()?.unwrap_or(0);
    (crate::infer::axis_in(along, rank)? == axis).then_some(())?;
    let sizes = match node.input.get(1).filter(|n| !n.is_empty()) {
        Some(sizes) => view.const_ints(sizes)?,
        None => ints_attr(node, "split").ok()??,
    };
    let rows = sizes.iter().try_fold(0i64, |sum, &s| {
        (s >= 0).then(|| sum.checked_add(s)).flatten()
    })?;
    (sizes.len() == node.output.len()).then(|| WholeSplit {
        output: node.output[0].clone(),
        rows,
        axis,
    })
}
