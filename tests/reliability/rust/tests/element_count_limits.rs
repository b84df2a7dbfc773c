//! The element-count limits of the new ops from shapes alone, without a big allocation:
//! NonZeroCoordinates refuses more than 2^32 - 1 elements (before reading X), accepts exactly
//! 2^32 - 1, and BooleanMask's shape arithmetic is exact past 2^32 and refuses usize overflow.
//! The same limits on real 4.3 GB buffers: `huge_tensors` (ignored by default).

use nonzero_core::dml::{coordinates_for_onnx, coordinates_shapes, CoordinatesError};
use nonzero_core::mask::{check_mask_shape, MaskError};
use nonzero_core::Sequential;

const TWO_32: usize = 1 << 32;

#[test]
fn coordinates_refuse_more_than_two_to_the_32_minus_one_elements() {
    for sizes in [
        vec![TWO_32],
        vec![65537, 65537],
        vec![1 << 16, 1 << 16],
        vec![2, 65537, 32769],
        vec![1, 1, TWO_32 + 64],
        vec![usize::MAX, usize::MAX],
    ] {
        let err = coordinates_shapes(&sizes, None).unwrap_err();
        assert_eq!(
            err,
            CoordinatesError::TooManyElements {
                sizes: sizes.clone()
            }
        );
        let numel: u128 = sizes.iter().map(|&s| s as u128).product();
        let message = err.to_string();
        assert!(
            message.contains("at most 4294967295 (2^32 - 1) elements")
                && message.contains(&format!("{sizes:?} has {numel}")),
            "{message}"
        );
    }
}

#[test]
fn coordinates_accept_exactly_two_to_the_32_minus_one_elements() {
    let max = u32::MAX as usize;
    assert_eq!(coordinates_shapes(&[max], None), Ok(([1], [max, 1])));
    // 3 * 5 * 17 * 257 * 65537 = 2^32 - 1.
    let sizes = [3, 5, 17, 257, 65537];
    assert_eq!(coordinates_shapes(&sizes, Some(5)), Ok(([1], [max, 5])));
    assert_eq!(coordinates_shapes(&[1, max], Some(1)), Ok(([1], [max, 1])));
    // A zero size empties X however large the others are.
    assert_eq!(
        coordinates_shapes(&[usize::MAX, 0], None),
        Ok(([1], [0, 2]))
    );
}

/// The refusal comes from the shape, before X is read: an X that does not even cover the shape
/// gets TooManyElements (not a data-length error), and nothing is written.
#[test]
fn coordinates_refuse_from_the_shape_before_reading_x() {
    let x = [true; 4];
    let mut count = [7u32];
    let mut coords = [7u32; 8];
    let err = coordinates_for_onnx(
        &x[..],
        &[65537, 65537],
        2,
        &mut count,
        &mut coords,
        &Sequential,
    )
    .unwrap_err();
    assert_eq!(
        err,
        CoordinatesError::TooManyElements {
            sizes: vec![65537, 65537]
        }
    );
    assert_eq!((count, coords), ([7], [7; 8]));
    // A `columns` outside [effective rank, rank] is named first, whatever the size.
    let err = coordinates_for_onnx(
        &x[..],
        &[65537, 65537],
        1,
        &mut count,
        &mut coords,
        &Sequential,
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "NonZeroCoordinates' columns (1) must be at least the effective rank of X (2: its rank \
         without leading size-1 dimensions) and at most its rank (2)"
    );
    assert_eq!((count, coords), ([7], [7; 8]));
}

#[test]
fn boolean_mask_shapes_past_two_to_the_32_are_exact() {
    let g = check_mask_shape(&[TWO_32 + 3, 2, 5], &[TWO_32 + 3]).unwrap();
    assert_eq!((g.mask_len, g.slice_len), (TWO_32 + 3, 10));
    assert_eq!(g.output_shape(TWO_32 + 1), [TWO_32 + 1, 2, 5]);
    let g = check_mask_shape(&[65537, 65537, 3], &[65537, 65537]).unwrap();
    assert_eq!((g.mask_len, g.slice_len), (65537 * 65537, 3));
    assert_eq!(g.slice_shape, [3]);
}

#[test]
fn boolean_mask_shapes_that_overflow_usize_are_refused() {
    let big = 1usize << 40;
    assert_eq!(
        check_mask_shape(&[big, big], &[big]),
        Err(MaskError::ElementCountOverflow {
            sizes: vec![big, big]
        })
    );
    assert_eq!(
        check_mask_shape(&[big, big, 4], &[big, big]),
        Err(MaskError::ElementCountOverflow {
            sizes: vec![big, big]
        })
    );
    // A zero size anywhere makes the tensor empty, not too large.
    let g = check_mask_shape(&[big, big, 0], &[big]).unwrap();
    assert_eq!((g.mask_len, g.slice_len), (big, 0));
    // The shape rule is named with both shapes whatever their size.
    let err = check_mask_shape(&[TWO_32, 2], &[TWO_32 + 1]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "mask shape [4294967297] must equal the leading dimensions of X's shape [4294967296, 2]"
    );
}
