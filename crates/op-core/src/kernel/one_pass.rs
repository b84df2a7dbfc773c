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
//! every other coordinate is 0. Anything else is left to [`crate::Counted`]. It writes NonZero's
//! `[rank, nnz]` and ArgWhere's `[nnz, rank]`.

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

/// The layout of the coordinates the one pass writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// ONNX NonZero: `[rank, nnz]`, one row per dimension.
    RankByNnz,
    /// ArgWhere: `[nnz, rank]`, one row per non-zero element.
    NnzByRank,
}

/// The one pass over `data` (packed, `dim` as [`one_pass_dim`] of its shape). `output(shape)`
/// returns the output buffer (`shape` is `[rank, nnz]` or `[nnz, rank]` by `order`); returns
/// `Ok(false)`, having written nothing, when `data` is longer than [`ONE_PASS_MAX`] or that
/// buffer does not hold exactly `rank * nnz` elements.
#[inline]
pub(crate) fn one_pass<'o, T: Element, E>(
    data: &[T],
    rank: usize,
    dim: Option<usize>,
    order: Order,
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
    let indices = &indices[..nnz];
    let shape = match order {
        Order::RankByNnz => [rank, nnz],
        Order::NnzByRank => [nnz, rank],
    };
    let out = output(shape)?;
    if out.len() != rank * nnz {
        return Ok(false);
    }
    // Every coordinate but `dim`'s is 0; `dim`'s is the element's index.
    out.fill(0);
    if let (Some(d), 1..) = (dim, nnz) {
        // step_by(1): one iterator type for both layouts.
        let column = match order {
            Order::RankByNnz => out[d * nnz..(d + 1) * nnz].iter_mut().step_by(1),
            Order::NnzByRank => out[d..].iter_mut().step_by(rank),
        };
        for (o, &i) in column.zip(indices) {
            *o = i64::from(i);
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
        let done = one_pass(&x, 3, Some(2), Order::RankByNnz, |shape| {
            assert_eq!(shape, [3, 3]);
            Ok::<_, ()>(&mut out[..])
        });
        assert_eq!(done, Ok(true));
        assert_eq!(out, [0, 0, 0, 0, 0, 0, 1, 4, 5]);
        // ArgWhere's layout: one row of coordinates per non-zero.
        let mut out = vec![-1i64; 6];
        let done = one_pass(&x, 2, Some(1), Order::NnzByRank, |shape| {
            assert_eq!(shape, [3, 2]);
            Ok::<_, ()>(&mut out[..])
        });
        assert_eq!(done, Ok(true));
        assert_eq!(out, [0, 1, 0, 4, 0, 5]);
    }

    #[test]
    fn no_non_zeros_give_empty_outputs_in_both_layouts() {
        // The one wide dimension is not the first: an empty output must not be indexed by it.
        for order in [Order::RankByNnz, Order::NnzByRank] {
            for (data, sizes) in [(&[0u8; 4][..], &[1usize, 1, 4][..]), (&[], &[1, 0])] {
                let dim = one_pass_dim(sizes).unwrap();
                let mut out: [i64; 0] = [];
                let done = one_pass(data, sizes.len(), dim, order, |shape| {
                    assert_eq!(shape[0] * shape[1], 0, "{order:?} {sizes:?}");
                    Ok::<_, ()>(&mut out[..])
                });
                assert_eq!(done, Ok(true), "{order:?} {sizes:?}");
            }
        }
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
            one_pass(&[1u8, 1], 1, Some(0), Order::RankByNnz, |_| Ok::<_, ()>(
                &mut out[..]
            )),
            Ok(false)
        );
        assert_eq!(out, [-1; 5]);
        assert_eq!(
            one_pass(
                &[1u8; ONE_PASS_MAX + 1],
                1,
                Some(0),
                Order::NnzByRank,
                |_| -> Result<&mut [i64], ()> {
                    unreachable!("too long: refused before the output is asked for")
                }
            ),
            Ok(false)
        );
    }
}
