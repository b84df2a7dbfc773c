//! ONNX NonZero: `[rank, nnz]` int64 coordinates, ascending row-major order.

use crate::kernel::{Block, Counted, Executor, Rayon};
use crate::source::ZeroTest;
use crate::{Element, Error, Layout, OnnxCoordinates};
#[cfg(feature = "ndarray")]
use ndarray::{Array2, ArrayView, Dimension};

impl Counted {
    /// Second pass for ONNX: writes the `[rank, nnz]` layout into `out`, which must hold exactly
    /// `rank * nnz` elements.
    pub fn write_onnx<S: ZeroTest + ?Sized>(
        &self,
        src: &S,
        out: &mut [i64],
        exec: &dyn Executor,
    ) -> Result<(), Error> {
        self.check_output(out)?;
        let (rank, nnz) = (self.rank(), self.nnz());
        if let Some(row) = self.one_row() {
            // One run (a 1-D or `[1, .., n, .., 1]` input): every coordinate but the run's
            // dimension is 0, and the run's is compacted straight into its output row.
            for (d, coords) in out.chunks_exact_mut(nnz.max(1)).take(rank).enumerate() {
                match row.dim {
                    Some(dim) if dim == d => self.compact_row(src, row, coords)?,
                    _ => coords.fill(0),
                }
            }
            return Ok(());
        }
        if self.is_single() {
            // One chunk owns the whole output: index it directly, nothing to split or collect.
            let mut pos = 0;
            let writer = move |block: Block<'_>| {
                let k = block.cols.len();
                for d in 0..rank {
                    write_row(&mut out[d * nnz + pos..d * nnz + pos + k], &block, d);
                }
                pos += k;
            };
            self.write(src, exec, std::iter::once(writer));
            return Ok(());
        }
        // Cut every coordinate row into one piece per chunk; chunk i owns piece i of each row.
        let mut pieces: Vec<Vec<&mut [i64]>> = (0..self.chunk_count())
            .map(|_| Vec::with_capacity(rank))
            .collect();
        for row in out.chunks_exact_mut(nnz.max(1)).take(rank) {
            for (piece, chunk_pieces) in self.split_output(row, 1).zip(pieces.iter_mut()) {
                chunk_pieces.push(piece);
            }
        }
        let writers = pieces.into_iter().map(|mut rows| {
            let mut pos = 0;
            move |block: Block<'_>| {
                let k = block.cols.len();
                for (d, row) in rows.iter_mut().enumerate() {
                    write_row(&mut row[pos..pos + k], &block, d);
                }
                pos += k;
            }
        });
        self.write(src, exec, writers);
        Ok(())
    }
}

/// Coordinate `d` of each of the block's non-zeros.
#[inline(always)]
fn write_row(dst: &mut [i64], block: &Block<'_>, d: usize) {
    if block.inner == Some(d) {
        // A column index is below the input's element count, so it fits i64 unchanged: a memcpy.
        const _: () = assert!(std::mem::size_of::<usize>() == std::mem::size_of::<i64>());
        dst.copy_from_slice(bytemuck::cast_slice(block.cols));
    } else {
        dst.fill(block.coords[d] as i64);
    }
}

/// NonZero of any source under any layout, on the given executor.
pub fn nonzero_with<S: ZeroTest + ?Sized>(
    src: &S,
    layout: &Layout,
    exec: &dyn Executor,
) -> Result<OnnxCoordinates, Error> {
    OnnxCoordinates::compute(src, layout, exec, Counted::write_onnx)
}

/// NonZero of a packed row-major tensor, on rayon's pool.
///
/// ```
/// let x = [1u8, 0, 1, 1];
/// let y = nonzero_core::nonzero(&x, &[2, 2]).unwrap();
/// assert_eq!(y.shape(), [2, 3]);
/// assert_eq!(y.data, vec![0, 1, 1, /* row 2 */ 0, 0, 1]);
/// ```
pub fn nonzero<T: Element>(data: &[T], shape: &[usize]) -> Result<OnnxCoordinates, Error> {
    let layout = Layout::packed_exact(shape, data.len())?;
    nonzero_with(data, &layout, &Rayon)
}

/// NonZero of an ndarray view of any dimensionality and memory order: `[ndim, nnz]`.
#[cfg(feature = "ndarray")]
pub fn nonzero_array<T: Element, D: Dimension>(array: ArrayView<'_, T, D>) -> Array2<i64> {
    let standard = array.as_standard_layout();
    let data = standard.as_slice().expect("standard layout is contiguous");
    nonzero(data, array.shape())
        .expect("an ndarray's shape matches its data")
        .into_array()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sequential;

    #[test]
    fn onnx_backend_example() {
        let x = [true, false, true, true];
        let y = nonzero(&x, &[2, 2]).unwrap();
        assert_eq!(y.shape(), [2, 3]);
        assert_eq!(y.data, vec![0, 1, 1, 0, 0, 1]);
    }

    #[test]
    fn scalar_gives_zero_rows() {
        assert_eq!(
            nonzero(&[5i32], &[]).unwrap(),
            OnnxCoordinates {
                rank: 0,
                nnz: 1,
                data: vec![]
            }
        );
        assert_eq!(
            nonzero(&[0i32], &[]).unwrap(),
            OnnxCoordinates {
                rank: 0,
                nnz: 0,
                data: vec![]
            }
        );
    }

    #[test]
    fn zero_size_dimension_gives_no_columns() {
        let y = nonzero::<f32>(&[], &[3, 0, 2]).unwrap();
        assert_eq!((y.shape(), y.data.len()), ([3, 0], 0));
    }

    #[test]
    fn unit_dimensions_get_zero_coordinates() {
        let y = nonzero(&[0u16, 3, 4], &[1, 3, 1]).unwrap();
        assert_eq!(y.data, vec![0, 0, 1, 2, 0, 0]);
        let y = nonzero(&[7u16], &[1, 1]).unwrap();
        assert_eq!(y.data, vec![0, 0]);
    }

    #[test]
    fn broadcast_and_transposed_views() {
        // Logical [[0, 2, 0], [0, 2, 0]] from one row broadcast with stride 0.
        let row = [0i32, 2, 0];
        let y = nonzero_with(
            &row[..],
            &Layout::strided(&[2, 3], &[0, 1]).unwrap(),
            &Sequential,
        )
        .unwrap();
        assert_eq!(y.data, vec![0, 1, 1, 1]);
        // The transpose of [[1, 0], [0, 1], [1, 1]] stored row-major.
        let m = [1u8, 0, 0, 1, 1, 1];
        let y = nonzero_with(
            &m[..],
            &Layout::strided(&[2, 3], &[1, 2]).unwrap(),
            &Sequential,
        )
        .unwrap();
        assert_eq!(y.data, vec![0, 0, 1, 1, 0, 2, 1, 2]);
    }

    #[test]
    #[cfg(feature = "ndarray")]
    fn ndarray_views_in_any_order() {
        let a = ndarray::arr2(&[[0.0f32, 1.0], [2.0, 0.0]]);
        assert_eq!(nonzero_array(a.view()), ndarray::arr2(&[[0, 1], [1, 0]]));
        assert_eq!(nonzero_array(a.t()), ndarray::arr2(&[[0, 1], [1, 0]]));
    }

    #[test]
    fn one_row_inputs_compact_into_their_coordinate_row() {
        // [1, 5, 1]: coordinates 0 and 2 are 0, coordinate 1 is the compacted run.
        let x = [0i32, 4, 0, 5, 6];
        let y = nonzero(&x, &[1, 5, 1]).unwrap();
        assert_eq!(y.shape(), [3, 3]);
        assert_eq!(y.data, vec![0, 0, 0, 1, 3, 4, 0, 0, 0]);
        // A strided 1-D view (every other element) and a one-element input.
        let l = Layout::strided(&[3], &[2]).unwrap();
        let y = nonzero_with(&[1u8, 9, 0, 9, 1][..], &l, &Sequential).unwrap();
        assert_eq!((y.shape(), y.data), ([1, 2], vec![0, 2]));
        let y = nonzero(&[7u8], &[1, 1]).unwrap();
        assert_eq!((y.shape(), y.data), ([2, 1], vec![0, 0]));
    }

    #[test]
    fn a_source_that_changes_between_the_passes_is_an_error_not_a_panic() {
        use crate::FnSource;
        use std::sync::atomic::{AtomicUsize, Ordering};
        // Non-zero everywhere while counting (5 calls), zero everywhere afterwards.
        for shape in [&[5usize][..], &[5, 1], &[1, 5]] {
            let calls = AtomicUsize::new(0);
            let src = FnSource::new(5, |_| calls.fetch_add(1, Ordering::Relaxed) < 5);
            let layout = Layout::packed(shape).unwrap();
            assert_eq!(
                nonzero_with(&src, &layout, &Sequential),
                Err(Error::SourceChanged {
                    counted: 5,
                    found: 0
                }),
                "{shape:?}"
            );
        }
    }

    #[test]
    fn wrong_lengths_are_errors() {
        assert_eq!(
            nonzero(&[1u8; 3], &[2, 2]),
            Err(Error::DataLengthMismatch {
                expected: 4,
                actual: 3
            })
        );
        let l = Layout::strided(&[2, 2], &[4, 1]).unwrap();
        assert_eq!(
            nonzero_with(&[1u8; 4][..], &l, &Sequential),
            Err(Error::DataTooShort {
                needed: 6,
                actual: 4
            })
        );
    }
}
