//! Rows of padded data picked at padded indices of the same selection (torchvision's
//! `mask_probs[arange(N), labels]`, as TorchScript writes it: the maps flattened to `[N * K,
//! ...]` and gathered at `labels + arange(N) * K`). Where the original runs, each real index is
//! in `[-count, count)` of the data's rows, which are the same rows here: the static form reads
//! a negative index from the data's count (as the original does) and the padding's indices as
//! 0 ([`crate::index_gather`]). The picked rows are padded like the indices.
//!
//! GatherElements of data and indices padded alike, along another axis (VITS's spline bins,
//! `gather(widths, -1, bin_idx)` on the rows inside the interval): each output row reads its
//! own row only ([`element_pick`]); the padding's indices are read as 0.

use super::{Flow, Padded};
use crate::graph::int_attr;
use crate::trace::View;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;

/// `Gather(data, indices)`: both padded by one selection, the data along the gather's axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowPick {
    pub output: String,
    pub data: String,
    pub indices: String,
}

/// The Gather `node` reading the padded integer values `t` as its (1-D) indices, its data not
/// of fixed sizes: the pick is recorded (its data must be padded along the gather's axis by the
/// same selection: [`Flow::sized_alike`]), and its output, padded like the indices, returned.
pub(super) fn visit(
    view: &View,
    node: &NodeProto,
    slot: usize,
    t: &Padded,
    flow: &mut Flow,
) -> Option<Padded> {
    if let Some(picked) = element_pick(view, node, slot, t, flow) {
        return Some(picked);
    }
    let int64 = view.shapes.get(&t.name).elem_type == Some(DataType::Int64 as i32);
    let plain = slot == 1 && !t.coords && t.index.is_none() && t.rank == 1 && int64;
    if !plain || !view.is_op(node, "Gather") || node.input.len() != 2 || node.output.len() != 1 {
        return None;
    }
    let data = &node.input[0];
    if super::static_dims(view.shapes, data).is_some() {
        return None;
    }
    let rank = view.shapes.get(data).rank()?;
    let axis = int_attr(node, "axis").ok().flatten().unwrap_or(0);
    let axis = crate::infer::axis_in(axis, rank)?;
    flow.sized_alike.push((data.clone(), axis));
    flow.row_picks.push(RowPick {
        output: node.output[0].clone(),
        data: data.clone(),
        indices: t.name.clone(),
    });
    Some(Padded {
        name: node.output[0].clone(),
        axis,
        rank,
        coords: false,
        spread: false,
        dirty: true,
        index: None,
        count: t.count.clone(),
    })
}

impl Flow {
    /// Each pick's output counts as its indices do (the data's visit recorded the data's).
    pub(super) fn finish_picks(&mut self) {
        for pick in self.row_picks.clone() {
            match self.counts.get(&pick.indices).cloned() {
                Some(steps) => self.counts.insert(pick.output, steps),
                None => self.counts.remove(&pick.output),
            };
        }
    }

    /// True when `indices` are the indices of a pick (the data's visit found the Gather).
    pub(super) fn picks_at(&self, indices: &str) -> bool {
        self.row_picks.iter().any(|p| p.indices == indices)
    }
}

/// `GatherElements(data, indices, axis)` reading the padded `t` as its data or its indices, the
/// other padded alike by this selection (checked at the end: [`Flow::sized_alike`]), `axis`
/// not the padded one: the output, padded along the same axis. The indices' padding is read as
/// 0 ([`Flow::element_picks`]).
fn element_pick(
    view: &View,
    node: &NodeProto,
    slot: usize,
    t: &Padded,
    flow: &mut Flow,
) -> Option<Padded> {
    let shaped = slot <= 1 && !t.coords && t.index.is_none() && node.input.len() == 2;
    if !shaped || !view.is_op(node, "GatherElements") || node.output.len() != 1 {
        return None;
    }
    let axis = int_attr(node, "axis").ok().flatten().unwrap_or(0);
    let axis = crate::infer::axis_in(axis, t.rank)?;
    let other = &node.input[1 - slot];
    if axis == t.axis || view.shapes.get(other).rank() != Some(t.rank) {
        return None;
    }
    flow.sized_alike.push((other.clone(), t.axis));
    let output = node.output[0].clone();
    if !flow.element_picks.iter().any(|(o, _, _)| *o == output) {
        flow.element_picks
            .push((output.clone(), node.input[1].clone(), t.axis));
    }
    Some(Padded {
        name: output,
        coords: false,
        spread: false,
        dirty: true,
        index: None,
        ..t.clone()
    })
}
