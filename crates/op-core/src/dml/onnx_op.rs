//! NonZeroCoordinates for ONNX Runtime (domain `nonzero`): DirectML's layout on any packed tensor.
//!
//! - Count: uint32 `[1]`, the number of non-zero elements.
//! - Coordinates: uint32 `[numel(X), N]`; row `j < Count` holds the last `N` coordinates of the
//!   `j`-th non-zero element (right-aligned, as DirectML), rows at and past Count are 0 (DirectML
//!   leaves them undefined).
//! - `columns` sets N: effective rank <= N <= rank, by default the rank.
//! - Both shapes follow from X's shape alone; inputs of more than 2^32 - 1 elements are refused.

use crate::argwhere::write_rows;
use crate::kernel::{run_owned, Block, Counted, Executor};
use crate::layout::effective_rank;
use crate::source::ZeroTest;
use crate::{Error, Layout};
use std::fmt;

/// Why a NonZeroCoordinates call was refused; outputs are untouched when one is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoordinatesError {
    /// `columns` must lie in `[effective rank, rank]`.
    Columns {
        columns: i64,
        effective_rank: usize,
        rank: usize,
    },
    /// Count and the coordinates are uint32: at most 2^32 - 1 elements.
    TooManyElements { sizes: Vec<usize> },
    /// The Count buffer must hold exactly one element.
    CountLength { actual: usize },
    /// The Coordinates buffer must hold exactly `numel * N` elements.
    CoordinatesLength { expected: usize, actual: usize },
    /// The input does not cover its shape.
    Input(Error),
}

impl fmt::Display for CoordinatesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoordinatesError::Columns {
                columns,
                effective_rank,
                rank,
            } => write!(
                f,
                "NonZeroCoordinates' columns ({columns}) must be at least the effective rank of X \
                 ({effective_rank}: its rank without leading size-1 dimensions) and at most its rank \
                 ({rank})"
            ),
            CoordinatesError::TooManyElements { sizes } => {
                let numel = sizes.iter().map(|&n| n as u128).product::<u128>();
                write!(
                    f,
                    "NonZeroCoordinates writes uint32 coordinates and counts: X may have at most \
                     4294967295 (2^32 - 1) elements, X of shape {sizes:?} has {numel}"
                )
            }
            CoordinatesError::CountLength { actual } => write!(
                f,
                "the Count buffer must hold exactly 1 element, it holds {actual}"
            ),
            CoordinatesError::CoordinatesLength { expected, actual } => write!(
                f,
                "the Coordinates buffer must hold exactly {expected} elements, it holds {actual}"
            ),
            CoordinatesError::Input(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for CoordinatesError {}

/// Resolves and checks the `columns` attribute for X of shape `sizes` (`None`: the rank), and
/// refuses inputs of more than 2^32 - 1 elements. Returns N.
pub fn coordinates_columns(
    sizes: &[usize],
    columns: Option<i64>,
) -> Result<usize, CoordinatesError> {
    let rank = sizes.len();
    let effective = effective_rank(sizes);
    let n = columns.unwrap_or(rank as i64);
    if n < effective as i64 || n > rank as i64 {
        return Err(CoordinatesError::Columns {
            columns: n,
            effective_rank: effective,
            rank,
        });
    }
    let fits = sizes.contains(&0)
        || sizes
            .iter()
            .try_fold(1u64, |acc, &s| acc.checked_mul(s as u64))
            .is_some_and(|numel| numel <= u32::MAX as u64);
    if !fits {
        return Err(CoordinatesError::TooManyElements {
            sizes: sizes.to_vec(),
        });
    }
    Ok(n as usize)
}

/// The output shapes `(Count, Coordinates)` = `([1], [numel, N])` for X of shape `sizes`.
pub fn coordinates_shapes(
    sizes: &[usize],
    columns: Option<i64>,
) -> Result<([usize; 1], [usize; 2]), CoordinatesError> {
    let n = coordinates_columns(sizes, columns)?;
    // coordinates_columns bounded the product by 2^32 - 1.
    let numel = sizes.iter().product();
    Ok(([1], [numel, n]))
}

/// Runs the op on a packed tensor of shape `sizes`: writes Count into `count_out[0]` and the
/// `[numel, columns]` coordinates (zero past Count) into `coords_out`; returns Count.
pub fn coordinates_for_onnx<S: ZeroTest + ?Sized>(
    src: &S,
    sizes: &[usize],
    columns: usize,
    count_out: &mut [u32],
    coords_out: &mut [u32],
    exec: &dyn Executor,
) -> Result<u32, CoordinatesError> {
    let n = coordinates_columns(sizes, Some(columns.try_into().unwrap_or(i64::MAX)))?;
    let layout = Layout::packed(sizes).map_err(CoordinatesError::Input)?;
    if count_out.len() != 1 {
        return Err(CoordinatesError::CountLength {
            actual: count_out.len(),
        });
    }
    let expected = layout.numel() * n;
    if coords_out.len() != expected {
        return Err(CoordinatesError::CoordinatesLength {
            expected,
            actual: coords_out.len(),
        });
    }
    let counted = Counted::count(src, &layout, exec).map_err(CoordinatesError::Input)?;
    let nnz = counted.nnz();
    let (rows, rest) = coords_out.split_at_mut(nnz * n);
    write_right_aligned(&counted, src, n, rows, exec);
    // Zero the rows past the count in as many pieces as the kernel has chunks.
    let pieces = counted.chunk_count();
    let piece = rest.len().div_ceil(pieces).max(1);
    run_owned(exec, rest.chunks_mut(piece).collect(), |_, p| p.fill(0));
    count_out[0] = nnz as u32;
    Ok(nnz as u32)
}

/// Second pass of NonZeroCoordinates (DirectML and ONNX Runtime alike): `rows` holds exactly
/// `nnz * columns` elements and receives, per non-zero element, its last `columns` coordinates.
/// The dimensions left out all have size 1 (`columns` >= effective rank), so nothing is lost.
pub(crate) fn write_right_aligned<S: ZeroTest + ?Sized>(
    counted: &Counted,
    src: &S,
    columns: usize,
    rows: &mut [u32],
    exec: &dyn Executor,
) {
    debug_assert_eq!(rows.len(), counted.nnz() * columns);
    if columns == 0 {
        return;
    }
    let skipped = counted.rank() - columns;
    let writers = counted.split_output(rows, columns).map(|mine| {
        let mut written = 0;
        let mut template = vec![0u32; columns];
        move |block: Block<'_>| {
            let k = block.cols.len();
            for (t, &c) in template.iter_mut().zip(&block.coords[skipped..]) {
                // Every size fits u32 (the element count does), so every coordinate does.
                *t = c as u32;
            }
            // The innermost walked dimension has size > 1, so it is never a skipped one.
            let inner = block.inner.map(|d| d - skipped);
            let dst = &mut mine[written * columns..(written + k) * columns];
            write_rows(dst, &template, inner, block.cols, |c| c as u32);
            written += k;
        }
    });
    counted.write(src, exec, writers);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::string_source;
    use crate::{Rayon, Sequential};

    #[test]
    fn count_rows_and_zero_fill() {
        // The DirectML doc example's input, as a plain [2, 4] tensor.
        let x = [1.0f32, 0.0, 0.0, 2.0, -0.0, 3.5, 0.0, -5.2];
        let mut count = [u32::MAX];
        let mut coords = [u32::MAX; 16];
        let nnz = coordinates_for_onnx(&x[..], &[2, 4], 2, &mut count, &mut coords, &Rayon);
        assert_eq!((nnz, count), (Ok(4), [4]));
        assert_eq!(coords, [0, 0, 0, 3, 1, 1, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn columns_are_right_aligned_for_every_valid_n() {
        let x = [0u8, 7, 0, 0, 0, 9];
        let sizes = [1, 1, 2, 3];
        for (n, expected) in [
            (2usize, vec![0, 1, 1, 2]),
            (3, vec![0, 0, 1, 0, 1, 2]),
            (4, vec![0, 0, 0, 1, 0, 0, 1, 2]),
        ] {
            assert_eq!(
                coordinates_shapes(&sizes, Some(n as i64)),
                Ok(([1], [6, n]))
            );
            let mut count = [0];
            let mut coords = vec![u32::MAX; 6 * n];
            coordinates_for_onnx(&x[..], &sizes, n, &mut count, &mut coords, &Sequential).unwrap();
            assert_eq!(count[0], 2);
            assert_eq!(&coords[..2 * n], &expected[..], "N = {n}");
            assert!(coords[2 * n..].iter().all(|&c| c == 0), "N = {n}");
        }
    }

    #[test]
    fn scalar_all_unit_and_empty_inputs() {
        let (mut count, mut coords) = ([9], [0u32; 0]);
        coordinates_for_onnx(&[3i64][..], &[], 0, &mut count, &mut coords, &Sequential).unwrap();
        assert_eq!(count, [1]);
        assert_eq!(coordinates_shapes(&[], None), Ok(([1], [1, 0])));
        // [1, 1]: effective rank 0, so N may be 0, 1 or 2.
        let mut coords = [7u32; 2];
        coordinates_for_onnx(
            &[true][..],
            &[1, 1],
            2,
            &mut count,
            &mut coords,
            &Sequential,
        )
        .unwrap();
        assert_eq!((count, coords), ([1], [0, 0]));
        coordinates_for_onnx(
            &[0u16][..],
            &[1, 1],
            1,
            &mut count,
            &mut coords[..1],
            &Sequential,
        )
        .unwrap();
        assert_eq!((count, coords), ([0], [0, 0]));
        let mut none = [0u32; 0];
        coordinates_for_onnx::<[f32]>(&[], &[3, 0], 2, &mut count, &mut none, &Sequential).unwrap();
        assert_eq!(count, [0]);
    }

    #[test]
    fn strings_through_a_source() {
        let s = ["", "x", "", "yz"];
        let mut count = [0];
        let mut coords = [u32::MAX; 8];
        let src = string_source(&s);
        coordinates_for_onnx(&src, &[2, 2], 2, &mut count, &mut coords, &Sequential).unwrap();
        assert_eq!((count, coords), ([2], [0, 1, 1, 1, 0, 0, 0, 0]));
    }

    #[test]
    fn rules_are_errors_that_name_them() {
        let e = coordinates_columns(&[1, 2, 3], Some(1)).unwrap_err();
        assert_eq!(
            e,
            CoordinatesError::Columns {
                columns: 1,
                effective_rank: 2,
                rank: 3
            }
        );
        assert_eq!(
            e.to_string(),
            "NonZeroCoordinates' columns (1) must be at least the effective rank of X (2: its rank \
             without leading size-1 dimensions) and at most its rank (3)"
        );
        assert!(coordinates_columns(&[2, 3], Some(3)).is_err());
        assert!(coordinates_columns(&[2, 3], Some(-1)).is_err());
        assert_eq!(coordinates_columns(&[1, 2, 3], None), Ok(3));
        let e = coordinates_columns(&[1 << 16, 1 << 16], None).unwrap_err();
        assert_eq!(
            e,
            CoordinatesError::TooManyElements {
                sizes: vec![1 << 16, 1 << 16]
            }
        );
        assert!(e.to_string().contains("has 4294967296"), "{e}");
        assert_eq!(coordinates_columns(&[65535, 65537], None), Ok(2));
        assert_eq!(coordinates_columns(&[usize::MAX, 2, 0], None), Ok(3));
        // Wrong buffers: refused, nothing written.
        let x = [1u8, 1];
        let mut count = [5];
        let mut coords = [5u32; 3];
        assert_eq!(
            coordinates_for_onnx(&x[..], &[2], 1, &mut count, &mut coords, &Sequential),
            Err(CoordinatesError::CoordinatesLength {
                expected: 2,
                actual: 3
            })
        );
        assert_eq!(
            coordinates_for_onnx(&x[..1], &[2], 1, &mut count, &mut coords[..2], &Sequential),
            Err(CoordinatesError::Input(Error::DataTooShort {
                needed: 2,
                actual: 1
            }))
        );
        assert_eq!((count, coords), ([5], [5; 3]));
    }
}
