//! The inner loops of the masked writes, per element width. Each is a branch-free select
//! (`if m { new } else { old }` over whole slices), which the compiler turns into vector blends.
//! Buffers a host hands over are aligned to their element type; one that is not (or a width
//! without an integer type) takes the byte-wise loop.

use bytemuck::Pod;

/// Calls `$body` with `$T` the unsigned integer of `$elem` bytes, or `$bytes` for other widths.
macro_rules! by_width {
    ($elem:expr, $T:ident => $body:expr, $bytes:expr) => {
        match $elem {
            1 => {
                type $T = u8;
                $body
            }
            2 => {
                type $T = u16;
                $body
            }
            4 => {
                type $T = u32;
                $body
            }
            8 => {
                type $T = u64;
                $body
            }
            16 => {
                type $T = u128;
                $body
            }
            _ => $bytes,
        }
    };
}

fn typed<T: Pod>(bytes: &[u8]) -> Option<&[T]> {
    bytemuck::try_cast_slice(bytes).ok()
}

fn typed_mut<T: Pod>(bytes: &mut [u8]) -> Option<&mut [T]> {
    bytemuck::try_cast_slice_mut(bytes).ok()
}

/// `out[i] = mask[i] ? pattern[i mod P] : x[i]`; `x` starts at a multiple of P.
pub(super) fn fill(x: &[u8], mask: &[bool], pattern: &[u8], elem: usize, out: &mut [u8]) {
    by_width!(elem, T => {
        if let (Some(x), Some(p)) = (typed::<T>(x), typed::<T>(pattern)) {
            if let Some(out) = typed_mut::<T>(out) {
                return fill_typed(x, mask, p, out);
            }
        }
    }, {});
    let period = pattern.len() / elem;
    for (i, &m) in mask.iter().enumerate() {
        let from = if m {
            let at = i % period;
            &pattern[at * elem..(at + 1) * elem]
        } else {
            &x[i * elem..(i + 1) * elem]
        };
        out[i * elem..(i + 1) * elem].copy_from_slice(from);
    }
}

fn fill_typed<T: Copy>(x: &[T], mask: &[bool], pattern: &[T], out: &mut [T]) {
    if let [v] = pattern {
        let v = *v;
        for ((o, &x), &m) in out.iter_mut().zip(x).zip(mask) {
            *o = if m { v } else { x };
        }
        return;
    }
    let period = pattern.len();
    for ((o, x), m) in out
        .chunks_mut(period)
        .zip(x.chunks(period))
        .zip(mask.chunks(period))
    {
        for (((o, &x), &m), &v) in o.iter_mut().zip(x).zip(m).zip(pattern) {
            *o = if m { v } else { x };
        }
    }
}

/// `out[i] = mask[i] ? source[rank of i] : x[i]`, where `source` starts at this span's first
/// selected element and holds at least as many elements as `mask` selects.
pub(super) fn scatter(x: &[u8], mask: &[bool], source: &[u8], elem: usize, out: &mut [u8]) {
    by_width!(elem, T => {
        if let (Some(x), Some(s)) = (typed::<T>(x), typed::<T>(source)) {
            if let Some(out) = typed_mut::<T>(out) {
                return scatter_typed(x, mask, s, out);
            }
        }
    }, {});
    let mut j = 0;
    for (i, &m) in mask.iter().enumerate() {
        let from = if m {
            &source[j * elem..(j + 1) * elem]
        } else {
            &x[i * elem..(i + 1) * elem]
        };
        out[i * elem..(i + 1) * elem].copy_from_slice(from);
        j += usize::from(m);
    }
}

fn scatter_typed<T: Copy>(x: &[T], mask: &[bool], source: &[T], out: &mut [T]) {
    let Some(last) = source.len().checked_sub(1) else {
        // Nothing selected (the caller checked the source's length): Y is X.
        out.copy_from_slice(x);
        return;
    };
    let mut j = 0;
    for ((o, &x), &m) in out.iter_mut().zip(x).zip(mask) {
        // Reading source[min(j, last)] keeps the loop free of branches; it is used only when
        // m is set, and then j < source.len().
        let s = source[j.min(last)];
        *o = if m { s } else { x };
        j += usize::from(m);
    }
}
