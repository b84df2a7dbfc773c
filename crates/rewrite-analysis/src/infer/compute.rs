//! Ops that compute new values with their own output shapes: convolution and pooling,
//! MatMul/Gemm, Einsum, reductions, ArgMax/ArgMin, TopK, Range, NonMaxSuppression, OneHot,
//! RoiAlign, GridSample.

use super::{axis_in, Ctx, Dim, TensorInfo};
use crate::graph::ints_attr;
use nonzero_proto::onnx::tensor_proto::DataType;

const INT64: Option<i32> = Some(DataType::Int64 as i32);

const REDUCE_OPS: &[&str] = &[
    "ReduceMax",
    "ReduceMin",
    "ReduceSum",
    "ReduceMean",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
];
const POOL_OPS: &[&str] = &["MaxPool", "AveragePool", "LpPool"];
const GLOBAL_POOL_OPS: &[&str] = &["GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"];

fn info(elem_type: Option<i32>, dims: Vec<Dim>) -> Option<TensorInfo> {
    Some(TensorInfo {
        elem_type,
        dims: Some(dims),
    })
}

/// The types and shapes of the outputs of a computing op.
pub fn infer_compute(op: &str, ctx: &Ctx) -> Option<Vec<Option<TensorInfo>>> {
    let elem = ctx.elem(0);
    let outputs = match op {
        "Conv" => vec![info(elem, conv_like(ctx, true)?)],
        "ConvTranspose" => vec![info(elem, conv_transpose(ctx)?)],
        _ if POOL_OPS.contains(&op) => {
            let dims = conv_like(ctx, false)?;
            // MaxPool's second output (indices) has the same shape.
            vec![info(elem, dims.clone()), info(INT64, dims)]
        }
        _ if GLOBAL_POOL_OPS.contains(&op) => {
            let d = ctx.dims(0)?;
            (d.len() >= 2).then_some(())?;
            let mut out = d[..2].to_vec();
            out.resize(d.len(), Dim::from(1));
            vec![info(elem, out)]
        }
        "MatMul" | "MatMulInteger" => {
            let elem_type = if op == "MatMul" {
                elem
            } else {
                Some(DataType::Int32 as i32)
            };
            vec![info(elem_type, matmul(ctx, &ctx.dims(0)?, &ctx.dims(1)?)?)]
        }
        "Gemm" => {
            let (a, b) = (ctx.dims(0)?, ctx.dims(1)?);
            (a.len() == 2 && b.len() == 2).then_some(())?;
            let m = if ctx.int("transA", 0)? != 0 {
                &a[1]
            } else {
                &a[0]
            };
            let n = if ctx.int("transB", 0)? != 0 {
                &b[0]
            } else {
                &b[1]
            };
            vec![info(elem, vec![m.clone(), n.clone()])]
        }
        _ if REDUCE_OPS.contains(&op) => vec![info(elem, reduce(ctx)?)],
        "ArgMax" | "ArgMin" => {
            let mut d = ctx.dims(0)?;
            let axis = axis_in(ctx.int("axis", 0)?, d.len())?;
            if ctx.int("keepdims", 1)? != 0 {
                d[axis] = Dim::from(1);
            } else {
                d.remove(axis);
            }
            vec![info(INT64, d)]
        }
        "TopK" => {
            let mut d = ctx.dims(0)?;
            let axis = axis_in(ctx.int("axis", -1)?, d.len())?;
            d[axis] = match ctx.values(1).as_deref() {
                Some([k]) => k.clone(),
                _ if ctx.node.input.len() == 1 => Dim::from(ctx.int("k", 0)?),
                _ => ctx.fresh(0, axis),
            };
            vec![info(elem, d.clone()), info(INT64, d)]
        }
        "Range" => vec![info(
            elem,
            vec![range_length(ctx).unwrap_or_else(|| ctx.fresh(0, 0))],
        )],
        "NonMaxSuppression" => vec![info(INT64, vec![ctx.fresh(0, 0), Dim::from(3)])],
        "Einsum" => vec![info(elem, einsum(ctx)?)],
        // RoiAlign(X [N, C, H, W], rois [R, 4], batch_indices [R]): [R, C, height, width].
        "RoiAlign" => {
            let (x, rois) = (ctx.dims(0)?, ctx.dims(1)?);
            let (height, width) = (ctx.int("output_height", 1)?, ctx.int("output_width", 1)?);
            let (rois, channels) = (rois.first()?.clone(), x.get(1)?.clone());
            vec![info(
                elem,
                vec![rois, channels, Dim::from(height), Dim::from(width)],
            )]
        }
        // GridSample(X [N, C, D...], grid [N, D_out..., k]): [N, C, D_out...].
        "GridSample" => {
            let (x, grid) = (ctx.dims(0)?, ctx.dims(1)?);
            (x.len() >= 3 && grid.len() == x.len()).then_some(())?;
            let mut out = x[..2].to_vec();
            out.extend_from_slice(&grid[1..grid.len() - 1]);
            vec![info(elem, out)]
        }
        // OneHot(indices, depth, values): depth inserted at `axis` (-1: last), of values' type.
        "OneHot" => {
            let mut d = ctx.dims(0)?;
            let axis = axis_in(ctx.int("axis", -1)?, d.len() + 1)?;
            let depth = match ctx.values(1).as_deref() {
                Some([depth]) => depth.clone(),
                _ => ctx.fresh(0, axis),
            };
            d.insert(axis, depth);
            vec![info(ctx.elem(2), d)]
        }
        _ => return None,
    };
    Some(outputs)
}

/// Range's length `ceil((limit - start) / delta)` for a positive static delta, when
/// `limit - start` is provably not negative (a sum of sizes); else unknown (data-dependent).
fn range_length(ctx: &Ctx) -> Option<Dim> {
    let (start, limit, delta) = (ctx.values(0)?, ctx.values(1)?, ctx.static_ints(2)?);
    let ([start], [limit], [delta]) = (&start[..], &limit[..], &delta[..]) else {
        return None;
    };
    let span = limit.sub(start);
    if let Some(s) = span.as_static() {
        return Some(Dim::from(s.max(0)).ceil_div(&Dim::from(*delta)));
    }
    (*delta > 0 && span.non_negative()).then(|| span.ceil_div(&Dim::from(*delta)))
}

/// Conv (`with_weights`) and pooling: `[N, M or C, spatial...]`, each spatial size
/// `floor((d + pads - dilation*(k-1) - 1) / stride) + 1` (ceil with `ceil_mode`), or the
/// `auto_pad` rules.
fn conv_like(ctx: &Ctx, with_weights: bool) -> Option<Vec<Dim>> {
    let x = ctx.dims(0)?;
    (x.len() >= 3).then_some(())?;
    let spatial = x.len() - 2;
    let (channels, kernel) = if with_weights {
        let w = ctx.dims(1)?;
        (w.len() == x.len()).then_some(())?;
        let kernel = match ints_attr(ctx.node, "kernel_shape").ok()? {
            Some(k) => k.into_iter().map(Dim::from).collect(),
            None => w[2..].to_vec(),
        };
        (w[0].clone(), kernel)
    } else {
        let k = ints_attr(ctx.node, "kernel_shape").ok()??;
        (x[1].clone(), k.into_iter().map(Dim::from).collect())
    };
    let strides = ints_attr(ctx.node, "strides")
        .ok()?
        .unwrap_or(vec![1; spatial]);
    let dilations = ints_attr(ctx.node, "dilations")
        .ok()?
        .unwrap_or(vec![1; spatial]);
    let pads = ints_attr(ctx.node, "pads")
        .ok()?
        .unwrap_or(vec![0; 2 * spatial]);
    let ceil_mode = ctx.int("ceil_mode", 0)? != 0;
    let auto_pad = crate::graph::attr(ctx.node, "auto_pad")
        .and_then(|a| a.s.as_deref())
        .unwrap_or(b"NOTSET");
    let sizes_ok = kernel.len() == spatial
        && strides.len() == spatial
        && dilations.len() == spatial
        && pads.len() == 2 * spatial
        && strides.iter().all(|&s| s > 0);
    sizes_ok.then_some(())?;
    let mut out = vec![x[0].clone(), channels];
    for i in 0..spatial {
        let d = &x[i + 2];
        let stride = Dim::from(strides[i]);
        let reach = Dim::from(dilations[i]).mul(&kernel[i].sub(&Dim::from(1)));
        let size = match auto_pad {
            b"SAME_UPPER" | b"SAME_LOWER" => d.ceil_div(&stride),
            b"VALID" => d.sub(&reach).ceil_div(&stride),
            b"NOTSET" => {
                let span = d
                    .add(&Dim::from(pads[i]))
                    .add(&Dim::from(pads[i + spatial]))
                    .sub(&reach)
                    .sub(&Dim::from(1));
                let steps = if ceil_mode {
                    span.ceil_div(&stride)
                } else {
                    span.floor_div(&stride)
                };
                steps.add(&Dim::from(1))
            }
            _ => return None,
        };
        out.push(size);
    }
    Some(out)
}

/// ConvTranspose: `stride*(d-1) + output_padding + dilation*(k-1) + 1 - pads`, or
/// `output_shape`.
fn conv_transpose(ctx: &Ctx) -> Option<Vec<Dim>> {
    let (x, w) = (ctx.dims(0)?, ctx.dims(1)?);
    (x.len() >= 3 && w.len() == x.len()).then_some(())?;
    let spatial = x.len() - 2;
    let group = ctx.int("group", 1)?;
    let mut out = vec![x[0].clone(), w[1].mul(&Dim::from(group))];
    if let Some(shape) = ints_attr(ctx.node, "output_shape").ok()? {
        (shape.len() == spatial).then_some(())?;
        out.extend(shape.into_iter().map(Dim::from));
        return Some(out);
    }
    if crate::graph::attr(ctx.node, "auto_pad").is_some() {
        return None;
    }
    let kernel: Vec<Dim> = match ints_attr(ctx.node, "kernel_shape").ok()? {
        Some(k) => k.into_iter().map(Dim::from).collect(),
        None => w[2..].to_vec(),
    };
    let attr = |n: &str, default: i64, len: usize| {
        ints_attr(ctx.node, n)
            .ok()
            .map(|v| v.unwrap_or(vec![default; len]))
    };
    let (strides, dilations) = (attr("strides", 1, spatial)?, attr("dilations", 1, spatial)?);
    let (pads, extra) = (
        attr("pads", 0, 2 * spatial)?,
        attr("output_padding", 0, spatial)?,
    );
    let ok = kernel.len() == spatial
        && strides.len() == spatial
        && dilations.len() == spatial
        && pads.len() == 2 * spatial
        && extra.len() == spatial;
    ok.then_some(())?;
    for i in 0..spatial {
        let grown = x[i + 2].sub(&Dim::from(1)).mul(&Dim::from(strides[i]));
        let reach = Dim::from(dilations[i]).mul(&kernel[i].sub(&Dim::from(1)));
        // Dim's checked arithmetic: fuzzed attributes near i64::MAX must not overflow.
        let fixed = Dim::from(extra[i])
            .add(&Dim::from(1))
            .sub(&Dim::from(pads[i]))
            .sub(&Dim::from(pads[i + spatial]));
        out.push(grown.add(&reach).add(&fixed));
    }
    Some(out)
}

/// numpy matmul: 1-D operands are promoted and the added axis removed; batch axes broadcast.
pub fn matmul(ctx: &Ctx, a: &[Dim], b: &[Dim]) -> Option<Vec<Dim>> {
    (!a.is_empty() && !b.is_empty()).then_some(())?;
    let a_batch = &a[..a.len().saturating_sub(2)];
    let b_batch = &b[..b.len().saturating_sub(2)];
    let mut out = super::elementwise::broadcast(a_batch, b_batch, |axis| ctx.fresh(0, axis));
    if a.len() >= 2 {
        out.push(a[a.len() - 2].clone());
    }
    if b.len() >= 2 {
        out.push(b[b.len() - 1].clone());
    }
    Some(out)
}

/// Reductions: axes from the attribute or (opset 13+ ReduceSum, 18+ the others) input 1;
/// no axes reduces all, unless `noop_with_empty_axes`.
fn reduce(ctx: &Ctx) -> Option<Vec<Dim>> {
    let d = ctx.dims(0)?;
    let keep = ctx.int("keepdims", 1)? != 0;
    let axes = match ctx.ints_or_input("axes", 1)? {
        Some(a) if !a.is_empty() => a,
        _ if ctx.int("noop_with_empty_axes", 0)? != 0 => return Some(d),
        _ => (0..d.len() as i64).collect(),
    };
    let axes: Vec<usize> = axes
        .iter()
        .map(|&a| axis_in(a, d.len()))
        .collect::<Option<_>>()?;
    Some(
        d.into_iter()
            .enumerate()
            .filter_map(|(i, x)| match (axes.contains(&i), keep) {
                (false, _) => Some(x),
                (true, true) => Some(Dim::from(1)),
                (true, false) => None,
            })
            .collect(),
    )
}

/// Einsum's output: each output letter's size from the operand that has it (`->` explicit, or
/// the letters used once, sorted). Equations with an ellipsis are not inferred.
fn einsum(ctx: &Ctx) -> Option<Vec<Dim>> {
    let equation = crate::graph::attr(ctx.node, "equation")?.s.as_deref()?;
    let equation: String = std::str::from_utf8(equation)
        .ok()?
        .split_whitespace()
        .collect();
    (!equation.contains('.')).then_some(())?;
    let (operands, output) = match equation.split_once("->") {
        Some((ins, out)) => (ins.to_string(), Some(out.to_string())),
        None => (equation.clone(), None),
    };
    let mut sizes: std::collections::HashMap<char, Dim> = std::collections::HashMap::new();
    let mut uses: std::collections::BTreeMap<char, usize> = std::collections::BTreeMap::new();
    for (slot, letters) in operands.split(',').enumerate() {
        let dims = ctx.dims(slot)?;
        (dims.len() == letters.chars().count()).then_some(())?;
        for (letter, d) in letters.chars().zip(dims) {
            *uses.entry(letter).or_default() += 1;
            // A size of 1 broadcasts: another operand's size for the letter wins.
            match sizes.get(&letter) {
                Some(known) if known.as_static() != Some(1) => {}
                _ => {
                    sizes.insert(letter, d);
                }
            }
        }
    }
    let output = output.unwrap_or_else(|| {
        uses.iter()
            .filter(|(_, &n)| n == 1)
            .map(|(&c, _)| c)
            .collect()
    });
    output.chars().map(|c| sizes.get(&c).cloned()).collect()
}
