//! What the inference knows of a tensor, for [`super::follow`]: its rank, a fixed size, its
//! integer values, and an axis operand normalised.

use crate::trace::View;

/// The sizes of `name`, fixed at every axis but `axis` (1 there).
pub(super) fn other_sizes(view: &View, name: &str, axis: usize) -> Option<Vec<i64>> {
    let dims = view.shapes.info(name)?.dims.as_ref()?;
    let sizes = dims
        .iter()
        .enumerate()
        .map(|(a, d)| if a == axis { Some(1) } else { d.as_static() });
    sizes.collect()
}

/// The integer values of `name`: a constant, or shape arithmetic the inference computes.
pub(super) fn ints(view: &View, name: &str) -> Option<Vec<i64>> {
    view.const_ints(name).or_else(|| {
        view.shapes
            .values(name)?
            .iter()
            .map(|d| d.as_static())
            .collect()
    })
}

/// The rank of `name`, where known.
pub(super) fn rank(view: &View, name: &str) -> Option<usize> {
    view.shapes.info(name)?.rank()
}

/// The size of `name` at `axis`, where fixed.
pub(super) fn size(view: &View, name: &str, axis: usize) -> Option<i64> {
    view.shapes
        .info(name)?
        .dims
        .as_ref()?
        .get(axis)?
        .as_static()
}

/// An axis operand normalised for rank `rank`.
pub(super) fn axis_in(axis: i64, rank: usize) -> Option<usize> {
    usize::try_from(if axis < 0 { axis + rank as i64 } else { axis })
        .ok()
        .filter(|&a| a < rank)
}
