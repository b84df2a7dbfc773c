//! Inputs the fuzzers (fuzz/) found, kept as ordinary tests.

use nonzero_core::dml::{
    nonzero_coordinates, validate, DmlDataType, DmlError, FeatureLevel, NonZeroCoordinatesDesc,
    TensorDesc,
};
use nonzero_core::{NumericSlice, Sequential};

/// fuzz/seeds/dml_coordinates/regress_u64_size_product_overflow: four UINT32 sizes near 2^32
/// made `validate`'s u64 element count overflow (a panic in debug builds, a wrapped count in
/// release). Now: TooManyElements, outputs untouched.
#[test]
fn input_sizes_whose_product_overflows_u64_are_refused() {
    let big = u32::MAX - 1;
    let desc = NonZeroCoordinatesDesc {
        input: TensorDesc::packed(DmlDataType::Float32, &[big, big, big, big]),
        output_count: TensorDesc::packed(DmlDataType::Uint32, &[1, 1, 1, 1]),
        output_coordinates: TensorDesc::packed(DmlDataType::Uint32, &[1, 1, 7, 4]),
    };
    let data = [1.0f32; 8];
    let input = NumericSlice::new(&data);
    let mut count = [7u32; 1];
    let mut coords = [7u32; 28];
    let level = FeatureLevel::V4_0;
    let err =
        nonzero_coordinates(level, &desc, input, &mut count, &mut coords, &Sequential).unwrap_err();
    assert!(matches!(err, DmlError::TooManyElements { .. }), "{err}");
    assert_eq!(validate(level, &desc, input, 1, 28).unwrap_err(), err);
    assert_eq!(count, [7]);
    assert!(coords.iter().all(|&c| c == 7));
}

/// A zero size makes the tensor empty, however large the other sizes are.
#[test]
fn a_zero_size_with_huge_sizes_is_not_too_many_elements() {
    let desc = NonZeroCoordinatesDesc {
        input: TensorDesc::packed(DmlDataType::Uint8, &[u32::MAX, u32::MAX, u32::MAX, 0]),
        output_count: TensorDesc::packed(DmlDataType::Uint32, &[1, 1, 1, 1]),
        output_coordinates: TensorDesc::packed(DmlDataType::Uint32, &[1, 1, 0, 4]),
    };
    let v = validate(
        FeatureLevel::V4_0,
        &desc,
        NumericSlice::new::<u8>(&[]),
        1,
        0,
    )
    .unwrap();
    assert_eq!((v.rows, v.columns, v.layout.numel()), (0, 4, 0));
}
