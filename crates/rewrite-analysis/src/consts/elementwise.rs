//! Element-wise values: numpy broadcasting, unary and binary arithmetic, comparisons, Where
//! and Cast, each with ONNX Runtime's arithmetic (float32 stays float32; integers wrap in their
//! type; integer Div truncates). A case whose result ONNX leaves undefined (a division by zero
//! in integers, a float cast out of an integer's range, a NaN in Min or Max) is no value.

use super::{element_count, int_kind, strides, wrap, Const, Data};
use nonzero_proto::onnx::tensor_proto::DataType;

const BOOL: i32 = DataType::Bool as i32;

/// numpy's broadcast of `shapes`, when they are compatible and the result is a value
/// ([`element_count`]: `[65536, 1]` against `[1, 65536]` is 2^32 elements, and is none).
pub fn broadcast_shape(shapes: &[&[usize]]) -> Option<Vec<usize>> {
    let rank = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let out: Vec<usize> = (0..rank)
        .map(|axis| {
            let mut size = 1;
            for s in shapes {
                let Some(at) = (axis + s.len()).checked_sub(rank) else {
                    continue;
                };
                match (size, s[at]) {
                    (_, 1) => {}
                    (1, d) => size = d,
                    (a, d) if a == d => {}
                    _ => return None,
                }
            }
            Some(size)
        })
        .collect::<Option<_>>()?;
    element_count(&out)?;
    Some(out)
}

/// For each element of a tensor of shape `out`, the index of the element of `input` (of shape
/// `dims`, broadcast to `out`) that it reads.
pub fn broadcast_indices(dims: &[usize], out: &[usize]) -> Vec<usize> {
    let count: usize = out.iter().product();
    let offset = out.len() - dims.len();
    let in_strides = strides(dims);
    let out_strides = strides(out);
    (0..count)
        .map(|flat| {
            (0..dims.len())
                .map(|a| {
                    let coordinate = flat / out_strides[a + offset] % out[a + offset];
                    if dims[a] == 1 {
                        0
                    } else {
                        coordinate * in_strides[a]
                    }
                })
                .sum()
        })
        .collect()
}

/// `x` broadcast to `out`.
fn spread(x: &Const, out: &[usize]) -> Data {
    if x.dims == out {
        return x.data.clone();
    }
    x.data.pick(&broadcast_indices(&x.dims, out))
}

/// A unary op on one value.
pub fn unary(op: &str, x: &Const) -> Option<Const> {
    let data = match (&x.data, op) {
        (Data::Int(v), "Not") if x.elem_type == BOOL => {
            Data::Int(v.iter().map(|&b| 1 - b).collect())
        }
        (Data::Int(v), "Neg") => Data::Int(v.iter().map(|&a| a.wrapping_neg()).collect()),
        (Data::Int(v), "Abs") => Data::Int(v.iter().map(|&a| a.wrapping_abs()).collect()),
        (Data::Int(v), "Sign") => Data::Int(v.iter().map(|&a| a.signum()).collect()),
        (Data::F32(v), _) => Data::F32(
            v.iter()
                .map(|&a| float_unary(op, f64::from(a)).map(|r| r as f32))
                .collect::<Option<_>>()?,
        ),
        (Data::F64(v), _) => Data::F64(
            v.iter()
                .map(|&a| float_unary(op, a))
                .collect::<Option<_>>()?,
        ),
        _ => return None,
    };
    Const::new(x.elem_type, x.dims.clone(), data)
}

/// One float op. Computed in f64 and rounded once to f32 where the input is f32: for these
/// ops (correctly rounded in IEEE: negation, abs, ceil, floor, round, sqrt, 1/x) that is exactly
/// float32's result. Exp and Log are not correctly rounded anywhere, so they are not folded.
fn float_unary(op: &str, a: f64) -> Option<f64> {
    Some(match op {
        "Neg" => -a,
        "Abs" => a.abs(),
        "Ceil" => a.ceil(),
        "Floor" => a.floor(),
        "Round" => a.round_ties_even(),
        "Sqrt" => a.sqrt(),
        "Reciprocal" => 1.0 / a,
        "Sign" => {
            if a == 0.0 || a.is_nan() {
                a
            } else {
                a.signum()
            }
        }
        _ => return None,
    })
}

/// A binary op (Min and Max of more inputs fold pairwise).
pub fn binary(op: &str, a: &Const, b: &Const, fmod: bool) -> Option<Const> {
    if a.elem_type != b.elem_type {
        return None;
    }
    let out = broadcast_shape(&[&a.dims, &b.dims])?;
    let compare = matches!(
        op,
        "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual"
    );
    let (x, y) = (spread(a, &out), spread(b, &out));
    let (elem_type, data) = match (&x, &y) {
        (Data::Int(x), Data::Int(y)) => {
            let kind = int_kind(a.elem_type)?;
            let logical = a.elem_type == BOOL && matches!(op, "And" | "Or" | "Xor");
            if !compare && !logical && a.elem_type == BOOL {
                return None;
            }
            let v = x
                .iter()
                .zip(y)
                .map(|(&p, &q)| {
                    int_op(op, p, q, fmod).map(|r| if compare { r } else { wrap(r, kind) })
                })
                .collect::<Option<_>>()?;
            (if compare { BOOL } else { a.elem_type }, Data::Int(v))
        }
        (Data::F32(x), Data::F32(y)) => {
            let v: Vec<f64> = x
                .iter()
                .zip(y)
                .map(|(&p, &q)| float_op(op, f64::from(p), f64::from(q), true))
                .collect::<Option<_>>()?;
            match compare {
                true => (BOOL, Data::Int(v.into_iter().map(|r| r as i64).collect())),
                false => (
                    a.elem_type,
                    Data::F32(v.into_iter().map(|r| r as f32).collect()),
                ),
            }
        }
        (Data::F64(x), Data::F64(y)) => {
            let v: Vec<f64> = x
                .iter()
                .zip(y)
                .map(|(&p, &q)| float_op(op, p, q, false))
                .collect::<Option<_>>()?;
            match compare {
                true => (BOOL, Data::Int(v.into_iter().map(|r| r as i64).collect())),
                false => (a.elem_type, Data::F64(v)),
            }
        }
        _ => return None,
    };
    Const::new(elem_type, out, data)
}

fn int_op(op: &str, p: i64, q: i64, fmod: bool) -> Option<i64> {
    Some(match op {
        "Add" => p.wrapping_add(q),
        "Sub" => p.wrapping_sub(q),
        "Mul" => p.wrapping_mul(q),
        "Div" => p.checked_div(q)?,
        "Mod" => {
            let r = p.checked_rem(q)?;
            // fmod=0: the remainder takes the divisor's sign (Python's %).
            if !fmod && r != 0 && (r < 0) != (q < 0) {
                r + q
            } else {
                r
            }
        }
        "Min" => p.min(q),
        "Max" => p.max(q),
        "Equal" => i64::from(p == q),
        "Less" => i64::from(p < q),
        "Greater" => i64::from(p > q),
        "LessOrEqual" => i64::from(p <= q),
        "GreaterOrEqual" => i64::from(p >= q),
        "And" => p & q,
        "Or" => p | q,
        "Xor" => p ^ q,
        _ => return None,
    })
}

/// One float op, in f64. For f32 operands (`single`), +, -, * and / rounded to f64 and then to
/// f32 give float32's own result: rounding twice is innocuous when the wider format has at least
/// 2p + 2 bits (53 >= 2 * 24 + 2). The quotient is computed in f32 all the same.
fn float_op(op: &str, p: f64, q: f64, single: bool) -> Option<f64> {
    let bool = |b: bool| f64::from(u8::from(b));
    Some(match op {
        "Add" => p + q,
        "Sub" => p - q,
        "Mul" => p * q,
        "Div" if single => f64::from((p as f32) / (q as f32)),
        "Div" => p / q,
        "Mod" => p % q,
        "Min" | "Max" if p.is_nan() || q.is_nan() => return None,
        "Min" => p.min(q),
        "Max" => p.max(q),
        "Equal" => bool(p == q),
        "Less" => bool(p < q),
        "Greater" => bool(p > q),
        "LessOrEqual" => bool(p <= q),
        "GreaterOrEqual" => bool(p >= q),
        _ => return None,
    })
}

/// `Where(cond, x, y)`.
pub fn select(cond: &Const, x: &Const, y: &Const) -> Option<Const> {
    if cond.elem_type != BOOL || x.elem_type != y.elem_type {
        return None;
    }
    let out = broadcast_shape(&[&cond.dims, &x.dims, &y.dims])?;
    let c = broadcast_indices(&cond.dims, &out);
    let (xi, yi) = (
        broadcast_indices(&x.dims, &out),
        broadcast_indices(&y.dims, &out),
    );
    let flags = cond.ints()?;
    let from_x: Vec<bool> = c.iter().map(|&i| flags[i] != 0).collect();
    let choose = |i: usize| if from_x[i] { (0, xi[i]) } else { (1, yi[i]) };
    let data = match (&x.data, &y.data) {
        (Data::Int(a), Data::Int(b)) => Data::Int(
            (0..out.iter().product())
                .map(|i| match choose(i) {
                    (0, j) => a[j],
                    (_, j) => b[j],
                })
                .collect(),
        ),
        (Data::F32(a), Data::F32(b)) => Data::F32(
            (0..out.iter().product())
                .map(|i| match choose(i) {
                    (0, j) => a[j],
                    (_, j) => b[j],
                })
                .collect(),
        ),
        (Data::F64(a), Data::F64(b)) => Data::F64(
            (0..out.iter().product())
                .map(|i| match choose(i) {
                    (0, j) => a[j],
                    (_, j) => b[j],
                })
                .collect(),
        ),
        _ => return None,
    };
    Const::new(x.elem_type, out, data)
}

/// `Cast(x, to)`: integers wrap into a narrower type; a float becomes an integer by truncation,
/// and only within the target's range (outside it C++ leaves the result undefined).
pub fn cast(x: &Const, to: i32) -> Option<Const> {
    let data = match (&x.data, DataType::try_from(to).ok()?) {
        (Data::Int(v), DataType::Float) => Data::F32(v.iter().map(|&a| a as f32).collect()),
        (Data::Int(v), DataType::Double) => Data::F64(v.iter().map(|&a| a as f64).collect()),
        (Data::Int(v), _) => Data::Int(v.clone()),
        (data, DataType::Float) => Data::F32(data.as_f64().into_iter().map(|a| a as f32).collect()),
        (data, DataType::Double) => Data::F64(data.as_f64()),
        (data, _) => {
            let kind = int_kind(to)?;
            // The integers of the target type: [lo, hi).
            let (lo, hi) = match kind {
                (1, _) => (f64::NEG_INFINITY, f64::INFINITY),
                (bits, true) => (-(2f64.powi(bits as i32 - 1)), 2f64.powi(bits as i32 - 1)),
                (bits, false) => (0.0, 2f64.powi(bits as i32)),
            };
            Data::Int(
                data.as_f64()
                    .into_iter()
                    .map(|a| match kind.0 {
                        1 => (!a.is_nan()).then_some(i64::from(a != 0.0)),
                        _ => (a.trunc() >= lo && a.trunc() < hi).then_some(a.trunc() as i64),
                    })
                    .collect::<Option<_>>()?,
            )
        }
    };
    Const::new(to, x.dims.clone(), data)
}
