//! The hot loops of the kernel: counting and stream compaction of a contiguous run, compiled once
//! more for wider vector units and picked at run time. Counting, and compaction up to AVX2, are
//! the same generic Rust, which `target_feature` only lets the compiler widen; compaction on
//! AVX-512 is written with intrinsics (module `avx512`).

use crate::Element;

/// Non-zeros in a contiguous run. Sums per block into `u32` lanes (a `usize` sum would make the
/// vectorised loop widen every flag to 64 bits).
#[inline(always)]
fn count_contiguous<T: Element>(run: &[T]) -> usize {
    run.chunks(COUNT_BLOCK)
        .map(|block| block.iter().map(|x| x.is_nonzero() as u32).sum::<u32>() as usize)
        .sum()
}

/// Elements per `u32` partial count: far below 2^32, large enough to amortise the reduction.
const COUNT_BLOCK: usize = 1 << 16;

/// Stream compaction, 64 elements at a time. The zero test writes one flag byte per element
/// (branch-free; vectorised for every element width) and the flags are packed into a 64-bit mask
/// by multiplication. Then, for each byte of the mask (8 elements), eight positions from a lookup
/// table are stored unconditionally and the cursor advances by the byte's population: a fixed
/// amount of work per 8 elements at any density, with no data-dependent branch but the skip of
/// empty groups (the common case of sparse masks, and predictable at any steady density).
///
/// `out` may be shorter than the run, down to exactly the run's non-zero count (an output row
/// written in place): near its end the eight stores become one per set bit, and positions past
/// `out.len()` are counted but not written. Returns the run's non-zero count.
#[inline(always)]
fn compact_contiguous<T: Element>(run: &[T], first_index: usize, out: &mut [usize]) -> usize {
    let mut k = 0;
    let mut groups = run.chunks_exact(GROUP);
    let mut base = first_index;
    for group in &mut groups {
        k = store_positions(group_mask(group), base, k, out);
        base += GROUP;
    }
    let rest = groups.remainder();
    if !rest.is_empty() {
        k = store_positions(group_mask(rest), base, k, out);
    }
    k
}

/// Bit `i` set when `group[i]` is non-zero (`group` holds at most 64 elements): one flag byte
/// per element (a vectorised zero test), packed by [`pack_flags`].
#[inline(always)]
fn group_mask<T: Element>(group: &[T]) -> u64 {
    let mut flags = [0u8; GROUP];
    for (f, x) in flags.iter_mut().zip(group) {
        *f = x.is_nonzero() as u8;
    }
    pack_flags(&flags)
}

/// Stores `base + i` for each set bit `i` of `mask` at `out[k..]`; returns the advanced cursor.
#[inline(always)]
fn store_positions(mask: u64, base: usize, k: usize, out: &mut [usize]) -> usize {
    if mask == 0 {
        return k;
    }
    if let Some(window) = out.get_mut(k..k + GROUP) {
        // Room for the whole group: eight unconditional stores per mask byte.
        let window: &mut [usize; GROUP] = window.try_into().expect("GROUP slots");
        let mut w = 0;
        for (byte_index, byte) in mask.to_le_bytes().into_iter().enumerate() {
            let positions = &SET_BITS[byte as usize];
            let at = base + 8 * byte_index;
            debug_assert!(w <= 8 * byte_index);
            // SAFETY: `w` is the number of set bits in the bytes before this one, at most
            // 8 * byte_index <= 56, so `w + 8 <= GROUP` slots of `window` are in bounds.
            let slots = unsafe { window.get_unchecked_mut(w..w + 8) };
            for (slot, &p) in slots.iter_mut().zip(positions) {
                *slot = at + p as usize;
            }
            w += byte.count_ones() as usize;
        }
        return k + w;
    }
    // The end of an exactly sized output: one store per set bit, none past its end.
    let mut k = k;
    for (byte_index, byte) in mask.to_le_bytes().into_iter().enumerate() {
        let ones = byte.count_ones() as usize;
        if let Some(slots) = out.get_mut(k..) {
            let at = base + 8 * byte_index;
            for (slot, &p) in slots.iter_mut().zip(&SET_BITS[byte as usize][..ones]) {
                *slot = at + p as usize;
            }
        }
        k += ones;
    }
    k
}

const GROUP: usize = 64;

/// `SET_BITS[b]` lists the positions of the set bits of `b`, ascending (unused slots are 0).
static SET_BITS: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut bit, mut n) = (0, 0);
        while bit < 8 {
            if b & (1 << bit) != 0 {
                table[b][n] = bit as u8;
                n += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    table
};

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

#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Baseline,
    Avx2,
    Avx512,
}

#[cfg(target_arch = "x86_64")]
fn level() -> Level {
    use std::sync::atomic::{AtomicU8, Ordering};
    static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);
    // The cache is read first: this runs on every call, and the detection below costs more
    // than a small input's whole count.
    match LEVEL.load(Ordering::Relaxed) {
        0 => return Level::Baseline,
        1 => return Level::Avx2,
        2 => return Level::Avx512,
        _ => {}
    }
    let avx512 = is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("avx512vl");
    let avx2 = is_x86_feature_detected!("avx2")
        && is_x86_feature_detected!("bmi1")
        && is_x86_feature_detected!("bmi2")
        && is_x86_feature_detected!("popcnt");
    // NONZERO_SIMD caps the level (never above what the CPU has), so that tests can run
    // every path this machine supports.
    let level = match std::env::var("NONZERO_SIMD").as_deref() {
        Ok("baseline") => Level::Baseline,
        Ok("avx2") if avx2 => Level::Avx2,
        Ok("avx2") => Level::Baseline,
        _ if avx512 && avx2 => Level::Avx512,
        _ if avx2 => Level::Avx2,
        _ => Level::Baseline,
    };
    LEVEL.store(level as u8, Ordering::Relaxed);
    level
}

/// The instruction set the kernel's loops use on this machine.
pub fn instruction_set() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    return match level() {
        Level::Baseline => "x86-64 baseline (SSE2)",
        Level::Avx2 => "AVX2",
        Level::Avx512 => "AVX-512",
    };
    // aarch64 has no levels to pick: NEON is in its baseline, and the compiler vectorises the
    // portable loops with it (zero tests with cmeq/cmtst, counts with cnt/addv: docs/platforms.md).
    #[cfg(target_arch = "aarch64")]
    return "NEON (portable loops)";
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    "portable"
}

/// Defines `$name`, which runs `$portable` compiled for the best instruction set this CPU has
/// (AVX-512, AVX2 or the baseline), or `$avx512` on AVX-512 when that differs.
macro_rules! multiversion {
    ($name:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty, portable: $portable:expr, avx512: $avx512:expr) => {
        #[inline]
        pub fn $name<T: Element>($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,bmi1,bmi2,popcnt")]
                fn avx2<T: Element>($($arg: $ty),*) -> $ret {
                    $portable
                }
                #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,bmi1,bmi2,popcnt")]
                fn avx512<T: Element>($($arg: $ty),*) -> $ret {
                    $avx512
                }
                match level() {
                    // SAFETY: `level` reported these features on this CPU.
                    Level::Avx512 => return unsafe { avx512::<T>($($arg),*) },
                    // SAFETY: as above.
                    Level::Avx2 => return unsafe { avx2::<T>($($arg),*) },
                    Level::Baseline => {}
                }
            }
            $portable
        }
    };
}

multiversion!(count, (run: &[T]) -> usize,
    portable: count_contiguous(run),
    avx512: count_contiguous(run));
multiversion!(compact, (run: &[T], first_index: usize, out: &mut [usize]) -> usize,
    portable: compact_contiguous(run, first_index, out),
    avx512: avx512::compact(run, first_index, out));

/// The compaction written for AVX-512, where two instructions replace the portable code's
/// inner loops: a test into a mask register gives a vector's bits, and a compress packs the
/// positions of eight elements' set bits into one vector.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use crate::Element;
    use std::arch::x86_64::*;

    /// [`super::compact_contiguous`] on AVX-512, with the same contract. The run is read 64
    /// bytes at a time: a test into a mask register gives the vector's bits, then per byte of
    /// them one compress packs the positions of its set bits and one store writes them. With
    /// room for the vector's every element the stores are whole vectors; at the end of an
    /// exactly sized output they are masked to the byte's set bits; a short output (fewer slots
    /// than set bits) takes the portable code, which stops at its end, as does the tail of
    /// fewer than 64 bytes and every complex type (whose two parts are tested together).
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,bmi1,bmi2,popcnt")]
    pub(super) fn compact<T: Element>(run: &[T], first_index: usize, out: &mut [usize]) -> usize {
        let size = size_of::<T>();
        let (Some(magnitude), true) = (
            T::DTYPE.magnitude_mask(),
            T::DTYPE.component_size() == Some(size),
        ) else {
            return super::compact_contiguous(run, first_index, out);
        };
        // Elements per vector.
        let lanes = 64 / size;
        let bytes: &[u8] = bytemuck::cast_slice(run);
        let mut vectors = bytes.chunks_exact(64);
        let slots = out.as_mut_ptr();
        let mut k = 0;
        // The positions of the current mask byte's eight elements.
        let mut positions = _mm512_add_epi64(
            _mm512_set1_epi64(first_index as i64),
            _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
        );
        let step = _mm512_set1_epi64(8);
        for (v, vector) in (&mut vectors).enumerate() {
            // SAFETY: `vector` is 64 readable bytes; the load has no alignment requirement.
            let x = unsafe { _mm512_loadu_si512(vector.as_ptr().cast()) };
            // Bit i: element i of the vector is non-zero (`lanes` bits).
            let mask: u64 = match size {
                1 => _mm512_test_epi8_mask(x, _mm512_set1_epi8(magnitude as i8)),
                2 => _mm512_test_epi16_mask(x, _mm512_set1_epi16(magnitude as i16)).into(),
                4 => _mm512_test_epi32_mask(x, _mm512_set1_epi32(magnitude as i32)).into(),
                _ => _mm512_test_epi64_mask(x, _mm512_set1_epi64(magnitude as i64)).into(),
            };
            let ones = mask.count_ones() as usize;
            let free = out.len().saturating_sub(k);
            let mask_bytes = &mask.to_le_bytes()[..lanes / 8];
            if ones == 0 {
                // Nothing to store (and past a short output's end `slots + k` would not even be
                // a pointer into `out`).
                positions = _mm512_add_epi64(positions, _mm512_set1_epi64(lanes as i64));
            } else if free >= lanes {
                let start = k;
                for &byte in mask_bytes {
                    let packed = _mm512_maskz_compress_epi64(byte, positions);
                    debug_assert!(k - start + 8 <= lanes);
                    // SAFETY: `k - start` counts the set bits of this vector's bytes before
                    // this one, at most `lanes - 8`, and `free >= lanes` slots follow `start`:
                    // the eight lanes at `k` are inside `out`.
                    unsafe { _mm512_storeu_si512(slots.add(k).cast(), packed) };
                    // A `usize` sum: bounded by 64, it was narrowed to a byte register, with a
                    // partial-register merge on every store's address.
                    k += byte.count_ones() as usize;
                    positions = _mm512_add_epi64(positions, step);
                }
            } else if free >= ones {
                for &byte in mask_bytes {
                    let packed = _mm512_maskz_compress_epi64(byte, positions);
                    let set = byte.count_ones();
                    let written = _bzhi_u32(0xFF, set) as u8;
                    // SAFETY: the store writes lanes `k..k + set` only (masked-off lanes are
                    // neither written nor faulted on); the vector's set bits fit the free
                    // slots, so `k + set <= out.len()`, and `k < out.len()` as `ones > 0`.
                    unsafe { _mm512_mask_storeu_epi64(slots.add(k).cast(), written, packed) };
                    k += set as usize;
                    positions = _mm512_add_epi64(positions, step);
                }
            } else {
                k = store_short(mask, first_index + v * lanes, k, out);
                positions = _mm512_add_epi64(positions, _mm512_set1_epi64(lanes as i64));
            }
        }
        let done = (bytes.len() - vectors.remainder().len()) / size;
        if done < run.len() {
            let rest = out.get_mut(k..).unwrap_or_default();
            k += super::compact_contiguous(&run[done..], first_index + done, rest);
        }
        k
    }

    /// The portable stores, out of line: only an output shorter than the run's non-zeros ends
    /// here.
    #[cold]
    #[inline(never)]
    fn store_short(mask: u64, base: usize, k: usize, out: &mut [usize]) -> usize {
        super::store_positions(mask, base, k, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        use crate::ZeroTest;
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
    fn compaction_into_an_exactly_sized_output_writes_every_index_and_no_more() {
        // Dense, sparse and partial groups; the output holds exactly the non-zeros, or fewer.
        for n in [0usize, 1, 7, 8, 9, 63, 64, 65, 130, 1000] {
            for period in [1usize, 2, 3, 7, 64] {
                let data: Vec<u8> = (0..n).map(|i| (i % period == 0) as u8).collect();
                let expected: Vec<usize> =
                    (0..n).filter(|&i| data[i] != 0).map(|i| i + 3).collect();
                let mut out = vec![usize::MAX; expected.len()];
                assert_eq!(
                    compact(&data, 3, &mut out),
                    expected.len(),
                    "n {n} period {period}"
                );
                assert_eq!(out, expected, "n {n} period {period}");
                // A short output: the count is still the run's, the writes stop at its end.
                let short = expected.len() / 2;
                let mut out = vec![usize::MAX; short];
                assert_eq!(compact(&data, 3, &mut out), expected.len());
                assert_eq!(out, expected[..short]);
            }
        }
    }

    /// Whole groups of every type, through whichever instruction set this run uses (AVX-512
    /// tests each 64-byte vector into a mask register): the zero test is the element's own,
    /// -0.0 and a lone sign bit included.
    #[test]
    fn every_type_compacts_whole_groups_by_its_zero_test() {
        use crate::{bf16, f16, Complex32, Complex64};
        fn check<T: Element + Copy + std::fmt::Debug>(values: [T; 4]) {
            // A pseudo-random pick of the four values over four groups and a tail, with an
            // all-zero stretch (`values[0]` is zero) in the middle.
            let mut state = 0x9E37_79B9u32;
            let run: Vec<T> = (0..300)
                .map(|i| {
                    state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    values[if (150..250).contains(&i) {
                        0
                    } else {
                        (state >> 30) as usize
                    }]
                })
                .collect();
            let expected: Vec<usize> = (0..run.len())
                .filter(|&i| run[i].is_nonzero())
                .map(|i| i + 7)
                .collect();
            // Room for every element, exactly the non-zeros, and fewer (the count is still the
            // run's, the writes stop at the output's end); a guard of 64 slots after the output
            // catches a store past its end.
            for slots in [run.len(), expected.len(), expected.len() / 2] {
                let mut buffer = vec![usize::MAX; slots + 64];
                let (out, guard) = buffer.split_at_mut(slots);
                let k = compact(&run, 7, out);
                assert_eq!(k, expected.len(), "{values:?}");
                let written = k.min(slots);
                assert_eq!(&out[..written], &expected[..written], "{values:?} {slots}");
                assert!(guard.iter().all(|&x| x == usize::MAX), "{values:?} {slots}");
            }
            assert_eq!(count(&run), expected.len(), "{values:?}");
        }
        check([false, true, false, true]);
        check([0u8, 1, 0x80, 0]);
        check([0i8, -1, i8::MIN, 0]);
        check([0u16, 1, 0x8000, 0x0100]);
        check([0i16, -1, i16::MIN, 0]);
        check([0u32, 1, 1 << 31, 1 << 16]);
        check([0i32, -1, i32::MIN, 0]);
        check([0u64, 1, 1 << 63, 1 << 32]);
        check([0i64, -1, i64::MIN, 0]);
        check([0.0f32, -0.0, f32::NAN, f32::from_bits(1)]);
        check([0.0f64, -0.0, -f64::NAN, f64::from_bits(1)]);
        check([f16::ZERO, f16::NEG_ZERO, f16::from_bits(1), f16::NAN]);
        check([bf16::ZERO, bf16::NEG_ZERO, bf16::from_bits(1), bf16::NAN]);
        check([
            Complex32::new(0.0, 0.0),
            Complex32::new(-0.0, -0.0),
            Complex32::new(0.0, f32::NAN),
            Complex32::new(f32::from_bits(1), -0.0),
        ]);
        check([
            Complex64::new(0.0, 0.0),
            Complex64::new(-0.0, 0.0),
            Complex64::new(0.0, -1.0),
            Complex64::new(f64::from_bits(1), 0.0),
        ]);
    }

    #[test]
    fn runs_count_and_compact() {
        let data = [0i32, 5, 0, 7, 9, 0];
        assert_eq!(count(&data), 3);
        let mut out = [0usize; 6];
        let k = compact(&data, 10, &mut out);
        assert_eq!(&out[..k], &[11, 13, 14]);
    }
}
