//! `Gather(data, col, axis=0)` where `col` is the one column of a 1-D bool mask's transposed
//! NonZero (TorchScript: `Split(axis=1) -> Squeeze(1)`; dynamo: `Slice -> Squeeze`) is
//! `BooleanMask(data, mask)` when data's first dimension is provably the mask's: both give
//! `[nnz] + data.shape[1:]`. This is `x[torch.where(m)[0]]` and torchvision's post-processing.

use super::guarded::{fused_or_guarded, Reads};
use super::{Edit, Kind};
use crate::trace::View;
use nonzero_rewrite_match::gathers::column_candidate;

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let traced = column_candidate(view, node)?;
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
