//! Bool tensors with more than 2^32 elements (about 4.3 GB each, allocated zeroed, a few ones
//! written near the start, the end and around index 2^32):
//!
//! - op-core's ONNX path returns exact int64 coordinates beyond 2^32 (and beyond u32 in 2-D);
//! - DirectML's UINT32 path refuses the same buffer with `TooManyElements`, outputs untouched.
//!
//! `#[ignore]`d because each needs ~4.3 GB: `scripts/test` runs them with `--ignored
//! --test-threads=1` (one buffer at a time, peak RSS ~4.4 GB; asserted below 10 GB).

use nonzero_core::dml::{
    nonzero_coordinates, DmlDataType, DmlError, FeatureLevel, NonZeroCoordinatesDesc, TensorDesc,
};
use nonzero_core::{nonzero_with, Layout, NumericSlice, Rayon, Sequential};
use nonzero_reliability::{peak_rss_kib, rss_kib};
use std::time::Instant;

const TWO_32: usize = 1 << 32;

/// A zeroed bool buffer of `n` bytes with ones at `ones`. Every page is written, so the kernel
/// reads real resident memory rather than the kernel's shared zero page (which is what reading a
/// fresh `calloc` gives, and which would make the test faster than real data).
fn buffer(n: usize, ones: &[usize]) -> Vec<u8> {
    let mut v = vec![0u8; n];
    for page in v.chunks_mut(4096) {
        // SAFETY: a valid, aligned pointer into the buffer; volatile so the store is kept.
        unsafe { std::ptr::write_volatile(page.as_mut_ptr(), 0) };
    }
    for &i in ones {
        v[i] = 1;
    }
    v
}

fn check_peak() {
    let peak = peak_rss_kib();
    eprintln!("RSS now {} MiB, peak {} MiB", rss_kib() / 1024, peak / 1024);
    assert!(
        peak < 10 * 1024 * 1024,
        "peak RSS {peak} KiB is over 10 GiB"
    );
}

#[test]
#[ignore = "allocates 4.3 GB; run by scripts/test with --ignored"]
fn one_dimension_past_two_to_the_32() {
    let n = TWO_32 + 64;
    let ones = [
        0,
        1,
        TWO_32 / 2,
        TWO_32 - 1,
        TWO_32,
        TWO_32 + 1,
        TWO_32 + 37,
        n - 1,
    ];
    let t = Instant::now();
    let v = buffer(n, &ones);
    let alloc = t.elapsed();
    let t = Instant::now();
    let y = nonzero_with(
        &NumericSlice::Bool(&v),
        &Layout::packed(&[n]).unwrap(),
        &Rayon,
    )
    .unwrap();
    eprintln!("[{n}] bool: alloc {alloc:?}, NonZero {:?}", t.elapsed());
    assert_eq!(y.shape(), [1, ones.len()]);
    let expected: Vec<i64> = ones.iter().map(|&i| i as i64).collect();
    assert_eq!(y.data, expected);
    assert!(y.data.iter().any(|&c| c > u32::MAX as i64));
    check_peak();
}

#[test]
#[ignore = "allocates 4.3 GB; run by scripts/test with --ignored"]
fn two_dimensions_past_two_to_the_32_and_directml_refuses() {
    let (rows, cols) = (65537usize, 65537usize);
    let n = rows * cols; // 4_295_098_369 > 2^32
    assert!(n > TWO_32);
    let ones = [0, cols - 1, TWO_32 - 1, TWO_32, TWO_32 + 1, n - cols, n - 1];
    let t = Instant::now();
    let v = buffer(n, &ones);
    let alloc = t.elapsed();
    let layout = Layout::packed(&[rows, cols]).unwrap();
    let t = Instant::now();
    let y = nonzero_with(&NumericSlice::Bool(&v), &layout, &Rayon).unwrap();
    eprintln!(
        "[{rows}, {cols}] bool: alloc {alloc:?}, NonZero {:?}",
        t.elapsed()
    );
    let expected: Vec<i64> = ones
        .iter()
        .map(|&f| (f / cols) as i64)
        .chain(ones.iter().map(|&f| (f % cols) as i64))
        .collect();
    assert_eq!(y.shape(), [2, ones.len()]);
    assert_eq!(y.data, expected);

    // The same count on one thread (a different chunking) agrees.
    let t = Instant::now();
    let seq = nonzero_with(&NumericSlice::Bool(&v), &layout, &Sequential).unwrap();
    eprintln!("  sequential: {:?}", t.elapsed());
    assert_eq!(seq, y);

    // DirectML: M and the count are UINT32, so 65537 x 65537 elements cannot be described.
    let desc = NonZeroCoordinatesDesc {
        input: TensorDesc::packed(DmlDataType::Uint8, &[rows as u32, cols as u32]),
        output_count: TensorDesc::packed(DmlDataType::Uint32, &[1, 1]),
        output_coordinates: TensorDesc::packed(DmlDataType::Uint32, &[u32::MAX, 2]),
    };
    let mut count = [0xDEAD_BEEFu32; 1];
    let mut coords = vec![0xDEAD_BEEFu32; 64];
    let err = nonzero_coordinates(
        FeatureLevel::V4_0,
        &desc,
        NumericSlice::Uint8(&v),
        &mut count,
        &mut coords,
        &Rayon,
    )
    .unwrap_err();
    assert_eq!(
        err,
        DmlError::TooManyElements {
            input_elements: n as u64
        }
    );
    assert_eq!(count, [0xDEAD_BEEF]);
    assert!(coords.iter().all(|&c| c == 0xDEAD_BEEF));
    check_peak();
}
