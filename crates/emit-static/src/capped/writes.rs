//! ScatterND into capped frames ([`super::follow`]): Longformer's global keys written into the
//! global slots, `zeros(B, L, H, D)[is_local_index_global_attn_nonzero] = k[...]`. Each index
//! along the padded axis is below the original length L (ONNX Runtime fails the original
//! otherwise) and, proven here, at least 0: the write lands on real positions only, as in the
//! original, and the padding keeps what it held. A negative index would count from L in the
//! original and from the capacity here, so indices not proven non-negative are refused.

use super::follow::{refuse, Reach};
use crate::graph::int_attr;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// What `ScatterND(data, indices, updates)` makes, its data padded along `axis` of `rank`.
pub(super) fn scatter_nd(
    view: &View,
    node: &NodeProto,
    reads: &[Option<&Reach>],
    (axis, rank): (usize, usize),
) -> Result<Vec<Option<Reach>>, String> {
    let Some(Reach::Frames { steps, .. }) = reads.first().copied().flatten() else {
        return refuse("a ScatterND of updates padded along the frames");
    };
    if reads.iter().skip(1).any(Option::is_some) {
        return refuse("a ScatterND whose indices or updates are padded along the frames");
    }
    let indices = node.input.get(1).ok_or("")?;
    let depth = view
        .shapes
        .info(indices)
        .and_then(|i| i.dims.as_ref()?.last()?.as_static())
        .ok_or("")?;
    if usize::try_from(depth).map_or(true, |k| axis >= k) {
        return refuse("a ScatterND whose updates span the padded axis");
    }
    if !non_negative(view, indices, 0) {
        return refuse("a ScatterND at indices not proven non-negative (a negative one counts from the length)");
    }
    Ok(vec![Some(Reach::Frames {
        axis,
        rank,
        steps: steps.clone(),
    })])
}

/// True when every element of `name` is provably at least 0: a NonZero's coordinates, a
/// non-negative constant, or those moved by ops that only move or copy elements (Transpose,
/// Gather, Slice, Squeeze, Unsqueeze, Reshape, Expand, Concat, Identity) or cast them to
/// another integer type of the same or more bits.
fn non_negative(view: &View, name: &str, depth: usize) -> bool {
    if depth > 16 {
        return false;
    }
    if let Some(values) = view.const_ints(name) {
        return values.iter().all(|&v| v >= 0);
    }
    let Some(node) = view.producer(name) else {
        return false;
    };
    let op = node.op_type.as_deref().unwrap_or("");
    if !view.is_op(node, op) {
        return false;
    }
    let first = |n: &NodeProto| {
        n.input
            .first()
            .is_some_and(|i| non_negative(view, i, depth + 1))
    };
    match op {
        "NonZero" => true,
        "Transpose" | "Gather" | "Slice" | "Squeeze" | "Unsqueeze" | "Reshape" | "Expand"
        | "Identity" => first(node),
        "Concat" => node.input.iter().all(|i| non_negative(view, i, depth + 1)),
        // int64 to int64 or int32 of values NonZero wrote (at most 2^31 elements: a static
        // model's sizes are checked), so no wrap.
        "Cast" => {
            let to = int_attr(node, "to").ok().flatten();
            matches!(to, Some(6 | 7)) && first(node)
        }
        _ => false,
    }
}
