//! Gathers indexed by the padded coordinates themselves: `GatherND(data, [C, r])` and
//! `Gather(data, [C] column)`. The padding's -1 is then an index, valid only along an axis that
//! is not empty; the sinks ([`crate::compact::emit_gather`]) write 0 there.

use super::{static_dims, GatherKind, Padded};
use crate::graph::int_attr;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// `GatherND(data, coordinates)` of `[C, width]` coordinates `t` into data whose leading sizes
/// are the mask's (or, for fewer columns, each indexed size at least 1): the gather's kind and
/// its output's rank. `coordinates` names the NonZero output when `t` comes from one (row-major:
/// the flat positions may stand for the coordinates), or is empty.
pub(super) fn gather_nd(
    view: &View,
    node: &NodeProto,
    t: &Padded,
    coordinates: &str,
    mask_dims: &[i64],
) -> Option<(GatherKind, usize)> {
    let batch_dims = int_attr(node, "batch_dims").ok().flatten().unwrap_or(0);
    let data = static_dims(view.shapes, &node.input[0]);
    let leading = data.as_ref().and_then(|d| d.get(..mask_dims.len()));
    // Or coordinates of fewer axes (a column, unsqueezed: dynamo's `hidden[token]`): each -1
    // must index a non-empty axis.
    let width = view
        .shapes
        .get(&t.name)
        .dims
        .and_then(|d| d.get(1)?.as_static());
    let width = width
        .and_then(|w| usize::try_from(w).ok())
        .unwrap_or(mask_dims.len());
    let indexed = data.as_ref().and_then(|d| d.get(..width));
    // (Full coordinates index the mask's own sizes, as before.)
    let nonempty = width < mask_dims.len() && indexed.is_some_and(|d| d.iter().all(|&x| x >= 1));
    if batch_dims != 0 || (leading != Some(mask_dims) && !nonempty) {
        return None;
    }
    // The flat positions stand for the coordinates only where the data's leading sizes are the
    // mask's.
    let direct = leading == Some(mask_dims)
        && crate::trace::trace(view, &node.input[1]).is_some_and(|tr| {
            !tr.squeezed
                && !coordinates.is_empty()
                && tr.chain.first().map(String::as_str) == Some(coordinates)
        });
    let rank = data.map_or(0, |d| d.len()) + 1 - width;
    Some((GatherKind::Nd { direct }, rank))
}

/// `Gather(data, column, axis)`: the gathered axis and the output's rank. Index -1 is valid only
/// where the gathered axis is not empty: the padding exists only when the mask has elements,
/// and its one dim must be that axis.
pub(super) fn gather_column(view: &View, node: &NodeProto) -> Option<(usize, usize)> {
    let data = static_dims(view.shapes, &node.input[0]);
    let axis = int_attr(node, "axis").ok().flatten().unwrap_or(0);
    let rank = data.as_ref().map_or(0, Vec::len) as i64;
    let axis = if axis < 0 { axis + rank } else { axis };
    let size = data
        .as_ref()
        .and_then(|d| d.get(usize::try_from(axis).ok()?));
    if size.is_none_or(|&s| s < 1) {
        return None;
    }
    Some((axis as usize, rank as usize))
}

/// `Gather(t, indices, axis)` of padded values `t`: `Ok(None)` along the padded axis (the
/// indices must be a second selection's coordinates: [`super::Flow::check_selected_by`]);
/// `Ok(Some((axis, rank)))` of the output along another axis, where fixed-shape indices pick
/// within each row; `Err` where the indices' shape is not fixed.
pub(super) fn values_gather(
    view: &View,
    node: &NodeProto,
    t: &super::Padded,
) -> Result<Option<(usize, usize)>, ()> {
    let axis = crate::graph::int_attr(node, "axis")
        .ok()
        .flatten()
        .unwrap_or(0);
    let axis = if axis < 0 { axis + t.rank as i64 } else { axis } as usize;
    if axis == t.axis {
        return Ok(None);
    }
    let index_rank = super::static_dims(view.shapes, &node.input[1])
        .ok_or(())?
        .len();
    let padded = if axis < t.axis {
        t.axis - 1 + index_rank
    } else {
        t.axis
    };
    Ok(Some((padded, t.rank - 1 + index_rank)))
}
