//! Padded coordinates taken apart: one column of `[C, k]` coordinates, or one row of
//! NonZero's own `[k, C]` layout (dynamo's `unbind`), squeezed to `[C]`; a column unsqueezed
//! back to `[C, 1]`, reshaped to `[-1]`, or given unit axes for an Expand to spread. Each
//! stays coordinates, -1 in the padding.

use super::steps::{column_step, unit_axes, width_one, width_one_row};
use super::Padded;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// True when `op` may take coordinates apart here (then [`step`] decides): `coords_2d` is
/// `[C, k]` coordinates, `rows_2d` NonZero's `[k, C]`, `column` one `[C]` column.
pub(super) fn applies(op: &str, slot: usize, coords_2d: bool, rows_2d: bool, column: bool) -> bool {
    match op {
        "Split" | "Gather" | "Slice" => slot == 0 && (coords_2d || rows_2d),
        "Squeeze" => coords_2d || rows_2d,
        "Unsqueeze" => column,
        "Reshape" => column || coords_2d,
        _ => false,
    }
}

/// The coordinates `node` makes of `t`, or `None` where it is not one of this module's steps.
pub(super) fn step(
    view: &View,
    node: &NodeProto,
    op: &str,
    t: &Padded,
    mask_dims: &[i64],
) -> Option<Vec<Padded>> {
    let make = |name: &str, axis: usize, rank: usize, spread: bool| Padded {
        name: name.to_string(),
        axis,
        rank,
        coords: true,
        spread,
        dirty: t.dirty,
        index: None,
        count: t.count.clone(),
    };
    let out = node.output.first()?;
    let axes = || view.axes(node, "axes", 1);
    let rows_2d = t.rank == 2 && t.axis == 1;
    match op {
        // One column of `[C, k]` (axis 1), or one row of `[k, C]` (axis 0): every output.
        "Split" | "Gather" | "Slice" => {
            let rank = column_step(view, node, op, if rows_2d { 0 } else { 1 })?;
            let axis = if rows_2d { rank - 1 } else { 0 };
            Some(
                node.output
                    .iter()
                    .map(|o| make(o, axis, rank, false))
                    .collect(),
            )
        }
        "Squeeze" if rows_2d => {
            let row = width_one_row(view, &t.name) && matches!(axes()?.as_slice(), [0] | [-2]);
            row.then(|| vec![make(out, 0, 1, false)])
        }
        "Squeeze" => matches!(axes()?.as_slice(), [1] | [-1]).then(|| vec![make(out, 0, 1, false)]),
        "Unsqueeze" => {
            matches!(axes()?.as_slice(), [1] | [-1]).then(|| vec![make(out, 0, 2, false)])
        }
        // Reshape to [-1] of a column, or of `[C, 1]` coordinates (of a 1-D mask, or one column
        // of an NMS's rows): the column itself.
        "Reshape" if node.input.len() == 2 && view.const_ints(&node.input[1]) == Some(vec![-1]) => {
            let column = t.rank == 1 || mask_dims.len() == 1 || width_one(view, &t.name);
            column.then(|| vec![make(out, 0, 1, false)])
        }
        // A column given unit axes (`idx.view(-1, 1, 1, 1)`), spread by an Expand.
        "Reshape" if t.rank == 1 && unit_axes(view, node) => {
            let rank = view.shapes.get(out).rank().unwrap_or(0);
            Some(vec![make(out, 0, rank, true)])
        }
        _ => None,
    }
}
