//! Index arithmetic on padded coordinates (TorchScript's linear index `r * W + c` of a
//! `weights[top_x, idx]`): the padding's index is one known negative value, and a gather at it
//! reads a real element where the axis is long enough, which stays a padded row.

use super::rows::{kept_axis, Next};
use super::Padded;
use crate::infer::Dim;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// The padding's value of an integer tensor computed from this selection's coordinates by
/// `+` and `*` with non-negative constants (TorchScript's linear index `r * W + c`): -1 for a
/// column, then the same arithmetic.
fn padding_value(view: &View, name: &str, depth: usize) -> Option<i64> {
    if depth > 8 {
        return None;
    }
    if crate::trace::trace_column(view, name).is_some() {
        return Some(-1);
    }
    let node = view.producer(name)?;
    let op = node.op_type.as_deref()?;
    let constant = |n: &str| match view.shapes.values(n)? {
        [v] => v.as_static().filter(|&v| v >= 0),
        _ => None,
    };
    match (op, node.input.as_slice()) {
        ("Cast" | "Identity", [x]) => padding_value(view, x, depth + 1),
        ("Mul" | "Add", [a, b]) => {
            // Each operand: a constant (Err) or computed from the coordinates (Ok).
            let term = |x: &str| {
                constant(x)
                    .map(Err)
                    .or_else(|| padding_value(view, x, depth + 1).map(Ok))
            };
            let (p, q) = (term(a)?, term(b)?);
            let value = |r: Result<i64, i64>| match r {
                Ok(v) | Err(v) => v,
            };
            match op {
                _ if p.is_err() && q.is_err() => None,
                "Mul" if p.is_ok() && q.is_ok() => None,
                "Mul" => value(p).checked_mul(value(q)),
                _ => value(p).checked_add(value(q)),
            }
        }
        _ => None,
    }
}

/// Index arithmetic on the coordinates (`r * W + c`), and the gather it reads: the padding's
/// index is a known value, in range where the data's axis is long enough, so the gather reads
/// a real element there, which stays a padded row.
pub(super) fn index_work(
    view: &View,
    node: &NodeProto,
    op: &str,
    slot: usize,
    t: &Padded,
    count: Option<&Dim>,
) -> Option<Next> {
    let integral = t.index.is_some() || (t.coords && t.rank == 1 && !t.spread);
    if !integral {
        return None;
    }
    let push = |index: Option<i64>, axis: usize, rank: usize, dirty: bool| {
        super::rows::push(axis, rank, false, false, dirty, index)
    };
    let index_step = || {
        let Some(value) = padding_value(view, &node.output[0], 0) else {
            return Some(Next::Refuse);
        };
        let count = count?;
        Some(match kept_axis(view, node, t.axis, t.rank, count) {
            Some((axis, rank)) => push(Some(value), axis, rank, true),
            None => Next::Refuse,
        })
    };
    match op {
        "Mul" | "Add" if node.input.len() == 2 => index_step(),
        // A coordinate compared with a fixed bound (`r >= border`): a bool per row; the
        // padding's is whatever -1 gives, and a second selection masks it off.
        "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual" | "Equal"
            if t.coords && node.input.len() == 2 =>
        {
            let other = &node.input[1 - slot.min(1)];
            let fixed = super::static_dims(view.shapes, other).is_some_and(|d| d.len() <= 1)
                && view.shapes.values(other).is_some();
            // A bound of one value leaves the coordinates' shape as it is.
            let dims = view.shapes.get(&t.name).dims;
            let same = dims.is_some() && view.shapes.get(&node.output[0]).dims == dims;
            Some(if fixed && same {
                push(None, t.axis, t.rank, true)
            } else {
                Next::Refuse
            })
        }
        "Cast" if t.index.is_some() => index_step(),
        "Gather" if slot == 1 && t.index.is_some() && t.rank == 1 => {
            let data = super::static_dims(view.shapes, &node.input[0])?;
            let axis = crate::graph::int_attr(node, "axis").ok()?.unwrap_or(0);
            let axis = crate::infer::axis_in(axis, data.len())?;
            let value = t.index?;
            // The padding's index must be valid: -size <= value.
            if data[axis] < 1 || value < -data[axis] {
                return Some(Next::Refuse);
            }
            Some(push(None, axis, data.len(), true))
        }
        _ => None,
    }
}
