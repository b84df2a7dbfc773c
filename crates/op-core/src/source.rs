//! Element sources the kernel can test for zero, addressed by element offset.
//!
//! Typed slices (`[T]` for any [`Element`]) are the fast path: their contiguous runs go to the
//! vectorised loops of `kernel/simd.rs`. Strings and anything that is not a plain slice (an ONNX
//! Runtime string tensor, a memory-mapped file) go through [`FnSource`].

use crate::element::{str_is_nonzero, Element};
use crate::kernel::simd;

/// Elements a kernel can test for zero. A "run" is `len` elements at offsets
/// `start, start + stride, ...`; `stride` may be 0 (broadcast).
pub trait ZeroTest: Sync {
    /// Number of addressable elements (offsets `0..len()`).
    fn len(&self) -> usize;

    /// True when there is no element at all.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of non-zero elements in the run.
    fn count_run(&self, start: usize, len: usize, stride: usize) -> usize;

    /// Writes `first_index + j` into `out` for each non-zero `j`-th element of the run, in order,
    /// and returns the run's number of non-zeros. `out` may hold fewer slots than the run has
    /// elements (down to exactly its non-zeros, an output row written in place): indices past
    /// `out.len()` are counted, not written.
    fn compact_run(
        &self,
        start: usize,
        len: usize,
        stride: usize,
        first_index: usize,
        out: &mut [usize],
    ) -> usize;
}

impl<T: Element> ZeroTest for [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }

    #[inline]
    fn count_run(&self, start: usize, len: usize, stride: usize) -> usize {
        if stride == 1 {
            simd::count(&self[start..start + len])
        } else if stride == 0 {
            if len > 0 && self[start].is_nonzero() {
                len
            } else {
                0
            }
        } else {
            (0..len)
                .map(|j| self[start + j * stride].is_nonzero() as usize)
                .sum()
        }
    }

    #[inline]
    fn compact_run(
        &self,
        start: usize,
        len: usize,
        stride: usize,
        first_index: usize,
        out: &mut [usize],
    ) -> usize {
        if stride == 1 {
            simd::compact(&self[start..start + len], first_index, out)
        } else {
            compact_strided(len, first_index, out, |j| {
                self[start + j * stride].is_nonzero()
            })
        }
    }
}

/// A source defined by a zero test per offset: strings, lazily computed data, foreign buffers.
pub struct FnSource<F> {
    len: usize,
    is_nonzero: F,
}

impl<F: Fn(usize) -> bool + Sync> FnSource<F> {
    /// `is_nonzero(offset)` is called for offsets `0..len`.
    pub fn new(len: usize, is_nonzero: F) -> Self {
        FnSource { len, is_nonzero }
    }
}

impl<F> std::fmt::Debug for FnSource<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnSource")
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl<F: Fn(usize) -> bool + Sync> ZeroTest for FnSource<F> {
    fn len(&self) -> usize {
        self.len
    }

    fn count_run(&self, start: usize, len: usize, stride: usize) -> usize {
        (0..len)
            .filter(|j| (self.is_nonzero)(start + j * stride))
            .count()
    }

    fn compact_run(
        &self,
        start: usize,
        len: usize,
        stride: usize,
        first_index: usize,
        out: &mut [usize],
    ) -> usize {
        compact_strided(len, first_index, out, |j| {
            (self.is_nonzero)(start + j * stride)
        })
    }
}

/// [`ZeroTest::compact_run`] of a run whose `j`-th element's zero test is `is_nonzero(j)`.
/// Branch-free: every index is stored at the cursor, which only a non-zero advances.
#[inline(always)]
fn compact_strided(
    len: usize,
    first_index: usize,
    out: &mut [usize],
    is_nonzero: impl Fn(usize) -> bool,
) -> usize {
    let mut k = 0;
    for j in 0..len {
        if let Some(slot) = out.get_mut(k) {
            *slot = first_index + j;
        }
        k += is_nonzero(j) as usize;
    }
    k
}

/// Strings: the empty string is zero.
pub fn string_source<S: AsRef<str> + Sync>(
    strings: &[S],
) -> FnSource<impl Fn(usize) -> bool + Sync + '_> {
    FnSource::new(strings.len(), move |i| str_is_nonzero(strings[i].as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_count_and_compact_with_any_stride() {
        let data = [0i32, 5, 0, 7, 9, 0];
        assert_eq!(data[..].count_run(0, 6, 1), 3);
        assert_eq!(data[..].count_run(1, 3, 2), 2); // offsets 1, 3, 5 hold 5, 7, 0
        let mut out = [0usize; 6];
        let k = data[..].compact_run(0, 6, 1, 10, &mut out);
        assert_eq!(&out[..k], &[11, 13, 14]);
        let k = data[..].compact_run(0, 3, 2, 0, &mut out); // offsets 0,2,4 -> 0,0,9
        assert_eq!(&out[..k], &[2]);
        assert_eq!(data[..].count_run(3, 4, 0), 4);
        assert_eq!(data[..].count_run(0, 4, 0), 0);
        let k = data[..].compact_run(1, 3, 0, 0, &mut out);
        assert_eq!(&out[..k], &[0, 1, 2]);
    }

    #[test]
    fn strings_are_zero_when_empty() {
        let s = ["", "a", "", "bc"];
        let src = string_source(&s);
        assert_eq!(src.count_run(0, 4, 1), 2);
        let mut out = [0usize; 4];
        let k = src.compact_run(0, 4, 1, 0, &mut out);
        assert_eq!(&out[..k], &[1, 3]);
    }
}
