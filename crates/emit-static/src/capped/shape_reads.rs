//! Reads of a padded tensor's shape ([`super::follow`]): the vector and the length as they move
//! through Gather, Slice, Cast, Unsqueeze, Squeeze and Concat, and `arange(length)`.

use super::follow::{arg, refuse, Reach};
use super::known::{axis_in, ints, rank, size};
use super::length::{Step, Steps};
use crate::graph::int_attr;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// Reads of a shape vector or length: Gather, Slice, Cast, Unsqueeze, Squeeze and Concat move
/// the padded entry; Range(0, length, 1) is frames padded alike. `Ok(None)`: not one of these.
pub(super) fn shape_step(
    view: &View,
    node: &NodeProto,
    op: &str,
    reads: &[Option<&Reach>],
) -> Result<Option<Option<Reach>>, String> {
    let only_first = reads.iter().skip(1).all(Option::is_none);
    // A shape put together from parts reads the padded one at any slot.
    let first = match op {
        "Concat" | "Add" | "Mul" => reads.iter().copied().flatten().next(),
        _ => reads.first().copied().flatten(),
    };
    let Some(first) = first else {
        return Ok(None);
    };
    if let Some(r) = length_arithmetic(view, node, op, reads)? {
        return Ok(Some(Some(r)));
    }
    let steps = match first {
        Reach::ShapeOf { steps, .. } | Reach::Length { steps } => steps.clone(),
        Reach::Frames { .. }
        | Reach::Joined { .. }
        | Reach::Exact { .. }
        | Reach::Merged { .. }
        | Reach::Strided { .. }
        | Reach::Linear { .. } => return Ok(None),
    };
    let len = |name: &str| size(view, name, 0);
    Ok(Some(match (op, first) {
        ("Cast" | "Identity", _) => Some(first.clone()),
        ("Gather", Reach::ShapeOf { entry, .. }) if only_first => {
            let n = len(arg(node, 0)?).ok_or("")?;
            let indices = ints(view, arg(node, 1)?).ok_or("")?;
            let scalar = rank(view, arg(node, 1)?) == Some(0);
            let at: Vec<usize> = indices
                .iter()
                .map(|&i| axis_in(i, n as usize))
                .collect::<Option<_>>()
                .ok_or("")?;
            match at.iter().position(|a| a == entry) {
                Some(_) if scalar => Some(Reach::Length { steps }),
                Some(p) => Some(Reach::ShapeOf { entry: p, steps }),
                None => None,
            }
        }
        ("Slice", Reach::ShapeOf { entry, .. }) if only_first => {
            let n = len(arg(node, 0)?).ok_or("")?;
            let (starts, ends) = (
                ints(view, arg(node, 1)?).ok_or("")?,
                ints(view, arg(node, 2)?).ok_or("")?,
            );
            let unit_step = node
                .input
                .get(4)
                .filter(|s| !s.is_empty())
                .is_none_or(|s| ints(view, s).as_deref() == Some(&[1]));
            let ([start], [end], true) = (starts.as_slice(), ends.as_slice(), unit_step) else {
                return refuse("a Slice of the shape with a step");
            };
            let clamp = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n) as usize;
            let (start, end) = (clamp(*start), clamp(*end));
            (start..end).contains(entry).then(|| Reach::ShapeOf {
                entry: entry - start,
                steps,
            })
        }
        // `zeros(shape)`: padded alike (its padding holds the fill).
        ("ConstantOfShape", Reach::ShapeOf { entry, .. }) => Some(Reach::Frames {
            axis: *entry,
            rank: len(arg(node, 0)?).ok_or("")? as usize,
            steps,
        }),
        // The length plus a constant, or times one (`L + 1`, `0 + L`): a length by one more
        // step. Only offsets and scales that keep it a length (at least 0, at least 1).
        // A one-element shape vector of the length times a tensor of values: a stride too.
        ("Mul", Reach::ShapeOf { entry: 0, .. }) => {
            let ([a, b], 1) = (node.input.as_slice(), reads.iter().flatten().count()) else {
                return refuse("an arithmetic step of the padded length");
            };
            let (mine, other) = if reads[0].is_some() { (a, b) } else { (b, a) };
            if len(mine) != Some(1) || ints(view, other).is_some() {
                return refuse("the padded length read as a value");
            }
            Some(Reach::Strided {
                of: other.clone(),
                steps,
            })
        }
        ("Add" | "Mul", Reach::Length { .. }) => {
            let ([a, b], 1) = (node.input.as_slice(), reads.iter().flatten().count()) else {
                return refuse("an arithmetic step of the padded length");
            };
            let other = if reads[0].is_some() { b } else { a };
            let value = match ints(view, other).as_deref() {
                Some(&[v]) if rank(view, other).is_some_and(|r| r <= 1) => v,
                // A tensor of values times the length: a linear index's stride
                // ([`super::linear`]), read only there.
                None if op == "Mul" => {
                    return Ok(Some(Some(Reach::Strided {
                        of: other.clone(),
                        steps,
                    })))
                }
                _ => return refuse("the padded length read as a value"),
            };
            let step = match op {
                "Add" if value >= 0 => Step::Affine {
                    scale: 1,
                    offset: value,
                },
                "Mul" if value >= 1 => Step::Affine {
                    scale: value,
                    offset: 0,
                },
                _ => return refuse("the padded length read as a value"),
            };
            Some(Reach::Length {
                steps: steps.then(step).ok_or("")?,
            })
        }
        ("Unsqueeze", Reach::Length { .. }) => Some(Reach::ShapeOf { entry: 0, steps }),
        ("Squeeze", Reach::ShapeOf { entry: 0, .. }) if len(arg(node, 0)?) == Some(1) => {
            Some(Reach::Length { steps })
        }
        ("Concat", _) => {
            let mut offset = 0;
            let mut found = None;
            for (name, r) in node.input.iter().zip(reads) {
                match r {
                    Some(Reach::ShapeOf { entry, steps }) if found.is_none() => {
                        found = Some((offset + entry, steps.clone()))
                    }
                    Some(_) => return refuse("a shape with two padded lengths"),
                    None => {}
                }
                offset += len(name).ok_or("")? as usize;
            }
            found.map(|(entry, steps)| Reach::ShapeOf { entry, steps })
        }
        _ => return Ok(None),
    }))
}

/// Two lengths' difference, and a length plus such a difference: `Sub(L + c, L)` is `c` in the
/// original and at the capacity alike ([`Reach::Exact`]); `L + c` for `c >= 0` is a length by
/// one more step (Longformer's `L + (size - L)`, the joined axis's end). `Ok(None)`: neither.
fn length_arithmetic(
    view: &View,
    node: &NodeProto,
    op: &str,
    reads: &[Option<&Reach>],
) -> Result<Option<Reach>, String> {
    let (Some(Some(a)), Some(Some(b)), 2) = (reads.first(), reads.get(1), node.input.len()) else {
        return Ok(None);
    };
    let scalar = |slot: usize| rank(view, &node.input[slot]).is_some_and(|r| r == 0);
    match (op, a, b) {
        ("Sub", Reach::Length { steps: a }, Reach::Length { steps: b })
            if scalar(0) && scalar(1) =>
        {
            // a = b + d for one constant d: its value at any length (one past every clamp).
            let at = 1 << 40;
            let d = a
                .eval(at)
                .zip(b.eval(at))
                .and_then(|(x, y)| x.checked_sub(y))
                .ok_or("")?;
            let same = b.then(Step::Affine {
                scale: 1,
                offset: d,
            });
            if same.as_ref() != Some(a) {
                return refuse("a difference of two lengths that depends on the length");
            }
            Ok(Some(Reach::Exact { value: d }))
        }
        ("Add", Reach::Length { steps }, Reach::Exact { value })
        | ("Add", Reach::Exact { value }, Reach::Length { steps })
            if *value >= 0 =>
        {
            let step = Step::Affine {
                scale: 1,
                offset: *value,
            };
            Ok(Some(Reach::Length {
                steps: steps.then(step).ok_or("")?,
            }))
        }
        _ => Ok(None),
    }
}

/// What `Shape` of a tensor padded along `axis` of rank `rank` makes: the padded length, after
/// `steps`, at its entry (Shape's start and end: negative from the rank, clamped to [0, rank]).
pub(super) fn shape(
    node: &NodeProto,
    rank: usize,
    axis: usize,
    steps: Steps,
) -> Result<Vec<Option<Reach>>, String> {
    let bound = |name: &str, default: i64| -> Result<usize, String> {
        let v = int_attr(node, name).map_err(|_| "")?.unwrap_or(default);
        let v = if v < 0 {
            v.saturating_add(rank as i64)
        } else {
            v
        };
        Ok(v.clamp(0, rank as i64) as usize)
    };
    let (start, end) = (bound("start", 0)?, bound("end", rank as i64)?);
    Ok(vec![(start..end).contains(&axis).then(|| Reach::ShapeOf {
        entry: axis - start,
        steps,
    })])
}

/// True for a one-element constant equal to `value` (integer or float).
pub(super) fn constant_is(view: &View, name: &str, value: i64) -> bool {
    if let Some(v) = ints(view, name) {
        return v == [value];
    }
    view.index
        .const_floats(view.graph, name)
        .is_some_and(|v| v == [value as f32])
}
