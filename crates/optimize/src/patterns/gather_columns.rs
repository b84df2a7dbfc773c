//! `Gather(data, col, axis=0)` where `col` is the one column of a 1-D bool mask's transposed
//! NonZero (TorchScript: `Split(axis=1) -> Squeeze(1)`; dynamo: `Slice -> Squeeze`) is
//! `BooleanMask(data, mask)` when data's first dimension is provably the mask's: both give
//! `[nnz] + data.shape[1:]`. This is `x[torch.where(m)[0]]` and torchvision's post-processing.

use super::guarded::{fused_or_guarded, Reads};
use super::{Edit, Kind};
use crate::graph::int_attr;
use crate::trace::{trace, Traced, View};
use nonzero_proto::onnx::NodeProto;

/// The traced mask when `node` is a `Gather(axis=0)` reading the `[nnz]` column.
pub fn candidate(view: &View, node: &NodeProto) -> Option<Traced> {
    let shape_ok = view.is_op(node, "Gather")
        && node.input.len() == 2
        && node.output.len() == 1
        && int_attr(node, "axis").ok()?.unwrap_or(0) == 0;
    if !shape_ok {
        return None;
    }
    trace(view, &node.input[1]).filter(|t| t.squeezed)
}

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let traced = candidate(view, node)?;
        fused_or_guarded(
            view,
            i,
            node,
            traced,
            Kind::BooleanMaskGather,
            Reads::Column,
        )
    })
}
