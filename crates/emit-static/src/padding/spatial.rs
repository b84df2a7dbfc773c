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
/// or `None` where this is not such work.
pub(super) fn batch_work(
    view: &View,
    node: &NodeProto,
    op: &str,
    slot: usize,
    t: &Padded,
) -> Option<Next> {
    if slot != 0 || t.coords || t.axis != 0 || t.rank < 3 || node.output.len() != 1 {
        return None;
    }
    let fixed = |name: &String| name.is_empty() || super::static_dims(view.shapes, name).is_some();
    if PER_ITEM.contains(&op) {
        // Weights and bias of fixed shapes: a padded operand there would mix rows.
        return Some(if node.input[1..].iter().all(fixed) {
            push(0, t.rank, false, false, true, None)
        } else {
            Next::Refuse
        });
    }
    (op == "Resize").then(|| resized(view, node, t))
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
