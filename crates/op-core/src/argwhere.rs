//! ArgWhere: `[nnz, rank]` int64 coordinates, one row per non-zero element in row-major order.
//! This is NonZero transposed (the layout of `torch.argwhere`, `tf.where` and DirectML), written
//! directly by the second pass: each chunk owns the consecutive rows of its own non-zeros (its
//! piece of [`Counted::split_output`]), so there is no transpose pass and no buffer beyond the
//! output.

use crate::kernel::{Block, Counted, Executor, Rayon};
use crate::source::ZeroTest;
use crate::{ArgWhereCoordinates, Element, Error, Layout};

impl Counted {
    /// Second pass for ArgWhere: writes the `[nnz, rank]` layout into `out`, which must hold
    /// exactly `nnz * rank` elements.
    pub fn write_argwhere<S: ZeroTest + ?Sized>(
        &self,
        src: &S,
        out: &mut [i64],
        exec: &dyn Executor,
    ) -> Result<(), Error> {
        self.check_output(out)?;
        let rank = self.rank();
        if rank == 0 {
            // A scalar has no coordinates to write: the output is [nnz, 0].
            return Ok(());
        }
        if let (1, Some(row)) = (rank, self.one_row()) {
            // A 1-D input: `[nnz, 1]` is the compacted run itself.
            return self.compact_row(src, row, out);
        }
        // Chunk i owns the contiguous rows of its non-zeros.
        let writers = self.split_output(out, rank).map(|mine| {
            let mut written = 0;
            let mut template = vec![0i64; rank];
            move |block: Block<'_>| {
                let k = block.cols.len();
                let dst = &mut mine[written * rank..(written + k) * rank];
                for (t, &c) in template.iter_mut().zip(block.coords) {
                    *t = c as i64;
                }
                write_rows(dst, &template, block.inner, block.cols, |c| c as i64);
                written += k;
            }
        });
        self.write(src, exec, writers);
        Ok(())
    }
}

/// Writes one row per entry of `cols`: `template` with the `inner` column set to that entry
/// (converted by `coord`); `inner` is `None` when every dimension has size 1, and then the rows
/// are the template itself. Ranks up to 6 get a loop whose row length is a constant, so each row
/// is a few stores instead of a `memcpy` call.
pub(crate) fn write_rows<T: Copy>(
    dst: &mut [T],
    template: &[T],
    inner: Option<usize>,
    cols: &[usize],
    coord: impl Fn(usize) -> T,
) {
    let rank = template.len();
    let Some(inner) = inner else {
        for row in dst.chunks_exact_mut(rank.max(1)) {
            row.copy_from_slice(template);
        }
        return;
    };
    match rank {
        1 => {
            for (o, &c) in dst.iter_mut().zip(cols) {
                *o = coord(c);
            }
        }
        2 => rows_of::<T, 2>(dst, template, inner, cols, coord),
        3 => rows_of::<T, 3>(dst, template, inner, cols, coord),
        4 => rows_of::<T, 4>(dst, template, inner, cols, coord),
        5 => rows_of::<T, 5>(dst, template, inner, cols, coord),
        6 => rows_of::<T, 6>(dst, template, inner, cols, coord),
        _ => {
            for (row, &c) in dst.chunks_exact_mut(rank).zip(cols) {
                row.copy_from_slice(template);
                row[inner] = coord(c);
            }
        }
    }
}

#[inline(always)]
fn rows_of<T: Copy, const R: usize>(
    dst: &mut [T],
    template: &[T],
    inner: usize,
    cols: &[usize],
    coord: impl Fn(usize) -> T,
) {
    let row: [T; R] = template.try_into().expect("template has the rank's length");
    // Store the whole template, then the inner coordinate over it. Setting `row[inner]` first
    // and copying the row would reload a just-stored register from the stack with a wider load,
    // which stalls store forwarding (4x slower at rank 2).
    for (out, &c) in dst.chunks_exact_mut(R).zip(cols) {
        out.copy_from_slice(&row);
        out[inner] = coord(c);
    }
}

/// ArgWhere of any source under any layout, on the given executor.
pub fn argwhere_with<S: ZeroTest + ?Sized>(
    src: &S,
    layout: &Layout,
    exec: &dyn Executor,
) -> Result<ArgWhereCoordinates, Error> {
    ArgWhereCoordinates::compute(src, layout, exec, Counted::write_argwhere)
}

/// ArgWhere of a packed row-major tensor, on rayon's pool.
///
/// ```
/// let x = [1u8, 0, 1, 1];
/// let y = nonzero_core::argwhere(&x, &[2, 2]).unwrap();
/// assert_eq!(y.shape(), [3, 2]);
/// assert_eq!(y.data, vec![0, 0, /* row 2 */ 1, 0, /* row 3 */ 1, 1]);
/// ```
pub fn argwhere<T: Element>(data: &[T], shape: &[usize]) -> Result<ArgWhereCoordinates, Error> {
    let layout = Layout::packed_exact(shape, data.len())?;
    argwhere_with(data, &layout, &Rayon)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::string_source;
    use crate::Sequential;

    #[test]
    fn rows_are_coordinates_in_row_major_order() {
        let x = [0i32, 3, 0, 4, 5, 0];
        let y = argwhere(&x, &[2, 3]).unwrap();
        assert_eq!(y.shape(), [3, 2]);
        assert_eq!(y.data, vec![0, 1, 1, 0, 1, 1]);
        #[cfg(feature = "ndarray")]
        assert_eq!(y.into_array(), ndarray::arr2(&[[0i64, 1], [1, 0], [1, 1]]));
    }

    #[test]
    fn scalar_gives_zero_columns() {
        let y = argwhere(&[2.5f32], &[]).unwrap();
        assert_eq!((y.shape(), y.data.len()), ([1, 0], 0));
        let y = argwhere(&[-0.0f32], &[]).unwrap();
        assert_eq!((y.shape(), y.data.len()), ([0, 0], 0));
    }

    #[test]
    fn empty_all_zero_and_all_nonzero() {
        let y = argwhere::<u8>(&[], &[2, 0, 3]).unwrap();
        assert_eq!((y.shape(), y.data.len()), ([0, 3], 0));
        let y = argwhere(&[0u16; 6], &[3, 2]).unwrap();
        assert_eq!((y.shape(), y.data.len()), ([0, 2], 0));
        let y = argwhere(&[true; 6], &[3, 1, 2]).unwrap();
        assert_eq!(
            y.data,
            vec![0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1, 2, 0, 0, 2, 0, 1]
        );
    }

    #[test]
    fn unit_dimensions_and_high_ranks() {
        let y = argwhere(&[7u8], &[1, 1, 1]).unwrap();
        assert_eq!(y.data, vec![0, 0, 0]);
        // Rank 7 takes the generic row loop; the inner dimension is not the last one.
        let mut x = vec![0i8; 2 * 3];
        x[4] = 1;
        let y = argwhere(&x, &[1, 2, 1, 3, 1, 1, 1]).unwrap();
        assert_eq!(y.data, vec![0, 1, 0, 1, 0, 0, 0]);
    }

    #[test]
    fn strings_and_strided_views() {
        let s = ["", "a", "b", ""];
        let src = string_source(&s);
        let y = argwhere_with(&src, &Layout::packed(&[2, 2]).unwrap(), &Sequential).unwrap();
        assert_eq!(y.data, vec![0, 1, 1, 0]);
        // The transpose of [[1, 0], [0, 1], [1, 1]] stored row-major.
        let m = [1u8, 0, 0, 1, 1, 1];
        let l = Layout::strided(&[2, 3], &[1, 2]).unwrap();
        let y = argwhere_with(&m[..], &l, &Sequential).unwrap();
        assert_eq!(y.data, vec![0, 0, 0, 2, 1, 1, 1, 2]);
    }

    #[test]
    fn wrong_output_length_is_an_error_and_writes_nothing() {
        let x = [1u8, 1];
        let counted = Counted::count(&x[..], &Layout::packed(&[2]).unwrap(), &Sequential).unwrap();
        let mut out = [-1i64; 3];
        assert_eq!(
            counted.write_argwhere(&x[..], &mut out, &Sequential),
            Err(Error::OutputLengthMismatch {
                expected: 2,
                actual: 3
            })
        );
        assert_eq!(out, [-1; 3]);
    }
}
