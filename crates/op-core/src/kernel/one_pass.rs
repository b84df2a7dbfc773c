//! NonZero of a small input in one pass over its data, for the calls that real models make on
//! token and score masks (a `[1, 1, 110]` bool, an `int64 [1, 13]`).
//!
//! The two-pass kernel is built for throughput: chunk plans, a walk over strided rows, vector
//! loops picked at run time. On a 100-element input its cost is not the elements but the code: a
//! call runs through several kilobytes of instructions, and inside a large model, where every
//! other node has evicted them, each cache line of that code comes from memory again (the Piper
//! voice measured 10-20 us per such call, against 3 us when warm; docs/performance.md). This
//! path is one short loop: each element's flat index is stored at a cursor that only non-zeros
//! advance, the output is allocated once the count is known, and the coordinates are written
//! from the stored indices.
//!
//! It takes packed inputs of at most [`ONE_PASS_MAX`] elements with at most one dimension of
//! size other than 1, where a non-zero's flat index is its coordinate in that dimension and
//! every other coordinate is 0. Anything else is left to [`crate::Counted`].

use crate::Element;

/// The largest input (in elements) the one-pass path takes. Its scalar loop costs about 0.6 ns
/// per element, so with warm caches the two-pass kernel's vector loops are faster from about
/// 150 elements (op-core alone at 256 f32: 148 ns against 78 ns); a cold call costs
/// microseconds more on the two-pass path, so the limit sits above that crossover.
pub const ONE_PASS_MAX: usize = 256;

/// The dimension of a packed input of shape `sizes` that the one-pass path walks: `Some(Some(d))`
/// when `d` is the only dimension whose size is not 1, `Some(None)` when every size is 1, `None`
/// when the path does not take the shape (more than [`ONE_PASS_MAX`] elements, or two dimensions
/// wider than 1).
pub fn one_pass_dim(sizes: &[usize]) -> Option<Option<usize>> {
    let mut wide = sizes.iter().enumerate().filter(|&(_, &n)| n != 1);
    let dim = wide.next();
    if wide.next().is_some() || dim.is_some_and(|(_, &n)| n > ONE_PASS_MAX) {
        return None;
    }
    Some(dim.map(|(d, _)| d))
}

/// The one pass over `data` (packed, `dim` as [`one_pass_dim`] of its shape). `output([rank,
/// nnz])` returns the output buffer; returns `Ok(false)`, having written nothing, when `data` is
/// longer than [`ONE_PASS_MAX`] or that buffer does not hold exactly `rank * nnz` elements.
#[inline]
pub(crate) fn one_pass<'o, T: Element, E>(
    data: &[T],
    rank: usize,
    dim: Option<usize>,
    output: impl FnOnce([usize; 2]) -> Result<&'o mut [i64], E>,
) -> Result<bool, E> {
    const _: () = assert!(ONE_PASS_MAX <= u16::MAX as usize + 1);
    if data.len() > ONE_PASS_MAX {
        return Ok(false);
    }
    let mut indices = [0u16; ONE_PASS_MAX];
    let mut nnz = 0;
    for (i, x) in data.iter().enumerate() {
        // Branch-free: the index is stored at the cursor (nnz <= i < ONE_PASS_MAX), which only
        // a non-zero advances.
        indices[nnz] = i as u16;
        nnz += x.is_nonzero() as usize;
    }
    let out = output([rank, nnz])?;
    if out.len() != rank * nnz {
        return Ok(false);
    }
    for (d, row) in out.chunks_exact_mut(nnz.max(1)).take(rank).enumerate() {
        if Some(d) == dim {
            for (o, &i) in row.iter_mut().zip(&indices[..nnz]) {
                *o = i64::from(i);
            }
        } else {
            row.fill(0);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_mask_in_one_pass() {
        let x = [0u8, 3, 0, 0, 1, 1];
        assert_eq!(one_pass_dim(&[1, 1, 6]), Some(Some(2)));
        let mut out = vec![-1i64; 9];
        let done = one_pass(&x, 3, Some(2), |shape| {
            assert_eq!(shape, [3, 3]);
            Ok::<_, ()>(&mut out[..])
        });
        assert_eq!(done, Ok(true));
        assert_eq!(out, [0, 0, 0, 0, 0, 0, 1, 4, 5]);
    }

    #[test]
    fn other_inputs_and_wrong_buffers_are_left_to_the_two_pass_kernel() {
        assert_eq!(one_pass_dim(&[2, 3]), None, "two wide dimensions");
        assert_eq!(one_pass_dim(&[1, ONE_PASS_MAX + 1]), None);
        assert_eq!(one_pass_dim(&[1, ONE_PASS_MAX]), Some(Some(1)));
        assert_eq!(
            one_pass_dim(&[0, 5]),
            None,
            "two wide dimensions, one empty"
        );
        assert_eq!(one_pass_dim(&[1, 1]), Some(None));
        assert_eq!(one_pass_dim(&[]), Some(None), "a scalar");
        // A buffer of the wrong length is refused before anything is written.
        let mut out = vec![-1i64; 5];
        assert_eq!(
            one_pass(&[1u8, 1], 1, Some(0), |_| Ok::<_, ()>(&mut out[..])),
            Ok(false)
        );
        assert_eq!(out, [-1; 5]);
        assert_eq!(
            one_pass(
                &[1u8; ONE_PASS_MAX + 1],
                1,
                Some(0),
                |_| -> Result<&mut [i64], ()> {
                    unreachable!("too long: refused before the output is asked for")
                }
            ),
            Ok(false)
        );
    }
}
