//! Element sources the kernel can test for zero, addressed by element offset.
//!
//! Typed slices (`[T]` for any [`Element`]) are the fast path. Strings and anything that is not a
//! plain slice (an ONNX Runtime string tensor, a memory-mapped file) go through [`FnSource`].

use crate::element::{str_is_nonzero, Element};

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
    /// and returns how many it wrote. `out.len() >= len`.
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
            // Written as a fold over the slice so that LLVM vectorises the compare and the sum.
            self[start..start + len]
                .iter()
                .map(|x| x.is_nonzero() as usize)
                .sum()
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
        let out = &mut out[..len];
        if stride == 1 {
            compact_contiguous(&self[start..start + len], first_index, out)
        } else {
            let mut k = 0;
            for j in 0..len {
                out[k] = first_index + j;
                k += self[start + j * stride].is_nonzero() as usize;
            }
            k
        }
    }
}

/// Stream compaction, 64 elements at a time. The zero test writes one flag byte per element
/// (branch-free; the compiler vectorises it for every element width), and the flags are packed
/// into a 64-bit mask by multiplication. Sparse groups then cost one store per set bit; dense
/// groups take a branch-free store per element. Which of the two runs depends on the group's
/// population, a branch that is predictable at any steady density.
#[inline]
fn compact_contiguous<T: Element>(run: &[T], first_index: usize, out: &mut [usize]) -> usize {
    debug_assert!(out.len() >= run.len());
    let mut k = 0;
    let mut groups = run.chunks_exact(GROUP);
    let mut base = first_index;
    let mut flags = [0u8; GROUP];
    for group in &mut groups {
        for (f, x) in flags.iter_mut().zip(group) {
            *f = x.is_nonzero() as u8;
        }
        let mut mask = pack_flags(&flags);
        if mask.count_ones() < SPARSE_GROUP {
            while mask != 0 {
                // k < elements seen so far <= out.len(): the store is in bounds.
                out[k] = base + mask.trailing_zeros() as usize;
                k += 1;
                mask &= mask - 1;
            }
        } else {
            for (j, &f) in flags.iter().enumerate() {
                out[k] = base + j;
                k += f as usize;
            }
        }
        base += GROUP;
    }
    for (j, x) in groups.remainder().iter().enumerate() {
        out[k] = base + j;
        k += x.is_nonzero() as usize;
    }
    k
}

const GROUP: usize = 64;
/// Below this many non-zeros in a group, visiting set bits beats storing every index.
const SPARSE_GROUP: u32 = 16;

/// Bit `i` of the result is `flags[i]` (each 0 or 1): eight flag bytes at a time are gathered
/// into one byte by a multiplication whose partial products land each byte's bit in place.
#[inline(always)]
fn pack_flags(flags: &[u8; GROUP]) -> u64 {
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let mut mask = 0u64;
    for (i, eight) in flags.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(eight.try_into().expect("8 bytes"));
        mask |= (word.wrapping_mul(GATHER) >> 56) << (8 * i);
    }
    mask
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
        let mut k = 0;
        for j in 0..len {
            out[k] = first_index + j;
            k += (self.is_nonzero)(start + j * stride) as usize;
        }
        k
    }
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
    fn flags_pack_into_bits_in_order() {
        let mut flags = [0u8; GROUP];
        for i in [0, 1, 7, 8, 9, 31, 32, 62, 63] {
            flags[i] = 1;
        }
        let expected = [0, 1, 7, 8, 9, 31, 32, 62, 63]
            .iter()
            .fold(0u64, |m, &i| m | 1 << i);
        assert_eq!(pack_flags(&flags), expected);
        assert_eq!(pack_flags(&[1; GROUP]), u64::MAX);
        assert_eq!(pack_flags(&[0; GROUP]), 0);
    }

    #[test]
    fn sparse_and_dense_groups_compact_alike() {
        // 300 elements: four full groups (sparse, dense, empty, full) and a tail.
        let data: Vec<u32> = (0..300u32)
            .map(|i| match i / 64 {
                0 => (i % 17 == 0) as u32,
                1 => (i % 3 != 0) as u32,
                2 => 0,
                _ => i,
            })
            .collect();
        let expected: Vec<usize> = (0..300).filter(|&i| data[i] != 0).map(|i| i + 5).collect();
        let mut out = [0usize; 300];
        let k = data[..].compact_run(0, 300, 1, 5, &mut out);
        assert_eq!(&out[..k], &expected[..]);
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
