//! Tensors with more than 2^32 elements (about 4.3 GB each, allocated zeroed, every page
//! written, a few non-zeros placed near the start, the end and around index 2^32):
//!
//! - NonZero (op-core's ONNX path) and ArgWhere return exact int64 coordinates beyond 2^32
//!   (and beyond u32 in 2-D and 3-D);
//! - BooleanMask selects exact elements past 2^32 (a 2^32 + 256 mask over as many bytes: 8.6 GB,
//!   the largest test) and exact rows starting past byte 2^32 (a [65537] mask over [65537, 65537]);
//! - DirectML's UINT32 path and NonZeroCoordinates refuse the same buffers, outputs untouched.
//!
//! `#[ignore]`d because each needs 4.3-8.6 GB: `scripts/test` runs them with `--ignored
//! --test-threads=1` (one test at a time; peak RSS asserted below 10 GiB, or
//! `NONZERO_HUGE_PEAK_GIB`).

use nonzero_core::dml::{
    coordinates_for_onnx, nonzero_coordinates, CoordinatesError, DmlDataType, DmlError,
    FeatureLevel, NonZeroCoordinatesDesc, TensorDesc,
};
use nonzero_core::mask::{boolean_mask, check_mask_shape, MaskPlan};
use nonzero_core::{
    argwhere_with, nonzero_with, DataType, Layout, NumericSlice, Rayon, Sequential,
};
use nonzero_reliability::touched_zeroed;
use std::time::Instant;

const TWO_32: usize = 1 << 32;

/// A zeroed bool buffer of `n` bytes with ones at `ones`, every page resident.
fn buffer(n: usize, ones: &[usize]) -> Vec<u8> {
    let mut v = touched_zeroed::<u8>(n);
    for &i in ones {
        v[i] = 1;
    }
    v
}

/// The same as a `bool` buffer (ArgWhere's and BooleanMask's typed entry points).
fn bool_buffer(n: usize, ones: &[usize]) -> Vec<bool> {
    let mut v = touched_zeroed::<bool>(n);
    for &i in ones {
        v[i] = true;
    }
    v
}

/// Row-major coordinates of flat index `flat` in `shape`.
fn unravel(mut flat: usize, shape: &[usize]) -> Vec<i64> {
    let mut coords = vec![0i64; shape.len()];
    for (c, &size) in coords.iter_mut().zip(shape).rev() {
        *c = (flat % size) as i64;
        flat /= size;
    }
    coords
}

/// The peak RSS bound: 10 GiB, or `NONZERO_HUGE_PEAK_GIB` (the asan stage raises it for the
/// sanitizer's shadow memory and allocator).
fn check_peak() {
    let limit = std::env::var("NONZERO_HUGE_PEAK_GIB").map_or(10, |v| {
        v.parse().unwrap_or_else(|_| {
            panic!("NONZERO_HUGE_PEAK_GIB must be a whole number of GiB, got {v:?}")
        })
    });
    nonzero_reliability::check_peak(limit);
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
        &NumericSlice::from_bytes(DataType::Bool, &v).unwrap(),
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
    let y = nonzero_with(
        &NumericSlice::from_bytes(DataType::Bool, &v).unwrap(),
        &layout,
        &Rayon,
    )
    .unwrap();
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
    let seq = nonzero_with(
        &NumericSlice::from_bytes(DataType::Bool, &v).unwrap(),
        &layout,
        &Sequential,
    )
    .unwrap();
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
        NumericSlice::new(&v),
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

/// NonZeroCoordinates on a real buffer of `sizes` past 2^32 elements: refused with the typed
/// error naming X's shape, before reading X; Count and Coordinates untouched.
fn coordinates_refuse(v: &[bool], sizes: &[usize]) {
    let mut count = [0xDEAD_BEEFu32; 1];
    let mut coords = vec![0xDEAD_BEEFu32; 64];
    let err =
        coordinates_for_onnx(v, sizes, sizes.len(), &mut count, &mut coords, &Rayon).unwrap_err();
    assert_eq!(
        err,
        CoordinatesError::TooManyElements {
            sizes: sizes.to_vec()
        }
    );
    let message = err.to_string();
    assert!(
        message.contains("at most 4294967295 (2^32 - 1) elements"),
        "{message}"
    );
    assert!(message.contains(&format!("has {}", v.len())), "{message}");
    assert_eq!(count, [0xDEAD_BEEF]);
    assert!(coords.iter().all(|&c| c == 0xDEAD_BEEF));
}

#[test]
#[ignore = "allocates 4.3 GB; run by scripts/test with --ignored"]
fn argwhere_one_dimension_past_two_to_the_32_and_coordinates_refuse() {
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
    let v = bool_buffer(n, &ones);
    let alloc = t.elapsed();
    let layout = Layout::packed(&[n]).unwrap();
    let t = Instant::now();
    let y = argwhere_with(&v[..], &layout, &Rayon).unwrap();
    eprintln!("[{n}] bool: alloc {alloc:?}, ArgWhere {:?}", t.elapsed());
    assert_eq!(y.shape(), [ones.len(), 1]);
    let expected: Vec<i64> = ones.iter().map(|&i| i as i64).collect();
    assert_eq!(y.data, expected);
    let t = Instant::now();
    assert_eq!(argwhere_with(&v[..], &layout, &Sequential).unwrap(), y);
    eprintln!("  sequential: {:?}", t.elapsed());
    coordinates_refuse(&v, &[n]);
    check_peak();
}

#[test]
#[ignore = "allocates 4.3 GB; run by scripts/test with --ignored"]
fn argwhere_three_dimensions_past_two_to_the_32_and_coordinates_refuse() {
    let shape = [2usize, 65537, 32769];
    let n: usize = shape.iter().product(); // 4_295_163_906 > 2^32
    let plane = shape[1] * shape[2];
    let ones = [
        0,
        shape[2] - 1,
        plane,
        TWO_32 - 1,
        TWO_32,
        TWO_32 + 1,
        n - shape[2],
        n - 1,
    ];
    assert!(ones.windows(2).all(|w| w[0] < w[1]) && n > TWO_32);
    let t = Instant::now();
    let v = bool_buffer(n, &ones);
    let alloc = t.elapsed();
    let layout = Layout::packed(&shape).unwrap();
    let t = Instant::now();
    let y = argwhere_with(&v[..], &layout, &Rayon).unwrap();
    eprintln!(
        "{shape:?} bool: alloc {alloc:?}, ArgWhere {:?}",
        t.elapsed()
    );
    assert_eq!(y.shape(), [ones.len(), 3]);
    let expected: Vec<i64> = ones.iter().flat_map(|&f| unravel(f, &shape)).collect();
    assert_eq!(y.data, expected);
    // Row 4 is flat 2^32 = 65537 * 32769 + 65531 * 32769 + 4, whose flat index does not fit u32.
    assert_eq!(y.data[12..15], [1, 65531, 4]);
    let t = Instant::now();
    assert_eq!(argwhere_with(&v[..], &layout, &Sequential).unwrap(), y);
    eprintln!("  sequential: {:?}", t.elapsed());
    coordinates_refuse(&v, &shape);
    check_peak();
}

#[test]
#[ignore = "allocates 8.6 GB (mask and X); run by scripts/test with --ignored"]
fn boolean_mask_selects_exact_elements_past_two_to_the_32() {
    let n = TWO_32 + 256;
    // Sparse entries, a dense run of two whole 64-entry groups across 2^32, a group with 20 of
    // 64 entries, and a sparse last group ending at the last element: every copy path crosses
    // the boundary or the end.
    let mut selected = vec![0, 1, TWO_32 / 2];
    selected.extend(TWO_32 - 64..TWO_32 + 64);
    selected.extend((0..20).map(|j| TWO_32 + 64 + 2 * j));
    selected.extend([TWO_32 + 200, n - 1]);
    // X's value at p is p % 251 + 1 at the selected entries and their neighbours, so a slip by
    // one position reads a different value; elsewhere X is 0.
    let value = |p: usize| (p % 251) as u8 + 1;
    let t = Instant::now();
    let mask = bool_buffer(n, &selected);
    let mut x = touched_zeroed::<u8>(n);
    for &p in &selected {
        let first = p.saturating_sub(1);
        for (q, b) in (first..).zip(&mut x[first..=(p + 1).min(n - 1)]) {
            *b = value(q);
        }
    }
    let alloc = t.elapsed();
    let t = Instant::now();
    let (shape, y) = boolean_mask(&x, &[n], &mask, &[n], &Rayon).unwrap();
    eprintln!(
        "[{n}] u8 x[mask]: alloc {alloc:?}, BooleanMask {:?}",
        t.elapsed()
    );
    assert_eq!(shape, [selected.len()]);
    let expected: Vec<u8> = selected.iter().map(|&p| value(p)).collect();
    assert_eq!(y, expected);

    // One thread, one chunk: the same values.
    let t = Instant::now();
    let plan = MaskPlan::count(&mask, &Sequential);
    assert_eq!(plan.nnz(), selected.len());
    let mut seq = vec![0u8; plan.nnz()];
    plan.gather(&x, 1, &mut seq, &Sequential).unwrap();
    eprintln!("  sequential: {:?}", t.elapsed());
    assert_eq!(seq, expected);
    check_peak();
}

#[test]
#[ignore = "allocates 4.3 GB; run by scripts/test with --ignored"]
fn boolean_mask_selects_exact_rows_past_two_to_the_32() {
    let (rows, cols) = (65537usize, 65537usize);
    // Row 65535 starts at byte 2^32 - 1, row 65536 at 65536 * 65537 > 2^32; both are selected,
    // so they are one run copied across the boundary.
    let selected = [0, rows - 2, rows - 1];
    let value = |r: usize, c: usize| ((r * 31 + c) % 251) as u8 + 1;
    let t = Instant::now();
    let mask = bool_buffer(rows, &selected);
    let mut x = touched_zeroed::<u8>(rows * cols);
    // The selected rows and their neighbours hold row-dependent values.
    for r in [0, 1, rows - 3, rows - 2, rows - 1] {
        for (c, b) in x[r * cols..(r + 1) * cols].iter_mut().enumerate() {
            *b = value(r, c);
        }
    }
    let alloc = t.elapsed();
    assert_eq!((rows - 2) * cols, TWO_32 - 1);
    let geometry = check_mask_shape(&[rows, cols], &[rows]).unwrap();
    assert_eq!(geometry.slice_len, cols);
    let t = Instant::now();
    let (shape, y) = boolean_mask(&x, &[rows, cols], &mask, &[rows], &Rayon).unwrap();
    eprintln!(
        "[{rows}, {cols}] u8, [{rows}] mask: alloc {alloc:?}, BooleanMask {:?}",
        t.elapsed()
    );
    assert_eq!(shape, [selected.len(), cols]);
    let expected: Vec<u8> = selected
        .iter()
        .flat_map(|&r| (0..cols).map(move |c| value(r, c)))
        .collect();
    assert!(y == expected, "selected rows differ");

    let plan = MaskPlan::count_for_slices(&mask, cols, &Sequential);
    let mut seq = vec![0u8; plan.nnz() * cols];
    plan.gather(&x, cols, &mut seq, &Sequential).unwrap();
    assert!(seq == expected, "selected rows differ on one thread");
    check_peak();
}
