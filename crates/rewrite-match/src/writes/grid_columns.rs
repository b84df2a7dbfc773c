//! Grid writes whose parts are a selection's coordinates ([`super::grid`]): TorchScript's
//! `x[i, :, j, :] = v` for `i, j = m.nonzero().unbind(1)` reshapes each column like a Range and
//! expands it to the grid. Paired (every column on one grid axis) and in order, with each whole
//! axis on a grid axis of its own, the written positions are m's true ones with every position
//! of the whole axes: a Where of m, no coordinates read.

use super::dims_of;
use super::grid::Part;
use crate::infer::Dim;
use crate::trace::{trace_column, View};

/// A selection's coordinates in a grid write: the NonZero's input and where its axes land.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    pub mask: String,
    /// X's axis of each of the mask's axes, in increasing order.
    pub axes: Vec<usize>,
}

/// Column `column` of the coordinates of `nonzero` (its output), whose input is `mask`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Column {
    pub nonzero: String,
    pub mask: String,
    pub column: usize,
}

/// `name` as one column of a selection's coordinates (`[count]`): a position along the grid's
/// last axis, which the count sizes.
pub(super) fn part(view: &View, name: &str) -> Option<Part> {
    let (traced, column) = trace_column(view, name)?;
    let len = match dims_of(view.shapes, name)?.as_slice() {
        [len] => len.clone(),
        _ => return None,
    };
    Some(Part::Position {
        from_end: 0,
        len,
        column: Some(Column {
            nonzero: traced.chain.first()?.clone(),
            mask: traced.mask,
            column,
        }),
    })
}

/// A grid whose parts are a selection's coordinate columns and whole axes of X
/// (`x[i, :, j, :] = v`): every column of one NonZero on one grid axis (so the coordinates stay
/// paired), in order on increasing axes of X where the mask has X's sizes; each whole axis on a
/// grid axis of its own, run over the whole of X's axis; each grid axis owned once. No fixed
/// position.
pub(super) fn with_columns(
    view: &View,
    parts: &[Part],
    grid: &[Dim],
    dims: &[Dim],
) -> Option<(Vec<Option<i64>>, Option<Columns>)> {
    // Each part has the grid's shape and a last axis of 1.
    let rank = grid.len() + 1;
    let mut owned = vec![false; grid.len()];
    let mut selection: Option<(&str, &str, usize)> = None; // (nonzero, mask, grid axis)
    let mut column_axes = vec![];
    for (i, part) in parts.iter().enumerate() {
        let Part::Position {
            from_end,
            len,
            column,
        } = part
        else {
            return None;
        };
        let grid_axis = rank.checked_sub(1 + from_end)?;
        (grid.get(grid_axis)? == len).then_some(())?;
        match column {
            Some(c) => {
                match selection {
                    None => {
                        (!owned[grid_axis]).then_some(())?;
                        owned[grid_axis] = true;
                        selection = Some((&c.nonzero, &c.mask, grid_axis));
                    }
                    Some((nonzero, _, at)) => {
                        (nonzero == c.nonzero && at == grid_axis).then_some(())?
                    }
                }
                (c.column == column_axes.len()).then_some(())?;
                column_axes.push(i);
            }
            None => {
                (*len == dims[i] && !owned[grid_axis]).then_some(())?;
                owned[grid_axis] = true;
            }
        }
    }
    let (_, mask, _) = selection?;
    let mask_dims = dims_of(view.shapes, mask)?;
    let fits = mask_dims.len() == column_axes.len()
        && column_axes
            .iter()
            .zip(&mask_dims)
            .all(|(&a, d)| d == &dims[a]);
    (fits && owned.iter().all(|&o| o)).then_some(())?;
    Some((
        vec![None; parts.len()],
        Some(Columns {
            mask: mask.to_string(),
            axes: column_axes,
        }),
    ))
}
