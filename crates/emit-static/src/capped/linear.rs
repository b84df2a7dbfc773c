//! Frames read back through TorchScript's linear index ([`super::follow`]): Longformer's
//! `global_attn_output[i, :, j]` with `i, j` a selection's coordinates of a mask padded alike
//! (`arange(L) < num[:, None]`). The exporter moves the indexed axes to the front, flattens the
//! batch with the frames (`Flatten(x, axis=2)`, rows `b * L + l`), and gathers its rows at
//! `j + i * L`, `L` read from the frames' shape. At the capacity the rows are `b * C + l` and the
//! index is `j + i * C`: the same element, since `j < L <= C` (a coordinate along the frames of
//! a NonZero that reads their padding as false). The gathered rows hold no padding.
//!
//! Three reaches carry it: the flattened frames ([`Reach::Merged`]), a coordinate times the length
//! ([`Reach::Strided`]), and that plus another coordinate ([`Reach::Linear`]). Only a Gather of
//! the one at the other, and a Shape of an index, read them; anything else refuses.

use super::follow::{arg, refuse, Flow, Reach};
use super::known::{axis_in, size};
use super::length::Steps;
use crate::graph::int_attr;
use crate::trace::{trace_column, View};
use nonzero_proto::onnx::NodeProto;

/// `Flatten(x, axis)` of frames padded along `axis - 1`, every axis before it of a fixed size:
/// the frames merged with those axes into the rows.
pub(super) fn flatten(
    view: &View,
    node: &NodeProto,
    (axis, rank, steps): (usize, usize, &Steps),
) -> Result<Vec<Option<Reach>>, String> {
    let at = int_attr(node, "axis").map_err(|_| "")?.unwrap_or(1);
    let at = if at < 0 { at + rank as i64 } else { at };
    if at != axis as i64 + 1 {
        return refuse("a Flatten that merges the padded axis with the axes after it");
    }
    let mut outer = 1i64;
    for a in 0..axis {
        outer = outer
            .checked_mul(size(view, arg(node, 0)?, a).ok_or("")?)
            .ok_or("")?;
    }
    Ok(vec![Some(Reach::Merged {
        axis,
        outer,
        steps: steps.clone(),
    })])
}

/// What `node` makes of the merged frames or of a linear index it reads.
pub(super) fn step(
    view: &View,
    node: &NodeProto,
    op: &str,
    reads: &[Option<&Reach>],
    flow: &Flow,
) -> Result<Vec<Option<Reach>>, String> {
    match (op, reads) {
        // The index's shape is its coordinates' (no length in it).
        ("Shape", [Some(Reach::Strided { .. } | Reach::Linear { .. })]) => Ok(vec![None]),
        ("Add", [a, b]) => {
            let (low, strided) = match (a, b) {
                (None, Some(Reach::Strided { of, steps })) => (arg(node, 0)?, (of, steps)),
                (Some(Reach::Strided { of, steps }), None) => (arg(node, 1)?, (of, steps)),
                _ => return refuse("a sum of the padded length's multiples"),
            };
            Ok(vec![Some(Reach::Linear {
                high: strided.0.clone(),
                low: low.to_string(),
                steps: strided.1.clone(),
            })])
        }
        (
            "Gather",
            [Some(Reach::Merged { axis, outer, steps }), Some(Reach::Linear { .. })],
        ) => gather(view, node, reads[1], (*axis, *outer, steps), flow),
        _ => refuse("the padded length read as a value, or flattened frames read otherwise than at their linear index"),
    }
}

/// `Gather(merged, j + i * L, axis=0)`: `i` and `j` the two columns of one NonZero's
/// coordinates, that NonZero reading frames padded alike along its second axis (their padding
/// read as false, so `j < L`), of a mask whose first size is the merged rows' outer size.
fn gather(
    view: &View,
    node: &NodeProto,
    index: Option<&Reach>,
    (axis, outer, steps): (usize, i64, &Steps),
    flow: &Flow,
) -> Result<Vec<Option<Reach>>, String> {
    let Some(Reach::Linear {
        high,
        low,
        steps: stride,
    }) = index
    else {
        return Err(String::new());
    };
    let along = int_attr(node, "axis").map_err(|_| "")?.unwrap_or(0);
    if axis_in(along, 2) != Some(0) || stride != steps || axis != 1 {
        return refuse("a Gather of flattened frames along another axis, at another length, or of more than a batch axis before the frames");
    }
    let (Some((row, 0)), Some((column, 1))) = (trace_column(view, high), trace_column(view, low))
    else {
        return refuse("a Gather of flattened frames at an index other than `j + i * L` of one selection's coordinates");
    };
    let selection = row.chain.first().ok_or("")?;
    let read_alike = flow.masked.iter().any(|m| {
        m.op == "NonZero"
            && &m.output == selection
            && m.input == row.mask
            && (m.axis, m.rank, m.tail) == (1, 2, 0)
            && &m.steps == steps
    });
    let same_selection = row.mask == column.mask && column.chain.first() == Some(selection);
    if !read_alike || !same_selection || size(view, &row.mask, 0) != Some(outer) {
        return refuse(
            "a Gather of flattened frames at coordinates of a selection not of frames padded alike",
        );
    }
    Ok(vec![None])
}
