//! Row-wise work on padded rows (issue 37, item 2): the steps through which a padded tensor's
//! rows stay rows, each at its own position, whatever its padding becomes. The padding then
//! holds what the work made of it (f(0) after an MLP), not the fill: a graph output reached
//! this way is padded again ([`super::Flow::repad`]), and a write is sent to a slot that is
//! dropped ([`super::Flow::scatters`]).

use super::Padded;
use crate::infer::Dim;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// The padded axis's size: the selection's count, a size no other tensor has by chance.
pub(super) fn count_dim(view: &View, name: &str, axis: usize) -> Option<Dim> {
    let dims = view.shapes.get(name).dims?;
    dims.get(axis).filter(|d| d.as_static().is_none()).cloned()
}

/// True when `name` has the padded axis `axis` of rank `rank` with size `count`: a tensor
/// padded by the same selection (only the selection's own tensors have its count's size).
pub(super) fn padded_alike(view: &View, name: &str, axis: usize, rank: usize, count: &Dim) -> bool {
    let dims = view.shapes.get(name).dims;
    dims.is_some_and(|d| d.len() == rank && d.get(axis) == Some(count))
}

/// The output of `node` keeps the padded axis (shifted right by the ranks it adds) with the
/// count's size: an Expand or a broadcast that adds rows to nothing and mixes no rows.
pub(super) fn kept_axis(
    view: &View,
    node: &NodeProto,
    axis: usize,
    rank: usize,
    count: &Dim,
) -> Option<(usize, usize)> {
    let out = view.shapes.get(node.output.first()?).dims?;
    let at = axis + out.len().checked_sub(rank)?;
    (out.get(at) == Some(count)).then_some((at, out.len()))
}

/// MatMul or Gemm with the padded tensor as its rows (slot 0, axis not the contracted one) or
/// as a MatMul's columns (slot 1, its last axis), the other operand fixed: each output row is
/// its own input row's.
pub(super) fn matmul_rows(
    view: &View,
    node: &NodeProto,
    slot: usize,
    axis: usize,
    rank: usize,
    count: &Dim,
) -> Option<(usize, usize)> {
    let op = node.op_type.as_deref()?;
    let others: Vec<&String> = node
        .input
        .iter()
        .enumerate()
        .filter(|(i, n)| *i != slot && !n.is_empty())
        .map(|(_, n)| n)
        .collect();
    // The other operands are fixed: padded alike too would mix padding into real rows.
    if others
        .iter()
        .any(|o| super::static_dims(view.shapes, o).is_none())
    {
        return None;
    }
    match (op, slot) {
        ("Gemm", 0) => {
            let trans_a = crate::graph::int_attr(node, "transA").ok()?.unwrap_or(0);
            (trans_a == 0 && axis == 0 && rank == 2).then_some(())?;
        }
        ("MatMul", 0) => (rank >= 2 && axis + 1 < rank).then_some(())?,
        ("MatMul", 1) => (rank >= 2 && axis + 1 == rank).then_some(())?,
        _ => return None,
    }
    kept_axis(view, node, axis, rank, count)
}

/// What row-wise work does with a padded tensor read by `node` at `slot`.
pub(super) enum Next {
    /// The output is padded in turn (its name is the caller's to set).
    Push(Padded),
    /// A write at the padded coordinates (`indices`) or of padded rows (the updates).
    Write {
        indices: bool,
    },
    Refuse,
    /// Not row-wise work: the other steps decide.
    Other,
}

/// The row-wise steps: Unsqueeze and Reshape of values that keep the rows, Expand that adds
/// none, MatMul and Gemm on rows, a broadcast with a tensor padded alike, and writes.
pub(super) fn row_work(
    view: &View,
    node: &NodeProto,
    op: &str,
    slot: usize,
    t: &Padded,
    count: Option<&Dim>,
) -> Next {
    let next = |axis: usize, rank: usize, coords: bool, spread: bool, dirty: bool| {
        push(axis, rank, coords, spread, dirty, None)
    };
    if let Some(step) = super::index::index_work(view, node, op, slot, t, count) {
        return step;
    }
    if let Some(step) = super::spatial::batch_work(view, node, op, slot, t) {
        return step;
    }
    let or_refuse =
        |kept: Option<(usize, usize)>, coords: bool, spread: bool, dirty: bool| match kept {
            Some((axis, rank)) => next(axis, rank, coords, spread, dirty),
            None => Next::Refuse,
        };
    match op {
        "Unsqueeze" if !t.coords && slot == 0 => or_refuse(
            super::reshape::unsqueezed(view, node, t.axis, t.rank),
            false,
            false,
            t.dirty,
        ),
        "Reshape" if slot == 0 && !t.coords => super::reshape::reshaped(view, node, t, count),
        // Split of values along another axis (a box's coordinates): each part padded alike.
        "Split" if slot == 0 && !t.coords => {
            let axis = crate::graph::int_attr(node, "axis")
                .ok()
                .flatten()
                .unwrap_or(0);
            match crate::infer::axis_in(axis, t.rank) {
                Some(a) if a != t.axis => next(t.axis, t.rank, false, false, t.dirty),
                _ => Next::Refuse,
            }
        }
        // RoiAlign of padded rois and their batch indices (a zero box of batch 0 in the
        // padding): a pooled map per roi.
        "RoiAlign" if matches!(slot, 1 | 2) && !t.coords && t.axis == 0 => {
            next(0, 4, false, false, true)
        }
        // GridSample at padded grid points `[N, H, W, 2]` (along H or W) of a fixed image:
        // each output point is sampled at its own grid point (SuperPoint's descriptors).
        "GridSample" if slot == 1 && !t.coords && t.rank == 4 && matches!(t.axis, 1 | 2) => {
            if super::static_dims(view.shapes, &node.input[0]).is_some() {
                next(t.axis + 1, 4, false, false, true)
            } else {
                Next::Refuse
            }
        }
        // Clip to fixed bounds (scalars, or none): elementwise; f(0) may not be the fill.
        "Clip" if slot == 0 && !t.coords => {
            let fixed = node.input[1..].iter().all(|b| {
                b.is_empty() || super::static_dims(view.shapes, b).is_some_and(|d| d.is_empty())
            });
            if fixed {
                next(t.axis, t.rank, false, false, true)
            } else {
                Next::Refuse
            }
        }
        // Squeeze of other axes (a column of values: `[C, 1]` to `[C]`).
        "Squeeze" if slot == 0 && !t.coords => {
            let axes: Option<Vec<usize>> = view.axes(node, "axes", 1).and_then(|a| {
                a.iter()
                    .map(|&x| crate::infer::axis_in(x, t.rank))
                    .collect()
            });
            match axes {
                Some(axes) if !axes.is_empty() && !axes.contains(&t.axis) => {
                    let before = axes.iter().filter(|&&a| a < t.axis).count();
                    next(t.axis - before, t.rank - axes.len(), false, false, t.dirty)
                }
                _ => Next::Refuse,
            }
        }
        // Softmax along another axis: each row its own (a zero row's is uniform, not zero).
        "Softmax" | "LogSoftmax" if slot == 0 && !t.coords => {
            let axis = crate::graph::int_attr(node, "axis")
                .ok()
                .flatten()
                .unwrap_or(-1);
            match crate::infer::axis_in(axis, t.rank) {
                Some(a) if a != t.axis => next(t.axis, t.rank, false, false, true),
                _ => Next::Refuse,
            }
        }
        // A running sum along another axis (a spline's cumulative bin widths).
        "CumSum" if slot == 0 && !t.coords => {
            let axis = match view
                .shapes
                .values(node.input.get(1).map_or("", String::as_str))
            {
                Some([a]) => a.as_static().and_then(|a| crate::infer::axis_in(a, t.rank)),
                _ => None,
            };
            match axis {
                Some(a) if a != t.axis => next(t.axis, t.rank, false, false, true),
                _ => Next::Refuse,
            }
        }
        // A Slice along other axes (an MLP's `chunk(2, dim=-1)`).
        "Slice" if slot == 0 && !t.coords => {
            let Some(count) = count else {
                return Next::Refuse;
            };
            let bounds_fixed = (1..node.input.len())
                .all(|i| node.input[i].is_empty() || view.shapes.values(&node.input[i]).is_some());
            if !bounds_fixed {
                return Next::Refuse;
            }
            // `x[0:len(x)]` along the padded axis (a split by the count, one part): x itself.
            let along = node.input.get(3).and_then(|a| view.const_ints(a));
            let along = along.is_some_and(|a| {
                a.len() == 1 && crate::infer::axis_in(a[0], t.rank) == Some(t.axis)
            });
            let from_zero = view.const_ints(&node.input[1]).is_some_and(|s| s == [0]);
            let to_count = view.shapes.values(&node.input[2]) == Some(std::slice::from_ref(count));
            if along && from_zero && to_count {
                return next(t.axis, t.rank, false, false, t.dirty);
            }
            or_refuse(
                kept_axis(view, node, t.axis, t.rank, count),
                false,
                false,
                t.dirty,
            )
        }
        "Expand"
            if slot == 0
                && node.input.len() == 2
                && !super::steps::shape_of_self(view, &node.input[1], &t.name) =>
        {
            let Some(count) = count else {
                return Next::Refuse;
            };
            // Coordinates copied along new axes must be one column's (an index_add's indices).
            let one_column = t.rank == 1
                || t.spread
                || (t.rank == 2
                    && view
                        .shapes
                        .get(&t.name)
                        .dims
                        .is_some_and(|d| d[1].as_static() == Some(1)));
            // To its own sizes (TorchScript's index broadcast): the same tensor. (Coordinates of
            // more axes, `[n, 1]`, stay spread below: an index_add's indices.)
            let dims = |name: &str| view.shapes.get(name).dims;
            let same = dims(&t.name).is_some() && dims(&t.name) == dims(&node.output[0]);
            if same && (!t.coords || t.rank == 1) {
                return next(t.axis, t.rank, t.coords, t.spread, t.dirty);
            }
            if t.coords && (t.axis != 0 || !one_column) {
                return Next::Refuse;
            }
            or_refuse(
                kept_axis(view, node, t.axis, t.rank, count),
                t.coords,
                t.coords,
                t.dirty,
            )
        }
        "Gemm" | "MatMul" if !t.coords => {
            let Some(count) = count else {
                return Next::Refuse;
            };
            or_refuse(
                matmul_rows(view, node, slot, t.axis, t.rank, count),
                false,
                false,
                true,
            )
        }
        // A write along another axis whose data, indices and updates are all padded alike
        // (dynamo's select_scatter of `out[0, :n] = v`): each output row is its own rows'.
        "ScatterElements" if !t.coords && scatter_along_other_axis(view, node, t, count) => {
            next(t.axis, t.rank, false, false, true)
        }
        "ScatterElements" | "ScatterND" if t.axis == 0 => scatter_at_rows(op, slot, t),
        // Where of operands padded alike, some broadcast along other axes (a column written
        // into the rows: `x[:, j] = x[:, j] + eps`, a grid write), the rest fixed and constant
        // along the padded axis.
        "Where" if !t.coords && node.input.len() == 3 => {
            let Some(count) = count else {
                return Next::Other;
            };
            let own = view.shapes.get(&t.name).dims;
            let others: Vec<&String> = (0..3)
                .filter(|&j| j != slot)
                .map(|j| &node.input[j])
                .collect();
            let broadcast = others.iter().any(|o| {
                padded_alike(view, o, t.axis, t.rank, count) && view.shapes.get(o).dims != own
            });
            let each = others.iter().all(|o| {
                padded_alike(view, o, t.axis, t.rank, count)
                    || super::steps::operand_row_wise(view, o, t)
            });
            if broadcast && each {
                or_refuse(
                    kept_axis(view, node, t.axis, t.rank, count),
                    false,
                    false,
                    true,
                )
            } else {
                Next::Other
            }
        }
        // Padded alike but broadcast along other axes ([C, 8] * [C, 1]).
        _ if super::steps::BINARY.contains(&op)
            && !t.coords
            && node.input.len() == 2
            && !matches!(op, "Div" | "Pow") =>
        {
            let other = &node.input[1 - slot.min(1)];
            let alike = count.filter(|c| padded_alike(view, other, t.axis, t.rank, c));
            match alike {
                Some(c) if view.shapes.get(other).dims != view.shapes.get(&t.name).dims => {
                    or_refuse(kept_axis(view, node, t.axis, t.rank, c), false, false, true)
                }
                _ => Next::Other,
            }
        }
        _ => Next::Other,
    }
}

/// A ScatterElements along an axis other than the padded one, its data, indices and updates
/// all padded alike.
fn scatter_along_other_axis(
    view: &View,
    node: &NodeProto,
    t: &Padded,
    count: Option<&Dim>,
) -> bool {
    let axis = crate::graph::int_attr(node, "axis")
        .ok()
        .flatten()
        .unwrap_or(0);
    let other_axis = crate::infer::axis_in(axis, t.rank).is_some_and(|a| a != t.axis);
    let alike = count.is_some_and(|c| {
        node.input
            .iter()
            .all(|i| padded_alike(view, i, t.axis, t.rank, c))
    });
    node.input.len() == 3 && other_axis && alike
}

/// A write at the padded coordinates (index_add, index_put): the padding's rows are written to
/// a slot appended to the data, then dropped (scatter.rs).
fn scatter_at_rows(op: &str, slot: usize, t: &Padded) -> Next {
    match slot {
        1 if t.coords
            && (op == "ScatterND" || t.spread || t.rank == 1)
            && (op == "ScatterElements" || t.rank == 2) =>
        {
            Next::Write { indices: true }
        }
        2 if !t.coords => Next::Write { indices: false },
        // Writes into padded rows at other indices (a second selection's, which picks valid
        // rows only; the flow checks they are not this selection's): rows stay rows.
        0 if !t.coords => push(t.axis, t.rank, false, false, t.dirty, None),
        _ => Next::Refuse,
    }
}

/// The padded output of a step (its name is the caller's to set).
pub(super) fn push(
    axis: usize,
    rank: usize,
    coords: bool,
    spread: bool,
    dirty: bool,
    index: Option<i64>,
) -> Next {
    Next::Push(Padded {
        name: String::new(),
        axis,
        rank,
        coords,
        spread,
        dirty,
        index,
        count: vec![],
    })
}
