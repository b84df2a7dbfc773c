//! Row-major traversal of a flat index range, one innermost row at a time.
//!
//! Size-1 dimensions are dropped from the walk (their coordinate is always 0), so `[n, 1]` is
//! walked as one row of `n` elements instead of `n` rows of one.

use crate::layout::Dims;
use crate::source::ZeroTest;
use crate::Layout;

/// Per-task scratch: indices of non-zero elements of one block (8 KiB), on the stack.
pub(crate) const BLOCK: usize = 1024;
/// The scratch of a small chunk (2 KiB): zeroing 8 KiB would cost as much as the whole walk.
const SMALL_BLOCK: usize = 256;
/// The scratch of a chunk that fits one compaction group (512 bytes), e.g. a token mask.
const TINY_BLOCK: usize = 64;
/// Innermost rows shorter than this, in a packed layout, are compacted many rows at a time as
/// one flat run and split into rows afterwards: a run per row costs about 30 ns, which for
/// `[n, 2]` or `[n, 4]` masks (a top-k router's) is most of the time.
const SHORT_ROW: usize = 64;

/// The walked geometry of a layout.
#[derive(Debug, Clone)]
pub(crate) struct Walk {
    /// Sizes and strides of the walked (non-unit) dimensions.
    sizes: Dims,
    strides: Dims,
    /// The original dimension index of each walked dimension.
    dims: Dims,
    rank: usize,
    packed: bool,
}

/// A run of elements that is the whole walk between two flat indices (see [`Walk::one_row`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct OneRow {
    /// Offset and stride of the run in the source.
    pub offset: usize,
    pub len: usize,
    pub stride: usize,
    /// Coordinate of the run's first element in `dim`.
    pub first_index: usize,
    /// The one dimension whose size is not 1, if any.
    pub dim: Option<usize>,
}

/// A block of non-zero elements that share every coordinate but the innermost walked one.
pub(crate) struct Block<'a> {
    /// Full coordinates (length = rank); the entry at `inner` is not meaningful.
    pub coords: &'a [usize],
    /// The original dimension that `cols` indexes; `None` when every dimension has size 1.
    pub inner: Option<usize>,
    /// Innermost coordinates of the non-zero elements, ascending.
    pub cols: &'a [usize],
}

impl Walk {
    #[inline]
    pub(crate) fn new(layout: &Layout) -> Walk {
        let mut walk = Walk {
            sizes: Dims::new(),
            strides: Dims::new(),
            dims: Dims::new(),
            rank: layout.rank(),
            packed: layout.is_packed(),
        };
        for (d, (&n, &s)) in layout.sizes().iter().zip(layout.strides()).enumerate() {
            if n != 1 {
                walk.sizes.push(n);
                walk.strides.push(s);
                walk.dims.push(d);
            }
        }
        walk
    }

    pub(crate) fn rank(&self) -> usize {
        self.rank
    }

    /// Flat indices `start..end` as one run, when at most one dimension has a size other than 1
    /// (a 1-D mask, a `[1, 1, n]` token mask): then a non-zero's flat index is its coordinate in
    /// that dimension, `dim` (`None` when every size is 1, where every coordinate is 0).
    pub(crate) fn one_row(&self, start: usize, end: usize) -> Option<OneRow> {
        match (self.sizes.len(), self.strides.first(), self.dims.first()) {
            (0, _, _) => Some(OneRow {
                offset: 0,
                len: end - start,
                stride: 1,
                first_index: start,
                dim: None,
            }),
            (1, Some(&stride), Some(&dim)) => Some(OneRow {
                offset: start * stride,
                len: end - start,
                stride,
                first_index: start,
                dim: Some(dim),
            }),
            _ => None,
        }
    }

    /// Number of non-zero elements among flat indices `start..end`.
    pub(crate) fn count<S: ZeroTest + ?Sized>(&self, src: &S, start: usize, end: usize) -> usize {
        if self.packed {
            return src.count_run(start, end - start, 1);
        }
        let mut total = 0;
        self.rows(start, end, |offset, len, stride, _| {
            total += src.count_run(offset, len, stride)
        });
        total
    }

    /// Calls `sink` with each block of non-zero elements among flat indices `start..end`, in order.
    pub(crate) fn visit<S: ZeroTest + ?Sized>(
        &self,
        src: &S,
        start: usize,
        end: usize,
        sink: impl FnMut(Block<'_>),
    ) {
        if end - start <= TINY_BLOCK {
            self.visit_with::<S, TINY_BLOCK>(src, start, end, sink)
        } else if end - start <= 4 * SMALL_BLOCK {
            self.visit_with::<S, SMALL_BLOCK>(src, start, end, sink)
        } else {
            self.visit_with::<S, BLOCK>(src, start, end, sink)
        }
    }

    /// [`Walk::visit`] with an `N`-element scratch block.
    fn visit_with<S: ZeroTest + ?Sized, const N: usize>(
        &self,
        src: &S,
        start: usize,
        end: usize,
        mut sink: impl FnMut(Block<'_>),
    ) {
        let short_rows = self.sizes.len() >= 2 && self.sizes.last().is_some_and(|&n| n < SHORT_ROW);
        if self.packed && short_rows {
            return self.visit_short_rows::<S, N>(src, start, end, sink);
        }
        let mut buf = [0usize; N];
        let mut coords = Dims::from_elem(0, self.rank);
        let inner = self.dims.last().copied();
        self.rows(start, end, |offset, len, stride, (outer, first_col)| {
            for (&d, &c) in self.dims.iter().zip(outer) {
                coords[d] = c;
            }
            let mut done = 0;
            while done < len {
                let n = (len - done).min(N);
                let k = src.compact_run(
                    offset + done * stride,
                    n,
                    stride,
                    first_col + done,
                    &mut buf,
                );
                if k > 0 {
                    sink(Block {
                        coords: &coords,
                        inner,
                        cols: &buf[..k],
                    });
                }
                done += n;
            }
        });
    }

    /// [`Walk::visit`] for a packed layout of short innermost rows: each `N` elements are
    /// compacted as one flat run (a packed view's offset is its flat index), and the flat
    /// indices found are split into blocks of one row each, the row's coordinates carried from
    /// the previous non-empty row (divided out again only after a jump of more than one row).
    fn visit_short_rows<S: ZeroTest + ?Sized, const N: usize>(
        &self,
        src: &S,
        start: usize,
        end: usize,
        mut sink: impl FnMut(Block<'_>),
    ) {
        let mut buf = [0usize; N];
        let mut coords = Dims::from_elem(0, self.rank);
        let walked = self.sizes.len();
        let (inner, inner_size) = (self.dims[walked - 1], self.sizes[walked - 1]);
        // The row whose coordinates `coords` holds (none yet).
        let mut row = usize::MAX;
        let mut flat = start;
        while flat < end {
            let n = (end - flat).min(N);
            let k = src.compact_run(flat, n, 1, flat, &mut buf);
            let mut i = 0;
            while i < k {
                let target = buf[i] / inner_size;
                if row != usize::MAX && target == row + 1 {
                    // The next row: carry through the outer dimensions.
                    for d in (0..walked - 1).rev() {
                        let c = &mut coords[self.dims[d]];
                        *c += 1;
                        if *c < self.sizes[d] {
                            break;
                        }
                        *c = 0;
                    }
                } else if target != row {
                    let mut rest = target;
                    for d in (0..walked - 1).rev() {
                        coords[self.dims[d]] = rest % self.sizes[d];
                        rest /= self.sizes[d];
                    }
                }
                row = target;
                // The row's non-zeros, as innermost coordinates.
                let (first, row_end) = (row * inner_size, (row + 1) * inner_size);
                let mut j = i;
                while j < k && buf[j] < row_end {
                    buf[j] -= first;
                    j += 1;
                }
                sink(Block {
                    coords: &coords,
                    inner: Some(inner),
                    cols: &buf[i..j],
                });
                i = j;
            }
            flat += n;
        }
    }

    /// Splits `start..end` into innermost rows: `row(offset, len, stride, (outer coords, first col))`.
    /// The outer coordinates cover the walked dimensions but the innermost (whose entry is 0).
    fn rows(
        &self,
        start: usize,
        end: usize,
        mut row: impl FnMut(usize, usize, usize, (&[usize], usize)),
    ) {
        if start >= end {
            return;
        }
        let Some(&inner_size) = self.sizes.last() else {
            // Every dimension has size 1: one element at offset 0.
            row(0, 1, 1, (&[], 0));
            return;
        };
        let walked = self.sizes.len();
        let inner_stride = self.strides[walked - 1];
        // Coordinates of `start` in the walked dimensions; one division per dimension per chunk.
        let mut outer = Dims::from_elem(0, walked);
        let mut rest = start / inner_size;
        let mut col = start % inner_size;
        for d in (0..walked - 1).rev() {
            outer[d] = rest % self.sizes[d];
            rest /= self.sizes[d];
        }
        let mut base: usize = outer.iter().zip(&self.strides).map(|(c, s)| c * s).sum();
        let mut flat = start;
        while flat < end {
            let len = (inner_size - col).min(end - flat);
            row(base + col * inner_stride, len, inner_stride, (&outer, col));
            flat += len;
            col = 0;
            // Carry into the outer dimensions.
            for d in (0..walked - 1).rev() {
                outer[d] += 1;
                base += self.strides[d];
                if outer[d] < self.sizes[d] {
                    break;
                }
                base -= self.strides[d] * self.sizes[d];
                outer[d] = 0;
            }
        }
    }
}
