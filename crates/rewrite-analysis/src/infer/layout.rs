//! Ops that move or select elements: Reshape (with `0` and `-1`), Flatten, Transpose,
//! Squeeze (with and without axes), Unsqueeze, Concat, Slice, Split, Pad, Tile, Resize, and
//! the shape-producing Shape, Size and ConstantOfShape.

use super::{axis_in, Ctx, Dim, TensorInfo};
use nonzero_proto::onnx::tensor_proto::DataType;

const INT64: Option<i32> = Some(DataType::Int64 as i32);

fn one(elem_type: Option<i32>, dims: Vec<Dim>) -> Option<Vec<Option<TensorInfo>>> {
    Some(vec![Some(TensorInfo {
        elem_type,
        dims: Some(dims),
    })])
}

/// The types and shapes of the outputs of a layout op.
pub fn infer_layout(op: &str, ctx: &Ctx) -> Option<Vec<Option<TensorInfo>>> {
    let elem = ctx.elem(0);
    match op {
        "Reshape" => one(elem, reshape(ctx)?),
        "Flatten" => {
            let d = ctx.dims(0)?;
            let axis = ctx.int("axis", 1)?;
            let a = if axis < 0 {
                axis + d.len() as i64
            } else {
                axis
            };
            let a = usize::try_from(a).ok().filter(|&a| a <= d.len())?;
            one(elem, vec![Dim::product(&d[..a]), Dim::product(&d[a..])])
        }
        "Transpose" => {
            let d = ctx.dims(0)?;
            let perm = crate::graph::ints_attr(ctx.node, "perm")
                .ok()?
                .unwrap_or_else(|| (0..d.len() as i64).rev().collect());
            let permuted: Vec<Dim> = perm
                .iter()
                .map(|&p| axis_in(p, d.len()).map(|a| d[a].clone()))
                .collect::<Option<_>>()?;
            (permuted.len() == d.len()).then_some(())?;
            one(elem, permuted)
        }
        "Squeeze" => one(elem, squeeze(ctx)?),
        "Unsqueeze" => {
            let d = ctx.dims(0)?;
            let axes = ctx.ints_or_input("axes", 1)??;
            let rank = d.len() + axes.len();
            let axes: Vec<usize> = axes
                .iter()
                .map(|&a| axis_in(a, rank))
                .collect::<Option<_>>()?;
            let mut rest = d.into_iter();
            let dims = (0..rank)
                .map(|i| {
                    if axes.contains(&i) {
                        Some(Dim::from(1))
                    } else {
                        rest.next()
                    }
                })
                .collect::<Option<Vec<_>>>()?;
            one(elem, dims)
        }
        "Concat" => {
            let all: Vec<Vec<Dim>> = (0..ctx.node.input.len())
                .map(|i| ctx.dims(i))
                .collect::<Option<_>>()?;
            let first = all.first()?.clone();
            let axis = axis_in(ctx.int("axis", 0)?, first.len())?;
            if all.iter().any(|d| d.len() != first.len()) {
                return None;
            }
            let mut dims = first;
            dims[axis] = all.iter().fold(Dim::from(0), |acc, d| acc.add(&d[axis]));
            one(elem, dims)
        }
        "Slice" => one(elem, slice(ctx)?),
        "Split" => split(ctx),
        "Pad" => {
            let mut d = ctx.dims(0)?;
            let pads = ctx.ints_or_input("pads", 1)??;
            let axes: Vec<usize> = match ctx.has_input(3) {
                true => ctx
                    .static_ints(3)?
                    .iter()
                    .map(|&a| axis_in(a, d.len()))
                    .collect::<Option<_>>()?,
                false => (0..d.len()).collect(),
            };
            (pads.len() == 2 * axes.len()).then_some(())?;
            for (i, &a) in axes.iter().enumerate() {
                d[a] = d[a]
                    .add(&Dim::from(pads[i]))
                    .add(&Dim::from(pads[i + axes.len()]));
            }
            one(elem, d)
        }
        "Tile" => {
            let d = ctx.dims(0)?;
            let repeats = ctx.values(1)?;
            (repeats.len() == d.len()).then_some(())?;
            one(
                elem,
                d.iter().zip(&repeats).map(|(x, r)| x.mul(r)).collect(),
            )
        }
        "Resize" | "Upsample" => one(elem, resize(ctx)?),
        "Shape" => {
            let rank = ctx.dims(0)?.len() as i64;
            let (start, end) = shape_range(ctx, rank)?;
            one(INT64, vec![Dim::from((end - start).max(0))])
        }
        "Size" => one(INT64, vec![]),
        "ConstantOfShape" => {
            let value = crate::graph::attr(ctx.node, "value").and_then(|a| a.t.as_ref());
            let elem_type = value.map_or(Some(DataType::Float as i32), |t| t.data_type);
            one(elem_type, ctx.values(0)?)
        }
        _ => None,
    }
}

/// Shape's `start`/`end` clamped to `[0, rank]`.
pub fn shape_range(ctx: &Ctx, rank: i64) -> Option<(i64, i64)> {
    let clamp = |v: i64| {
        if v < 0 {
            (v + rank).max(0)
        } else {
            v.min(rank)
        }
    };
    let start = clamp(ctx.int("start", 0)?);
    let end = clamp(ctx.int("end", rank)?);
    Some((start, end))
}

/// Reshape's output: `0` copies the input's size (unless `allowzero`), `-1` is what is left.
fn reshape(ctx: &Ctx) -> Option<Vec<Dim>> {
    let target = ctx.values(1)?;
    let input = ctx.dims(0);
    let allow_zero = ctx.int("allowzero", 0)? == 1;
    let mut dims = Vec::with_capacity(target.len());
    let mut infer_at = None;
    for (i, t) in target.iter().enumerate() {
        match t.as_static() {
            Some(0) if !allow_zero => dims.push(input.as_ref()?.get(i)?.clone()),
            Some(-1) if infer_at.is_none() => {
                infer_at = Some(i);
                dims.push(Dim::from(1));
            }
            Some(v) if v < 0 => return None,
            _ if !t.non_negative() => return None,
            _ => dims.push(t.clone()),
        }
    }
    if let Some(i) = infer_at {
        dims[i] = remaining(input.as_ref()?, &dims).unwrap_or_else(|| ctx.fresh(0, i));
    }
    Some(dims)
}

/// The product of `total` divided by the product of `known`: equal factors cancel first (a
/// view that keeps `N, H, W` and splits `C`), then what is left must divide exactly.
fn remaining(total: &[Dim], known: &[Dim]) -> Option<Dim> {
    let mut left: Vec<&Dim> = total.iter().collect();
    let mut divisor = Dim::from(1);
    for k in known {
        match left.iter().position(|t| *t == k) {
            Some(at) => {
                left.remove(at);
            }
            None => divisor = divisor.mul(k),
        }
    }
    Dim::product(left).exact_div(&divisor)
}

/// Squeeze with axes removes them; without axes it removes every size-1 axis, which is known
/// only when every size is a number.
fn squeeze(ctx: &Ctx) -> Option<Vec<Dim>> {
    let d = ctx.dims(0)?;
    match ctx.ints_or_input("axes", 1)? {
        Some(axes) => {
            let axes: Vec<usize> = axes
                .iter()
                .map(|&a| axis_in(a, d.len()))
                .collect::<Option<_>>()?;
            Some(
                d.iter()
                    .enumerate()
                    .filter(|(i, _)| !axes.contains(i))
                    .map(|(_, x)| x.clone())
                    .collect(),
            )
        }
        None => {
            let sizes: Vec<i64> = d.iter().map(Dim::as_static).collect::<Option<_>>()?;
            Some(
                sizes
                    .into_iter()
                    .filter(|&s| s != 1)
                    .map(Dim::from)
                    .collect(),
            )
        }
    }
}

/// Slice with static starts/ends/steps: exact for numbers; for other sizes, the whole axis
/// (`[0:big]`, step 1) keeps the size, anything else gets a fresh one.
fn slice(ctx: &Ctx) -> Option<Vec<Dim>> {
    let mut d = ctx.dims(0)?;
    if ctx.node.input.len() == 1 {
        let attr = |n: &str| crate::graph::ints_attr(ctx.node, n).ok();
        let (starts, ends, axes) = (attr("starts")??, attr("ends")??, attr("axes")?);
        let bounds = starts
            .into_iter()
            .zip(ends)
            .map(|(s, e)| (Some(s), Some(e), None));
        return slice_axes(ctx, d, bounds.collect(), axes, None);
    }
    let operand = |slot: usize| match ctx.has_input(slot) {
        true => ctx.static_ints(slot).map(Some),
        false => Some(None),
    };
    let (axes, steps) = (operand(3)?, operand(4)?);
    // Bounds known as ints, or (an end) as sizes: `x[0:len(x)]` is x. A bound not known
    // leaves its axis a fresh size, and the other axes theirs.
    let ints = |slot: usize| -> Option<Vec<Option<i64>>> {
        if let Some(v) = ctx.static_ints(slot) {
            return Some(v.into_iter().map(Some).collect());
        }
        let n = match ctx.values(slot) {
            Some(v) => v.len(),
            None => match ctx.dims(slot)?.as_slice() {
                [n] => usize::try_from(n.as_static()?).ok()?,
                _ => return None,
            },
        };
        Some(vec![None; n])
    };
    let (starts, ends) = (ints(1)?, ints(2)?);
    // Bounds whose lengths disagree (a malformed model) leave the shape unknown.
    let sizes = ctx.values(2);
    let sizes_fit = sizes.as_ref().is_none_or(|s| s.len() == starts.len());
    if starts.len() != ends.len() || !sizes_fit {
        return None;
    }
    let bounds = (0..starts.len())
        .map(|i| (starts[i], ends[i], sizes.as_ref().map(|s| s[i].clone())))
        .collect();
    d = slice_axes(ctx, d, bounds, axes, steps)?;
    Some(d)
}

/// Each sliced axis's length: static where the bounds and size are, the size itself for
/// `0..size` (an end known as that size), else a fresh size; the other axes keep theirs.
fn slice_axes(
    ctx: &Ctx,
    mut d: Vec<Dim>,
    bounds: Vec<(Option<i64>, Option<i64>, Option<Dim>)>,
    axes: Option<Vec<i64>>,
    steps: Option<Vec<i64>>,
) -> Option<Vec<Dim>> {
    let axes = axes.unwrap_or_else(|| (0..bounds.len() as i64).collect());
    let steps = steps.unwrap_or(vec![1; bounds.len()]);
    if bounds.len() != axes.len() || bounds.len() != steps.len() {
        return None;
    }
    for (i, (start, end, end_size)) in bounds.into_iter().enumerate() {
        let a = axis_in(axes[i], d.len())?;
        let step = steps[i];
        (step != 0).then_some(())?;
        d[a] = match (d[a].as_static(), start, end) {
            (Some(n), Some(s), Some(e)) => Dim::from(static_slice_len(n, s, e, step)),
            (None, Some(0), Some(e)) if e >= i64::from(i32::MAX) && step == 1 => d[a].clone(),
            (_, Some(0), None) if step == 1 && end_size.as_ref() == Some(&d[a]) => d[a].clone(),
            _ => ctx.fresh(0, a),
        };
    }
    Some(d)
}

/// numpy's slice length on an axis of `n`.
fn static_slice_len(n: i64, start: i64, end: i64, step: i64) -> i64 {
    let clamp = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v.saturating_add(n) } else { v };
        v.clamp(lo, hi)
    };
    let (s, e) = if step > 0 {
        (clamp(start, 0, n), clamp(end, 0, n))
    } else {
        (clamp(start, -1, n - 1), clamp(end, -1, n - 1))
    };
    // In i128: a fuzzed step near i64::MAX or i64::MIN would overflow i64 here.
    let (s, e, step) = (i128::from(s), i128::from(e), i128::from(step));
    let len = if step > 0 {
        (e - s + step - 1) / step
    } else {
        (s - e - step - 1) / -step
    };
    // At most the axis's length, so it fits i64.
    len.clamp(0, i128::from(n.max(0))) as i64
}

/// Split's outputs: the given sizes, or equal parts.
fn split(ctx: &Ctx) -> Option<Vec<Option<TensorInfo>>> {
    let d = ctx.dims(0)?;
    let axis = axis_in(ctx.int("axis", 0)?, d.len())?;
    let parts = ctx.node.output.len();
    let sizes: Vec<Dim> = match ctx.ints_or_input("split", 1)? {
        Some(s) => s.into_iter().map(Dim::from).collect(),
        None if parts == 1 => vec![d[axis].clone()],
        // Equal parts (num_outputs may leave the last one smaller unless it divides).
        None => {
            let part = d[axis].exact_div(&Dim::from(parts as i64))?;
            vec![part; parts]
        }
    };
    (sizes.len() == parts).then_some(())?;
    Some(
        sizes
            .into_iter()
            .map(|s| {
                let mut dims = d.clone();
                dims[axis] = s;
                Some(TensorInfo {
                    elem_type: ctx.elem(0),
                    dims: Some(dims),
                })
            })
            .collect(),
    )
}

/// Resize/Upsample: `sizes` when given, else integer `scales` on symbolic sizes and any
/// scale on numbers.
fn resize(ctx: &Ctx) -> Option<Vec<Dim>> {
    let d = ctx.dims(0)?;
    let op = ctx.node.op_type.as_deref().unwrap_or("");
    // Upsample and opset-10 Resize take (X, scales); later Resize (X, roi, scales, sizes).
    let (scales_slot, sizes_slot) = if op == "Upsample" || ctx.node.input.len() == 2 {
        (1, usize::MAX)
    } else {
        (2, 3)
    };
    if ctx.has_input(sizes_slot) {
        let sizes = ctx.values(sizes_slot)?;
        return (sizes.len() == d.len() && crate::graph::attr(ctx.node, "axes").is_none())
            .then_some(sizes);
    }
    // The scales as a constant, or as a value the shapes decide (an export's size arithmetic).
    let scales: Vec<f32> = match ctx.constant(scales_slot).map(|c| &c.data) {
        Some(crate::consts::Data::F32(v)) => v.clone(),
        _ => ctx
            .index
            .const_floats(ctx.graph, ctx.node.input.get(scales_slot)?)?,
    };
    (scales.len() == d.len() && crate::graph::attr(ctx.node, "axes").is_none()).then_some(())?;
    d.iter()
        .zip(&scales)
        .enumerate()
        .map(|(axis, (x, &s))| match x.as_static() {
            // ONNX Runtime's size: the float32 product, truncated.
            Some(n) => Some(Dim::from((n as f32 * s) as i64)),
            None if s.fract() == 0.0 && s >= 1.0 => Some(x.mul(&Dim::from(s as i64))),
            None => Some(ctx.fresh(0, axis)),
        })
        .collect()
}
