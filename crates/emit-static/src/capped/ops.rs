//! The ops the frames pass with more than one operand or a moved axis ([`super::follow`]):
//! broadcasts, Reshape, Expand, MatMul, and the length step of Conv and ConvTranspose.

use super::follow::{arg, every_output, frames, refuse, Fill, Flow, Masked, Reach};
use super::known::{ints, rank, size};
use super::length::{Step, Steps};
use crate::graph::{attr, ints_attr};
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// An elementwise op of broadcast operands: every padded operand padded alike at the same
/// output axis, every other of size 1 there (or not reaching it).
pub(super) fn broadcast(
    view: &View,
    node: &NodeProto,
    reads: &[Option<&Reach>],
) -> Result<Vec<Option<Reach>>, String> {
    let out_rank = rank(view, &node.output[0]).ok_or("")?;
    let mut found: Option<(usize, Steps)> = None;
    for (axis, r, steps) in reads.iter().filter_map(|r| frames(*r)) {
        let aligned = out_rank.checked_sub(r).ok_or("")? + axis;
        match &found {
            Some((a, s)) if (*a, s) != (aligned, steps) => {
                return refuse("operands padded along different axes, or to different lengths")
            }
            _ => found = Some((aligned, steps.clone())),
        }
    }
    let (axis, steps) = found.ok_or("")?;
    for (name, r) in node.input.iter().zip(reads) {
        if r.is_some() || name.is_empty() {
            continue;
        }
        // An Expand's shape operand: 1 at the padded axis, or not reaching it.
        if node.op_type.as_deref() == Some("Expand") {
            let shape = ints(view, name).ok_or("")?;
            match (axis + shape.len()).checked_sub(out_rank) {
                Some(at) if shape[at] != 1 => return refuse("an Expand along the padded axis"),
                _ => continue,
            }
        }
        let r = rank(view, name).ok_or("")?;
        let Some(at) = (axis + r).checked_sub(out_rank) else {
            continue;
        };
        if size(view, name, at) != Some(1) {
            return refuse("an operand that is not padded spans the padded axis");
        }
    }
    Ok(every_output(node, axis, out_rank, &steps))
}

/// A Reshape that keeps the padded axis one axis: the sizes before it and after it multiply to
/// the same (fixed) products. `sized_at`: the entry of its shape operand that the padded length
/// sizes.
pub(super) fn reshape(
    view: &View,
    node: &NodeProto,
    reads: &[Option<&Reach>],
    sized_at: Option<usize>,
) -> Result<Vec<Option<Reach>>, String> {
    let (axis, r, steps) = frames(reads[0]).ok_or("")?;
    let in_dims = view
        .shapes
        .info(arg(node, 0)?)
        .and_then(|i| i.dims.clone())
        .ok_or("")?;
    let out_dims = view
        .shapes
        .info(&node.output[0])
        .and_then(|i| i.dims.clone())
        .ok_or("")?;
    let fixed = |d: &[nonzero_rewrite_analysis::infer::Dim]| -> Option<i64> {
        d.iter()
            .try_fold(1i64, |p, d| p.checked_mul(d.as_static()?))
    };
    let (before, after) = (
        fixed(&in_dims[..axis]).ok_or("")?,
        fixed(&in_dims[axis + 1..r]).ok_or("")?,
    );
    // The output axis: the one the length sizes, else the one size not fixed.
    let to = match sized_at {
        Some(at) => at,
        None => {
            let open: Vec<usize> = (0..out_dims.len())
                .filter(|&a| out_dims[a].as_static().is_none())
                .collect();
            match open.as_slice() {
                [a] => *a,
                _ => return refuse("a Reshape whose output axis of the padded one is not proven"),
            }
        }
    };
    let kept = to < out_dims.len()
        && fixed(&out_dims[..to]) == Some(before)
        && fixed(&out_dims[to + 1..]) == Some(after);
    if !kept {
        return refuse("a Reshape that merges or splits the padded axis");
    }
    Ok(vec![Some(Reach::Frames {
        axis: to,
        rank: out_dims.len(),
        steps: steps.clone(),
    })])
}

/// `Expand(x, shape)` where the padded length sizes entry `entry` of `shape` and `x` is not
/// padded: `x` must have size 1 there (the same values along the frames).
pub(super) fn expanded(
    view: &View,
    node: &NodeProto,
    entry: usize,
    steps: Steps,
) -> Result<Vec<Option<Reach>>, String> {
    let out_rank = rank(view, &node.output[0]).ok_or("")?;
    let len = size(view, arg(node, 1)?, 0).ok_or("")? as usize;
    let axis = entry + out_rank.checked_sub(len).ok_or("")?;
    let x_rank = rank(view, arg(node, 0)?).ok_or("")?;
    if let Some(at) = (axis + x_rank).checked_sub(out_rank) {
        if size(view, arg(node, 0)?, at) != Some(1) {
            return refuse("an Expand along the padded axis");
        }
    }
    Ok(vec![Some(Reach::Frames {
        axis,
        rank: out_rank,
        steps,
    })])
}

/// MatMul with the padded axis as rows of A, columns of B, or a batch axis of either. Summed
/// over (A's columns and B's rows, both padded alike): each operand's padding is masked to zero
/// first, so the padded terms add exact zeros, and the product holds no padding.
pub(super) fn matmul(
    view: &View,
    node: &NodeProto,
    reads: &[Option<&Reach>],
    flow: &mut Flow,
) -> Result<Vec<Option<Reach>>, String> {
    let out_rank = rank(view, &node.output[0]).ok_or("")?;
    if let Some(sum) = summed(reads)? {
        for (slot, (axis, r)) in sum.axes.into_iter().enumerate() {
            flow.masked
                .push(Masked::of(node, slot, (axis, r, &sum.steps), Fill::Zero));
        }
        return Ok(vec![None]);
    }
    let mut found: Option<(usize, Steps)> = None;
    for (slot, r) in reads.iter().enumerate().take(2) {
        let Some((axis, r, steps)) = frames(*r) else {
            continue;
        };
        if r < 2 || out_rank < 2 {
            return refuse("a MatMul of vectors");
        }
        let to = match (slot, r - 1 - axis) {
            (0, 1) => out_rank - 2,
            (1, 0) => out_rank - 1,
            (_, from_end) if from_end >= 2 => out_rank - 1 - from_end,
            _ => return refuse("a MatMul that sums over the padded axis"),
        };
        match &found {
            Some((a, s)) if (*a, s) != (to, steps) => {
                return refuse("operands padded along different axes")
            }
            _ => found = Some((to, steps.clone())),
        }
    }
    let (axis, steps) = found.ok_or("")?;
    Ok(vec![Some(Reach::Frames {
        axis,
        rank: out_rank,
        steps,
    })])
}

/// A MatMul that sums over the padded axis: both operands padded alike there (A along its last
/// axis, B along its second last), neither along another. `None` where it sums over no padding.
struct Summed {
    axes: [(usize, usize); 2],
    steps: Steps,
}

fn summed(reads: &[Option<&Reach>]) -> Result<Option<Summed>, String> {
    let (a, b) = (frames(reads[0]), reads.get(1).and_then(|r| frames(*r)));
    let contracted = |f: Option<(usize, usize, &Steps)>, from_end: usize| {
        f.is_some_and(|(axis, r, _)| r >= 2 && r - 1 - axis == from_end)
    };
    let (a_sums, b_sums) = (contracted(a, 0), contracted(b, 1));
    if !a_sums && !b_sums {
        return Ok(None);
    }
    match (a, b) {
        (Some((aa, ar, sa)), Some((ba, br, sb))) if a_sums && b_sums && sa == sb => {
            Ok(Some(Summed {
                axes: [(aa, ar), (ba, br)],
                steps: sa.clone(),
            }))
        }
        _ => refuse("a MatMul that sums over the padded axis of one operand only"),
    }
}

/// The length step of a Conv or ConvTranspose along spatial axis `spatial`, from its explicit
/// attributes (no `auto_pad`, no `output_shape`).
pub(super) fn conv_step(view: &View, node: &NodeProto, op: &str, spatial: usize) -> Option<Step> {
    let auto_pad = attr(node, "auto_pad")
        .and_then(|a| a.s.as_deref())
        .unwrap_or(b"NOTSET");
    if auto_pad != b"NOTSET" || attr(node, "output_shape").is_some() {
        return None;
    }
    let kernel = match ints_attr(node, "kernel_shape").ok()? {
        Some(k) => *k.get(spatial)?,
        None => size(view, node.input.get(1)?, spatial + 2)?,
    };
    let spatial_rank = rank(view, node.input.first()?)?.checked_sub(2)?;
    let nth = |name: &str, default: i64| -> Option<i64> {
        ints_attr(node, name)
            .ok()?
            .map_or(Some(default), |v| v.get(spatial).copied())
    };
    let (stride, dilation) = (nth("strides", 1)?, nth("dilations", 1)?);
    let pads = ints_attr(node, "pads")
        .ok()?
        .unwrap_or_else(|| vec![0; 2 * spatial_rank]);
    let pads = pads
        .get(spatial)?
        .checked_add(*pads.get(spatial + spatial_rank)?)?;
    let k_eff = dilation
        .checked_mul(kernel.checked_sub(1)?)?
        .checked_add(1)?;
    if stride < 1 || k_eff < 1 {
        return None;
    }
    if op == "ConvTranspose" {
        let output_padding = nth("output_padding", 0)?;
        // stride * (n - 1) + output_padding + k_eff - pads
        let offset = output_padding
            .checked_add(k_eff)?
            .checked_sub(pads)?
            .checked_sub(stride)?;
        return Some(Step::Affine {
            scale: stride,
            offset,
        });
    }
    let offset = pads.checked_sub(k_eff)?;
    Some(if stride == 1 {
        Step::Affine {
            scale: 1,
            offset: offset.checked_add(1)?,
        }
    } else {
        Step::Strided { offset, stride }
    })
}
