//! Values that layout ops and reductions make: each output element is picked from, or reduces,
//! elements of the input ([`Data::pick`]), with ONNX's rules for negative indices and axes,
//! Slice's clamping, Reshape's `0` and `-1`.

use super::elementwise::{broadcast_indices, broadcast_shape};
use super::{strides, Const, Data};

/// Normalises `axis` for `rank`.
pub fn axis(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

/// The same elements in a new shape.
pub fn reshaped(x: &Const, dims: Vec<usize>) -> Option<Const> {
    Const::new(x.elem_type, dims, x.data.clone())
}

/// Reshape's target: `0` copies the input's size (unless `allowzero`), one `-1` is inferred.
pub fn reshape_dims(x: &Const, shape: &[i64], allowzero: bool) -> Option<Vec<usize>> {
    let mut dims = Vec::with_capacity(shape.len());
    let mut inferred = None;
    for (i, &s) in shape.iter().enumerate() {
        match s {
            -1 if inferred.is_none() => {
                inferred = Some(i);
                dims.push(1);
            }
            0 if !allowzero => dims.push(*x.dims.get(i)?),
            s => dims.push(usize::try_from(s).ok()?),
        }
    }
    if let Some(at) = inferred {
        let known: usize = dims.iter().product();
        (known != 0 && x.len().is_multiple_of(known)).then_some(())?;
        dims[at] = x.len() / known;
    }
    Some(dims)
}

/// `Transpose` by `perm`.
pub fn transpose(x: &Const, perm: &[usize]) -> Option<Const> {
    (perm.len() == x.dims.len()).then_some(())?;
    let dims: Vec<usize> = perm
        .iter()
        .map(|&p| x.dims.get(p).copied())
        .collect::<Option<_>>()?;
    let (in_strides, out_strides) = (strides(&x.dims), strides(&dims));
    let indices: Vec<usize> = (0..x.len())
        .map(|flat| {
            (0..dims.len())
                .map(|a| flat / out_strides[a] % dims[a] * in_strides[perm[a]])
                .sum()
        })
        .collect();
    Const::new(x.elem_type, dims, x.data.pick(&indices))
}

/// `Gather(x, indices, axis)`.
pub fn gather(x: &Const, indices: &Const, at: usize) -> Option<Const> {
    let size = *x.dims.get(at)?;
    let picks: Vec<usize> = indices
        .ints()?
        .iter()
        .map(|&i| axis(i, size))
        .collect::<Option<_>>()?;
    let dims = [&x.dims[..at], &indices.dims[..], &x.dims[at + 1..]].concat();
    // Bounded before anything is gathered: a small tensor picked many times is a large one.
    let mut out = Vec::with_capacity(super::element_count(&dims)?);
    let outer: usize = x.dims[..at].iter().product();
    let inner: usize = x.dims[at + 1..].iter().product();
    for o in 0..outer {
        for &p in &picks {
            out.extend((0..inner).map(|i| (o * size + p) * inner + i));
        }
    }
    Const::new(x.elem_type, dims, x.data.pick(&out))
}

/// `Slice` over `axes` with `starts`, `ends`, `steps`, clamped as ONNX says.
pub fn slice(
    x: &Const,
    starts: &[i64],
    ends: &[i64],
    axes: &[usize],
    steps: &[i64],
) -> Option<Const> {
    let rank = x.dims.len();
    let mut ranges: Vec<Vec<usize>> = x.dims.iter().map(|&d| (0..d).collect()).collect();
    for (k, &a) in axes.iter().enumerate() {
        let (d, step) = (i64::try_from(x.dims[a]).ok()?, steps[k]);
        (step != 0).then_some(())?;
        let norm = |v: i64| if v < 0 { v.saturating_add(d) } else { v };
        let picked: Vec<usize> = if step > 0 {
            let (s, e) = (norm(starts[k]).clamp(0, d), norm(ends[k]).clamp(0, d));
            (s..e).step_by(step as usize).map(|i| i as usize).collect()
        } else {
            let (s, e) = (
                norm(starts[k]).clamp(-1, d - 1),
                norm(ends[k]).clamp(-1, d - 1),
            );
            let mut v = vec![];
            let mut i = s;
            while i > e {
                v.push(i as usize);
                i += step;
            }
            v
        };
        ranges[a] = picked;
    }
    let dims: Vec<usize> = ranges.iter().map(Vec::len).collect();
    let in_strides = strides(&x.dims);
    let out_strides = strides(&dims);
    let count: usize = dims.iter().product();
    let indices: Vec<usize> = (0..count)
        .map(|flat| {
            (0..rank)
                .map(|a| ranges[a][flat / out_strides[a] % dims[a]] * in_strides[a])
                .sum()
        })
        .collect();
    Const::new(x.elem_type, dims, x.data.pick(&indices))
}

/// `Concat` along `at`.
pub fn concat(parts: &[&Const], at: usize) -> Option<Const> {
    let first = parts.first()?;
    let rank = first.dims.len();
    let same = parts.iter().all(|p| {
        p.elem_type == first.elem_type
            && p.dims.len() == rank
            && (0..rank).all(|a| a == at || p.dims[a] == first.dims[a])
    });
    (same && at < rank).then_some(())?;
    let outer: usize = first.dims[..at].iter().product();
    let mut dims = first.dims.clone();
    dims[at] = parts.iter().map(|p| p.dims[at]).sum();
    let mut values: Vec<Data> = vec![];
    for o in 0..outer {
        for p in parts {
            let block: usize = p.dims[at..].iter().product();
            values.push(
                p.data
                    .pick(&(o * block..(o + 1) * block).collect::<Vec<_>>()),
            );
        }
    }
    let data = match first.data {
        Data::Int(_) => Data::Int(
            values
                .into_iter()
                .flat_map(|d| if let Data::Int(v) = d { v } else { vec![] })
                .collect(),
        ),
        Data::F32(_) => Data::F32(
            values
                .into_iter()
                .flat_map(|d| if let Data::F32(v) = d { v } else { vec![] })
                .collect(),
        ),
        Data::F64(_) => Data::F64(
            values
                .into_iter()
                .flat_map(|d| if let Data::F64(v) = d { v } else { vec![] })
                .collect(),
        ),
    };
    Const::new(first.elem_type, dims, data)
}

/// `Expand(x, shape)`: numpy broadcast of both.
pub fn expand(x: &Const, shape: &[i64]) -> Option<Const> {
    let shape: Vec<usize> = shape
        .iter()
        .map(|&s| usize::try_from(s).ok())
        .collect::<Option<_>>()?;
    let out = broadcast_shape(&[&x.dims, &shape])?;
    Const::new(
        x.elem_type,
        out.clone(),
        x.data.pick(&broadcast_indices(&x.dims, &out)),
    )
}

/// `Tile(x, repeats)`.
pub fn tile(x: &Const, repeats: &[i64]) -> Option<Const> {
    (repeats.len() == x.dims.len()).then_some(())?;
    let dims: Vec<usize> = x
        .dims
        .iter()
        .zip(repeats)
        .map(|(&d, &r)| d.checked_mul(usize::try_from(r).ok()?))
        .collect::<Option<_>>()?;
    let count = super::element_count(&dims)?;
    let (in_strides, out_strides) = (strides(&x.dims), strides(&dims));
    let indices: Vec<usize> = (0..count)
        .map(|flat| {
            (0..dims.len())
                .map(|a| flat / out_strides[a] % dims[a] % x.dims[a] * in_strides[a])
                .sum()
        })
        .collect();
    Const::new(x.elem_type, dims, x.data.pick(&indices))
}

/// A reduction over `axes` (sorted, unique): ReduceMax, ReduceMin, ReduceSum, ReduceProd.
pub fn reduce(op: &str, x: &Const, axes: &[usize], keep: bool) -> Option<Const> {
    let kept: Vec<usize> = x
        .dims
        .iter()
        .enumerate()
        .map(|(a, &d)| if axes.contains(&a) { 1 } else { d })
        .collect();
    let groups: usize = kept.iter().product();
    let (in_strides, kept_strides) = (strides(&x.dims), strides(&kept));
    let mut members: Vec<Vec<usize>> = vec![vec![]; groups];
    for flat in 0..x.len() {
        let group: usize = (0..x.dims.len())
            .filter(|a| !axes.contains(a))
            .map(|a| flat / in_strides[a] % x.dims[a] * kept_strides[a])
            .sum();
        members[group].push(flat);
    }
    // A sum or product of bools or narrow integers would wrap in their type: only int64 and
    // the floats are folded there.
    let int64 = x.elem_type == nonzero_proto::onnx::tensor_proto::DataType::Int64 as i32;
    if matches!(x.data, Data::Int(_)) && !int64 && matches!(op, "ReduceSum" | "ReduceProd") {
        return None;
    }
    let empty = members.iter().any(Vec::is_empty);
    if empty && matches!(op, "ReduceMax" | "ReduceMin") {
        return None;
    }
    let data = match &x.data {
        Data::Int(v) => Data::Int(
            members
                .iter()
                .map(|m| fold_ints(op, m.iter().map(|&i| v[i])))
                .collect::<Option<_>>()?,
        ),
        Data::F32(v) => Data::F32(
            members
                .iter()
                .map(|m| {
                    fold_floats(op, m.iter().map(|&i| f64::from(v[i])), true).map(|r| r as f32)
                })
                .collect::<Option<_>>()?,
        ),
        Data::F64(v) => Data::F64(
            members
                .iter()
                .map(|m| fold_floats(op, m.iter().map(|&i| v[i]), false))
                .collect::<Option<_>>()?,
        ),
    };
    let dims = if keep {
        kept
    } else {
        x.dims
            .iter()
            .enumerate()
            .filter(|(a, _)| !axes.contains(a))
            .map(|(_, &d)| d)
            .collect()
    };
    Const::new(x.elem_type, dims, data)
}

fn fold_ints(op: &str, mut v: impl Iterator<Item = i64>) -> Option<i64> {
    match op {
        "ReduceMax" => v.max(),
        "ReduceMin" => v.min(),
        "ReduceSum" => v.try_fold(0i64, |a, b| a.checked_add(b)),
        "ReduceProd" => v.try_fold(1i64, |a, b| a.checked_mul(b)),
        _ => None,
    }
}

/// Float reductions, in input order. A sum or product of float32 values is only folded when
/// it has at most one operation (ONNX Runtime's vectorised order could round differently).
fn fold_floats(op: &str, v: impl Iterator<Item = f64>, single: bool) -> Option<f64> {
    let v: Vec<f64> = v.collect();
    if v.iter().any(|x| x.is_nan()) {
        return None;
    }
    match op {
        "ReduceMax" => v.into_iter().reduce(f64::max),
        "ReduceMin" => v.into_iter().reduce(f64::min),
        "ReduceSum" | "ReduceProd" if v.len() > 2 || !single => None,
        "ReduceSum" => Some(v.iter().sum()),
        "ReduceProd" => Some(v.iter().product()),
        _ => None,
    }
}
