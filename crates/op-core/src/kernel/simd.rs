//! The hot loops picked at run time: counting and stream compaction of a contiguous run, compiled
//! once more for wider vector units. Counting, and compaction up to AVX2, are the portable loops
//! of `portable.rs`, which `target_feature` only lets the compiler widen; compaction on AVX-512
//! is written with intrinsics (`avx512.rs`).

#[cfg(target_arch = "x86_64")]
use super::avx512;
use super::portable::{compact_contiguous, count_contiguous};
use crate::Element;

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

#[cfg(test)]
mod tests {
    use super::*;

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
