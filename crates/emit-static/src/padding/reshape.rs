//! Reshapes (and Unsqueezes) of padded values that keep the rows: to the same sizes, adding or dropping unit
//! axes around the padded one (`[1, C, 1, n]` to `[1, C, n]`), or, along axis 0, each row's
//! elements regrouped (the count first), or each row split into k rows.

use super::rows::{push, Next};
use super::Padded;
use crate::infer::Dim;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;
use nonzero_rewrite_analysis::dims::checked_numel;

/// `Reshape(t, shape)` of padded values `t` (slot 0): the next padded tensor, or a refusal.
pub(super) fn reshaped(view: &View, node: &NodeProto, t: &Padded, count: Option<&Dim>) -> Next {
    let next = |axis: usize, rank: usize, dirty: bool| push(axis, rank, false, false, dirty, None);
    if view.shapes.get(&node.output[0]).dims == view.shapes.get(&t.name).dims {
        return next(t.axis, t.rank, t.dirty);
    }
    // Unit axes added or dropped around the padded one (`[1, C, 1, n]` to `[1, C, n]`).
    if count.is_some_and(|c| unit_axes_only(view, node, c)) {
        let out = view.shapes.get(&node.output[0]).dims.unwrap_or_default();
        return match out.iter().position(|d| Some(d) == count) {
            Some(axis) => next(axis, out.len(), t.dirty),
            None => Next::Refuse,
        };
    }
    // Rows reshaped as rows: the count first, the rest of each row's elements regrouped.
    let Some(count) = count.filter(|_| t.axis == 0) else {
        return Next::Refuse;
    };
    let rest = |name: &str| -> Option<i64> {
        let dims = view.shapes.get(name).dims?;
        (dims.first() == Some(count)).then_some(())?;
        let row: Option<Vec<i64>> = dims[1..].iter().map(Dim::as_static).collect();
        checked_numel(&row?)
    };
    // Or a shape `[-1, rest...]` whose rest holds a row's elements (`[n, 1]` to `[-1]`).
    let by_shape = node
        .input
        .get(1)
        .and_then(|s| view.const_ints(s))
        .and_then(|s| {
            let rest: Option<Vec<i64>> = s[1..].iter().map(|&d| (d > 0).then_some(d)).collect();
            let rest = checked_numel(&rest?);
            (s.first() == Some(&-1)).then_some((rest?, s.len()))
        });
    match (rest(&t.name), rest(&node.output[0]), by_shape) {
        (Some(a), Some(b), _) if a == b => {
            let rank = view.shapes.get(&node.output[0]).rank().unwrap_or(0);
            next(0, rank, t.dirty)
        }
        (Some(a), _, Some((b, rank))) if a == b => next(0, rank, t.dirty),
        // `[C, k * b] -> [-1, b]`: each row becomes k rows, the padding's last (the
        // scores of every class, flattened: count * k).
        (Some(a), _, Some((b, rank))) if b > 0 && a % b == 0 => match next(0, rank, t.dirty) {
            Next::Push(mut p) => {
                p.count = vec![super::CountStep::Scale(a / b)];
                Next::Push(p)
            }
            other => other,
        },
        _ => Next::Refuse,
    }
}

/// A Reshape that only adds or drops axes of size 1: the other sizes, the count among them
/// once, in the same order.
fn unit_axes_only(view: &View, node: &NodeProto, count: &Dim) -> bool {
    let sizes = |name: &str| {
        let dims = view.shapes.get(name).dims?;
        Some(
            dims.iter()
                .filter(|d| d.as_static() != Some(1))
                .cloned()
                .collect::<Vec<Dim>>(),
        )
    };
    let (Some(input), Some(output)) = (sizes(&node.input[0]), sizes(&node.output[0])) else {
        return false;
    };
    input == output && input.iter().filter(|d| *d == count).count() == 1
}

/// `Reshape(t, any)` read only by a Reshape back to rows of the same elements: TorchScript's
/// `view(len(i), -1)` traced with `len(i)` a constant (`[n, 4, 8] -> [2, -1] -> [n, 32]`).
/// Row-major reshapes keep the element order, so the padding is the last rows again; the
/// rows in between are never read. The Reshape back, padded along axis 0, or `None`.
pub(super) fn regrouped_back(
    view: &View,
    node: &NodeProto,
    t: &Padded,
    count: Option<&Dim>,
) -> Option<Padded> {
    let count = count.filter(|_| t.axis == 0 && !t.coords)?;
    let between = node.output.first()?;
    let [(r, 0)] = view.index.readers_of(between) else {
        return None;
    };
    let back = &view.graph.node[*r];
    if !view.is_op(back, "Reshape") || view.index.graph_outputs.contains(between) {
        return None;
    }
    let row = |name: &str| -> Option<i64> {
        let dims = view.shapes.get(name).dims?;
        (dims.first() == Some(count)).then_some(())?;
        let row: Option<Vec<i64>> = dims[1..].iter().map(Dim::as_static).collect();
        checked_numel(&row?)
    };
    // Rows in between of a fixed number of elements each (`[2, -1]`), which must divide a row:
    // then any capacity's rows fill them, as the count's did.
    let between_dims = view.shapes.get(between).dims?;
    let fixed: Vec<i64> = between_dims.iter().filter_map(Dim::as_static).collect();
    let open = between_dims.len() - fixed.len();
    let per_row = row(&t.name)?;
    let divides = checked_numel(&fixed).is_some_and(|f| f > 0 && per_row % f == 0);
    let out = back.output.first()?;
    (open == 1 && divides && per_row == row(out)?).then(|| Padded {
        name: out.clone(),
        axis: 0,
        rank: view.shapes.get(out).rank().unwrap_or(0),
        ..t.clone()
    })
}

/// `Unsqueeze(p, axes)`: the padded axis and rank after the inserted axes.
pub(super) fn unsqueezed(
    view: &View,
    node: &NodeProto,
    axis: usize,
    rank: usize,
) -> Option<(usize, usize)> {
    let axes = view.axes(node, "axes", 1)?;
    let out_rank = rank + axes.len();
    let mut inserted: Vec<usize> = axes
        .iter()
        .map(|&a| crate::infer::axis_in(a, out_rank))
        .collect::<Option<_>>()?;
    inserted.sort_unstable();
    let mut at = axis;
    for i in inserted {
        if i <= at {
            at += 1;
        }
    }
    Some((at, out_rank))
}
