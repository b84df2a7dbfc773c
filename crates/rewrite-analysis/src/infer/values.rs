//! The values of small integer tensors, as sizes: what exports compute with `Shape`, `Gather`,
//! `Concat`, arithmetic and `Where(Equal(s, -1), 1, s)` before Reshape, Expand, TopK, Range.

use super::{axis_in, Ctx, Dim};
use crate::graph::{attr, int_attr, ints_attr, tensor_integral, tensor_ints};
use nonzero_proto::onnx::tensor_proto::DataType;

/// Longest value list tracked (shapes and axes are short).
pub const MAX_VALUES: usize = 64;

/// The flattened values of output 0, when proven.
pub fn infer_values(op: &str, ctx: &Ctx) -> Option<Vec<Dim>> {
    let values = match op {
        "Constant" => if let Ok(Some(v)) = ints_attr(ctx.node, "value_ints") {
            v
        } else if let Ok(Some(v)) = int_attr(ctx.node, "value_int") {
            vec![v]
        } else {
            tensor_integral(attr(ctx.node, "value")?.t.as_ref()?)?
        }
        .into_iter()
        .map(Dim::from)
        .collect(),
        "Shape" => {
            let d = ctx.dims(0)?;
            let (start, end) = super::layout::shape_range(ctx, d.len() as i64)?;
            d.get(start as usize..end.max(start) as usize)?.to_vec()
        }
        "Size" => vec![Dim::product(&ctx.dims(0)?)],
        "Identity" | "Squeeze" | "Unsqueeze" | "Reshape" | "Flatten" => ctx.values(0)?,
        // Integer casts keep values; a cast to bool or float is not tracked.
        "Cast" => {
            let to = ctx.int("to", 0)?;
            // Integers keep their values; so do sizes cast to float (exact below 2^24, far
            // beyond any axis an anchor grid or a Range is built over).
            let kept = [
                DataType::Int32,
                DataType::Int64,
                DataType::Float,
                DataType::Double,
            ];
            kept.iter()
                .any(|&t| t as i64 == to)
                .then(|| ctx.values(0))??
        }
        "Concat" => (0..ctx.node.input.len())
            .map(|i| ctx.values(i))
            .collect::<Option<Vec<_>>>()?
            .concat(),
        "Gather" => {
            let data = ctx.values(0)?;
            (ctx.dims(0)?.len() == 1 && ctx.int("axis", 0)? == 0).then_some(())?;
            let n = data.len();
            ctx.static_ints(1)?
                .into_iter()
                .map(|i| data.get(axis_in(i, n)?).cloned())
                .collect::<Option<_>>()?
        }
        "Slice" => {
            let data = ctx.values(0)?;
            (ctx.dims(0)?.len() == 1).then_some(())?;
            let (s, e) = (ctx.static_ints(1)?, ctx.static_ints(2)?);
            let step = if ctx.has_input(4) {
                ctx.static_ints(4)?
            } else {
                vec![1]
            };
            (s.len() == 1 && e.len() == 1 && step == [1]).then_some(())?;
            let n = data.len() as i64;
            let clamp = |v: i64| if v < 0 { (v + n).max(0) } else { v.min(n) };
            let (s, e) = (clamp(s[0]) as usize, clamp(e[0]) as usize);
            data.get(s..e.max(s))?.to_vec()
        }
        "Add" | "Sub" | "Mul" | "Div" | "Max" | "Min" => arithmetic(op, ctx)?,
        "Neg" => ctx.values(0)?.iter().map(Dim::neg).collect(),
        "Equal" => compare_static(ctx)?,
        "Where" => {
            let (c, a, b) = (ctx.static_ints(0)?, ctx.values(1)?, ctx.values(2)?);
            let n = c.len().max(a.len()).max(b.len());
            let at = |v: &[Dim], i: usize| v.get(if v.len() == 1 { 0 } else { i }).cloned();
            (0..n)
                .map(|i| {
                    let pick = *c.get(if c.len() == 1 { 0 } else { i })? != 0;
                    if pick {
                        at(&a, i)
                    } else {
                        at(&b, i)
                    }
                })
                .collect::<Option<_>>()?
        }
        "ConstantOfShape" => {
            let shape = ctx.static_ints(0)?;
            let n = usize::try_from(crate::dims::checked_numel(&shape)?).ok()?;
            let fill = match attr(ctx.node, "value").and_then(|a| a.t.as_ref()) {
                Some(t) => *tensor_ints(t)?.first()?,
                None => return None,
            };
            (n <= MAX_VALUES).then_some(())?;
            vec![Dim::from(fill); n]
        }
        "ReduceProd" if ctx.dims(0)?.len() == 1 => vec![Dim::product(&ctx.values(0)?)],
        // A 1-D sum over its one axis (a count of differing sizes, in the size guard);
        // `noop_with_empty_axes` with no axes would be the input itself.
        "ReduceSum" if ctx.dims(0)?.len() == 1 && ctx.int("noop_with_empty_axes", 0)? == 0 => {
            let values = ctx.values(0)?;
            let sum = values
                .iter()
                .skip(1)
                .fold(values.first()?.clone(), |a, b| a.add(b));
            vec![sum]
        }
        // Of bools known as 0 and 1 (what Equal's values are).
        "Not" => ctx
            .static_ints(0)?
            .into_iter()
            .map(|v| matches!(v, 0 | 1).then(|| Dim::from(1 - v)))
            .collect::<Option<_>>()?,
        _ => return None,
    };
    (values.len() <= MAX_VALUES).then_some(values)
}

/// Element-wise integer arithmetic on value lists (one of them may be a single value).
fn arithmetic(op: &str, ctx: &Ctx) -> Option<Vec<Dim>> {
    let (a, b) = (ctx.values(0)?, ctx.values(1)?);
    let n = a.len().max(b.len());
    let integer =
        [DataType::Int32 as i32, DataType::Int64 as i32].contains(&ctx.elem(0).unwrap_or(0));
    if (a.len() != n && a.len() != 1) || (b.len() != n && b.len() != 1) {
        return None;
    }
    (0..n)
        .map(|i| {
            let x = &a[if a.len() == 1 { 0 } else { i }];
            let y = &b[if b.len() == 1 { 0 } else { i }];
            match op {
                "Add" => Some(x.add(y)),
                "Sub" => Some(x.sub(y)),
                "Mul" => Some(x.mul(y)),
                // Integer division truncates (float values here are integral: a float quotient
                // is tracked only when exact).
                "Div" => match (x.as_static(), y.as_static()) {
                    (Some(p), Some(q)) if q != 0 && (p % q == 0 || integer) => {
                        Some(Dim::from(p / q))
                    }
                    (Some(_), Some(_)) => None,
                    _ => x.exact_div(y),
                },
                "Max" | "Min" => {
                    let (p, q) = (x.as_static()?, y.as_static()?);
                    Some(Dim::from(if op == "Max" { p.max(q) } else { p.min(q) }))
                }
                _ => None,
            }
        })
        .collect()
}

/// `Equal` of value lists, decided only where it is certain: two numbers, or a size (a
/// non-negative expression with a symbol) against a negative number.
fn compare_static(ctx: &Ctx) -> Option<Vec<Dim>> {
    let (a, b) = (ctx.values(0)?, ctx.values(1)?);
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = a.get(if a.len() == 1 { 0 } else { i })?;
            let y = b.get(if b.len() == 1 { 0 } else { i })?;
            let equal = match (x.as_static(), y.as_static()) {
                (Some(p), Some(q)) => p == q,
                (None, Some(q)) if q < 0 && x.non_negative() => false,
                (Some(p), None) if p < 0 && y.non_negative() => false,
                _ if x == y => true,
                _ => return None,
            };
            Some(Dim::from(i64::from(equal)))
        })
        .collect()
}
