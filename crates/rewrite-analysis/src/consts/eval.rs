//! Which node gives a value: a Constant; Shape and Size of a tensor whose shape is fixed; and
//! any op below whose inputs are all values. Each op reads its attributes and constant operands
//! as its opset writes them (Squeeze's axes as an attribute or an input, Slice's starts...).

use super::elementwise::{binary, cast, select, unary};
use super::layout::{self, axis};
use super::{Const, Data};
use crate::graph::{attr, int_attr, ints_attr};
use crate::infer::Ctx;
use nonzero_proto::onnx::tensor_proto::DataType;

const UNARY: &[&str] = &[
    "Neg",
    "Abs",
    "Ceil",
    "Floor",
    "Round",
    "Sqrt",
    "Reciprocal",
    "Sign",
    "Not",
];
const BINARY: &[&str] = &[
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Mod",
    "Equal",
    "Less",
    "Greater",
    "LessOrEqual",
    "GreaterOrEqual",
    "And",
    "Or",
    "Xor",
];
const REDUCE: &[&str] = &["ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd"];

/// The values of the outputs of `ctx`'s node (an ONNX op at a version the rewriter knows),
/// when the node gives values.
pub fn evaluate(op: &str, ctx: &Ctx) -> Option<Vec<Const>> {
    let one = |c: Option<Const>| c.map(|c| vec![c]);
    match op {
        "Constant" => return one(constant_attr(ctx)),
        "Shape" => {
            let dims = static_shape(ctx)?;
            let (start, end) = crate::infer::shape_range(ctx, dims.len() as i64)?;
            return one(Const::int64s(
                dims.get(start as usize..end.max(start) as usize)?.to_vec(),
            ));
        }
        "Size" => {
            let count = static_shape(ctx)?
                .iter()
                .try_fold(1i64, |a, &d| a.checked_mul(d))?;
            return one(Const::new(
                DataType::Int64 as i32,
                vec![],
                Data::Int(vec![count]),
            ));
        }
        _ => {}
    }
    // Every other op needs every given input to be a value.
    let inputs: Vec<Option<&Const>> = (0..ctx.node.input.len())
        .map(|slot| match ctx.has_input(slot) {
            true => ctx.constant(slot).map(Some),
            false => Some(None),
        })
        .collect::<Option<_>>()?;
    let x = |slot: usize| inputs.get(slot).copied().flatten();
    let ints = |slot: usize| x(slot).and_then(Const::ints).map(<[i64]>::to_vec);
    match op {
        "Identity" => one(x(0).cloned()),
        _ if UNARY.contains(&op) => one(unary(op, x(0)?)),
        _ if BINARY.contains(&op) => one(binary(op, x(0)?, x(1)?, ctx.int("fmod", 0)? != 0)),
        "Min" | "Max" => {
            let mut acc = x(0)?.clone();
            for slot in 1..inputs.len() {
                acc = binary(op, &acc, x(slot)?, false)?;
            }
            one(Some(acc))
        }
        "Where" => one(select(x(0)?, x(1)?, x(2)?)),
        "Cast" => one(cast(x(0)?, i32::try_from(ctx.int("to", 0)?).ok()?)),
        "CastLike" => one(cast(x(0)?, x(1)?.elem_type)),
        "Gather" => {
            let data = x(0)?;
            one(layout::gather(
                data,
                x(1)?,
                axis(ctx.int("axis", 0)?, data.dims.len())?,
            ))
        }
        "Concat" => {
            let parts: Vec<&Const> = (0..inputs.len()).map(x).collect::<Option<_>>()?;
            let rank = parts.first()?.dims.len();
            one(layout::concat(&parts, axis(ctx.int("axis", 0)?, rank)?))
        }
        "Reshape" => {
            let data = x(0)?;
            let dims = layout::reshape_dims(data, &ints(1)?, ctx.int("allowzero", 0)? != 0)?;
            one(layout::reshaped(data, dims))
        }
        "Flatten" => {
            let data = x(0)?;
            let at = ctx.int("axis", 1)?;
            let at = if at < 0 {
                at + data.dims.len() as i64
            } else {
                at
            };
            let at = usize::try_from(at).ok().filter(|&a| a <= data.dims.len())?;
            let dims = vec![
                data.dims[..at].iter().product(),
                data.dims[at..].iter().product(),
            ];
            one(layout::reshaped(data, dims))
        }
        "Squeeze" | "Unsqueeze" => one(squeeze(op, ctx, x(0)?)),
        "Transpose" => {
            let data = x(0)?;
            let rank = data.dims.len();
            let perm = match ints_attr(ctx.node, "perm").ok()? {
                Some(p) => p
                    .iter()
                    .map(|&a| axis(a, rank))
                    .collect::<Option<Vec<_>>>()?,
                None => (0..rank).rev().collect(),
            };
            one(layout::transpose(data, &perm))
        }
        "Slice" => one(slice(ctx, x(0)?, &ints)),
        "Expand" => one(layout::expand(x(0)?, &ints(1)?)),
        "Tile" => one(layout::tile(x(0)?, &ints(1)?)),
        "Range" => one(range(x(0)?, x(1)?, x(2)?)),
        // A selection of a value is a value: `[rank, count]`, row-major (a mask built from
        // sizes alone, as Longformer's padding and VITS's flows build them).
        "NonZero" => one(nonzero(x(0)?)),
        "ConstantOfShape" => {
            let shape: Vec<usize> = ints(0)?
                .iter()
                .map(|&d| usize::try_from(d).ok())
                .collect::<Option<_>>()?;
            let fill = match attr(ctx.node, "value").and_then(|a| a.t.as_ref()) {
                Some(t) => Const::from_tensor(t)?,
                None => Const::new(DataType::Float as i32, vec![1], Data::F32(vec![0.0]))?,
            };
            (fill.len() == 1).then_some(())?;
            one(layout::expand(
                &layout::reshaped(&fill, vec![])?,
                &shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
            ))
        }
        _ if REDUCE.contains(&op) => {
            let data = x(0)?;
            let rank = data.dims.len();
            let axes = match ctx.ints_or_input("axes", 1)? {
                Some(a) if !a.is_empty() => a,
                _ if ctx.int("noop_with_empty_axes", 0)? != 0 => return one(Some(data.clone())),
                _ => (0..rank as i64).collect(),
            };
            let mut axes: Vec<usize> =
                axes.iter().map(|&a| axis(a, rank)).collect::<Option<_>>()?;
            axes.sort_unstable();
            axes.dedup();
            one(layout::reduce(
                op,
                data,
                &axes,
                ctx.int("keepdims", 1)? != 0,
            ))
        }
        _ => None,
    }
}

/// Input 0's shape, when every size is a number.
fn static_shape(ctx: &Ctx) -> Option<Vec<i64>> {
    ctx.dims(0)?.iter().map(|d| d.as_static()).collect()
}

/// A Constant's value, from whichever attribute it has.
fn constant_attr(ctx: &Ctx) -> Option<Const> {
    let node = ctx.node;
    if let Some(t) = attr(node, "value").and_then(|a| a.t.as_ref()) {
        return Const::from_tensor(t);
    }
    if let Ok(Some(v)) = int_attr(node, "value_int") {
        return Const::new(DataType::Int64 as i32, vec![], Data::Int(vec![v]));
    }
    if let Ok(Some(v)) = ints_attr(node, "value_ints") {
        return Const::int64s(v);
    }
    let a = attr(node, "value_float").or_else(|| attr(node, "value_floats"))?;
    match a.name.as_deref() {
        Some("value_float") => Const::new(DataType::Float as i32, vec![], Data::F32(vec![a.f?])),
        _ => Const::new(
            DataType::Float as i32,
            vec![a.floats.len()],
            Data::F32(a.floats.clone()),
        ),
    }
}

/// Squeeze and Unsqueeze: axes as the attribute (opset < 13) or input 1.
fn squeeze(op: &str, ctx: &Ctx, data: &Const) -> Option<Const> {
    let axes = ctx.ints_or_input("axes", 1)?;
    let dims = if op == "Squeeze" {
        let rank = data.dims.len();
        let axes: Vec<usize> = match axes {
            Some(a) => a.iter().map(|&a| axis(a, rank)).collect::<Option<_>>()?,
            None => (0..rank).filter(|&a| data.dims[a] == 1).collect(),
        };
        axes.iter().all(|&a| data.dims[a] == 1).then_some(())?;
        data.dims
            .iter()
            .enumerate()
            .filter(|(a, _)| !axes.contains(a))
            .map(|(_, &d)| d)
            .collect()
    } else {
        let axes = axes?;
        let rank = data.dims.len() + axes.len();
        let axes: Vec<usize> = axes.iter().map(|&a| axis(a, rank)).collect::<Option<_>>()?;
        let mut rest = data.dims.iter();
        (0..rank)
            .map(|a| {
                if axes.contains(&a) {
                    Some(1)
                } else {
                    rest.next().copied()
                }
            })
            .collect::<Option<_>>()?
    };
    layout::reshaped(data, dims)
}

/// Slice: starts, ends, axes, steps as attributes (opset < 10) or inputs 1-4.
fn slice(ctx: &Ctx, data: &Const, ints: &dyn Fn(usize) -> Option<Vec<i64>>) -> Option<Const> {
    let rank = data.dims.len();
    let (starts, ends, axes, steps) = match ints_attr(ctx.node, "starts").ok()? {
        Some(starts) => (
            starts,
            ints_attr(ctx.node, "ends").ok()??,
            ints_attr(ctx.node, "axes").ok()?,
            None,
        ),
        None => (
            ints(1)?,
            ints(2)?,
            if ctx.has_input(3) {
                Some(ints(3)?)
            } else {
                None
            },
            if ctx.has_input(4) {
                Some(ints(4)?)
            } else {
                None
            },
        ),
    };
    let axes: Vec<usize> = match axes {
        Some(a) => a.iter().map(|&a| axis(a, rank)).collect::<Option<_>>()?,
        None => (0..starts.len()).collect(),
    };
    let steps = steps.unwrap_or(vec![1; starts.len()]);
    (starts.len() == axes.len() && ends.len() == axes.len() && steps.len() == axes.len())
        .then_some(())?;
    layout::slice(data, &starts, &ends, &axes, &steps)
}

/// Range as ONNX Runtime computes it: `ceil((limit - start) / delta)` elements (the difference
/// in the element type, the quotient in double), each the previous plus `delta`.
fn range(start: &Const, limit: &Const, delta: &Const) -> Option<Const> {
    let same = start.elem_type == limit.elem_type && limit.elem_type == delta.elem_type;
    (same && start.len() == 1 && limit.len() == 1 && delta.len() == 1).then_some(())?;
    let elem_type = start.elem_type;
    let data = match (&start.data, &limit.data, &delta.data) {
        (Data::Int(s), Data::Int(l), Data::Int(d)) => {
            let (s, l, d) = (s[0], l[0], d[0]);
            (d != 0).then_some(())?;
            let n = ((l.checked_sub(s)? as f64) / d as f64).ceil().max(0.0) as usize;
            (n <= super::MAX_CONST_ELEMENTS).then_some(())?;
            // Wrapping, as ONNX Runtime adds: n rounded up in f64 may step past an int64 bound.
            Data::Int(
                (0..n as i64)
                    .map(|i| s.wrapping_add(i.wrapping_mul(d)))
                    .collect(),
            )
        }
        (Data::F32(s), Data::F32(l), Data::F32(d)) => {
            let (s, l, d) = (s[0], l[0], d[0]);
            let n = (f64::from(l - s) / f64::from(d)).ceil();
            (n.is_finite() && n <= super::MAX_CONST_ELEMENTS as f64).then_some(())?;
            let mut v = Vec::with_capacity(n.max(0.0) as usize);
            let mut value = s;
            for _ in 0..n.max(0.0) as usize {
                v.push(value);
                value += d;
            }
            Data::F32(v)
        }
        _ => return None,
    };
    let n = data.len();
    Const::new(elem_type, vec![n], data)
}

/// `NonZero(x)`: the coordinates of the non-zero elements, one row per axis.
pub(super) fn nonzero(x: &Const) -> Option<Const> {
    let flags = x.data.as_f64();
    let hits: Vec<usize> = (0..flags.len()).filter(|&i| flags[i] != 0.0).collect();
    let rank = x.dims.len();
    let strides = super::strides(&x.dims);
    let mut out = Vec::with_capacity(rank * hits.len());
    for (stride, size) in strides.iter().zip(&x.dims) {
        out.extend(hits.iter().map(|&i| (i / stride % size) as i64));
    }
    Const::new(
        DataType::Int64 as i32,
        vec![rank, hits.len()],
        Data::Int(out),
    )
}
