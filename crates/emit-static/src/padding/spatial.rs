//! Work on a batch of padded maps (issue 37, item 2): a detector's keypoint and mask heads run
//! convolutions, pooling and an upsampling Resize on `[N, C, H, W]` maps, one per detection,
//! padded along N. Each of these ops computes each batch item from that item alone, so the
//! rows stay rows; their padding holds what the op made of a zero map (the bias), not the fill.

use super::rows::{push, Next};
use super::Padded;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// Ops whose every batch item depends on that item alone, given fixed weights.
const PER_ITEM: &[&str] = &[
    "Conv",
    "ConvTranspose",
    "MaxPool",
    "AveragePool",
    "GlobalAveragePool",
    "GlobalMaxPool",
];

/// `node` reading the padded `t` along its batch axis (0) in slot 0: the next padded tensor,
/// or `None` where this is not such work. Flatten takes any rank of 2 or more, and Pad any padded
/// axis; the others need maps (rank 3 or more).
pub(super) fn batch_work(
    view: &View,
    node: &NodeProto,
    op: &str,
    slot: usize,
    t: &Padded,
) -> Option<Next> {
    if slot != 0 || t.coords || t.rank < 2 || node.output.len() != 1 {
        return None;
    }
    // Pad of other axes keeps the rows along any padded axis (a spline's `pad(cumwidths, (1,
    // 0))` on rows [C, K]).
    if op == "Pad" {
        return Some(padded_maps(view, node, t));
    }
    if t.axis != 0 {
        return None;
    }
    let fixed = |name: &String| name.is_empty() || super::static_dims(view.shapes, name).is_some();
    if (PER_ITEM.contains(&op) || op == "Resize") && t.rank < 3 {
        return Some(Next::Refuse);
    }
    if PER_ITEM.contains(&op) {
        // Weights and bias of fixed shapes: a padded operand there would mix rows.
        return Some(if node.input[1..].iter().all(fixed) {
            push(0, t.rank, false, false, true, None)
        } else {
            Next::Refuse
        });
    }
    match op {
        "Resize" => Some(resized(view, node, t)),
        "Pad" => Some(padded_maps(view, node, t)),
        "Flatten" => Some(flattened(view, node, t)),
        _ => None,
    }
}

/// Pad by constant pads that leave the padded axis alone (a mask's one-pixel border before the
/// paste): each row padded alone.
fn padded_maps(view: &View, node: &NodeProto, t: &Padded) -> Next {
    let pads = node.input.get(1).and_then(|p| {
        let values = view.shapes.values(p)?;
        values
            .iter()
            .map(|v| v.as_static())
            .collect::<Option<Vec<i64>>>()
    });
    let axes = node.input.get(3).filter(|n| !n.is_empty());
    let value_fixed = node
        .input
        .get(2)
        .is_none_or(|v| v.is_empty() || super::static_dims(view.shapes, v).is_some());
    match pads {
        Some(p)
            if p.len() == 2 * t.rank
                && p[t.axis] == 0
                && p[t.axis + t.rank] == 0
                && axes.is_none()
                && value_fixed =>
        {
            push(t.axis, t.rank, false, false, true, None)
        }
        _ => Next::Refuse,
    }
}

/// Flatten of a batch of maps: at axis 1 each map is a row; at axis a > 1 each map becomes as
/// many rows as its first a - 1 sizes hold (`[N, K, H, W]` to `[N * K, H * W]`: the count
/// times K, [`super::CountStep::Scale`]).
fn flattened(view: &View, node: &NodeProto, t: &Padded) -> Next {
    let axis = crate::graph::int_attr(node, "axis")
        .ok()
        .flatten()
        .unwrap_or(1);
    let dims = view.shapes.get(&t.name).dims.unwrap_or_default();
    let Some(at) = crate::infer::axis_in(axis, t.rank + 1).filter(|&a| a >= 1) else {
        return Next::Refuse;
    };
    let rows: Option<Vec<i64>> = dims
        .get(1..at)
        .and_then(|d| d.iter().map(|x| x.as_static()).collect());
    match rows.and_then(|r| nonzero_rewrite_analysis::dims::checked_numel(&r)) {
        Some(1) => push(0, 2, false, false, t.dirty, None),
        Some(k) if k > 1 => match push(0, 2, false, false, t.dirty, None) {
            Next::Push(mut p) => {
                p.count = vec![super::CountStep::Scale(k)];
                Next::Push(p)
            }
            other => other,
        },
        _ => Next::Refuse,
    }
}

/// Resize by constant scales that keep the batch axis (scale 1): each map resized alone. Sizes
/// given as a tensor name the batch's size, and `axes` may leave it out: not followed.
fn resized(view: &View, node: &NodeProto, t: &Padded) -> Next {
    let scales = node.input.get(2).filter(|n| !n.is_empty());
    let sizes = node.input.get(3).filter(|n| !n.is_empty());
    let axes = crate::graph::ints_attr(node, "axes");
    let kept = match (scales, sizes, axes) {
        (Some(scales), None, Ok(None)) => view
            .index
            .const_floats(view.graph, scales)
            .is_some_and(|s| s.len() == t.rank && s[0] == 1.0),
        _ => false,
    };
    if kept {
        push(0, t.rank, false, false, true, None)
    } else {
        Next::Refuse
    }
}
