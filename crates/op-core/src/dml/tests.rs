use super::*;
use crate::{Rayon, Sequential};

fn desc(input: TensorDesc, m: u32, n: u32) -> NonZeroCoordinatesDesc {
    let dims = input.sizes.len();
    let mut coords = vec![1u32; dims];
    coords[dims - 2] = m;
    coords[dims - 1] = n;
    NonZeroCoordinatesDesc {
        input,
        output_count: TensorDesc::packed(DmlDataType::Uint32, &vec![1; dims]),
        output_coordinates: TensorDesc::packed(DmlDataType::Uint32, &coords),
    }
}

const SENTINEL: u32 = 0xDEAD_BEEF;

#[test]
fn the_directml_doc_example() {
    let x = [1.0f32, 0.0, 0.0, 2.0, -0.0, 3.5, 0.0, -5.2];
    let d = desc(
        TensorDesc::packed(DmlDataType::Float32, &[1, 1, 2, 4]),
        8,
        3,
    );
    let mut count = [SENTINEL];
    let mut coords = [SENTINEL; 24];
    let nnz = nonzero_coordinates(
        FeatureLevel::V3_0,
        &d,
        NumericSlice::new(&x),
        &mut count,
        &mut coords,
        &Sequential,
    )
    .unwrap();
    assert_eq!((nnz, count[0]), (4, 4));
    assert_eq!(&coords[..12], &[0, 0, 0, 0, 0, 3, 0, 1, 1, 0, 1, 3]);
    assert!(
        coords[12..].iter().all(|&c| c == SENTINEL),
        "rows past the count are left alone"
    );
}

#[test]
fn columns_are_right_aligned_for_every_valid_n() {
    let x = [0u8, 7, 0, 0, 0, 9];
    for (n, expected) in [
        (2u32, vec![0, 1, 1, 2]),
        (3, vec![0, 0, 1, 0, 1, 2]),
        (4, vec![0, 0, 0, 1, 0, 0, 1, 2]),
    ] {
        let d = desc(TensorDesc::packed(DmlDataType::Uint8, &[1, 1, 2, 3]), 6, n);
        let mut count = [0];
        let mut coords = vec![SENTINEL; 6 * n as usize];
        nonzero_coordinates(
            FeatureLevel::V4_0,
            &d,
            NumericSlice::new(&x),
            &mut count,
            &mut coords,
            &Sequential,
        )
        .unwrap();
        assert_eq!(count[0], 2);
        assert_eq!(&coords[..2 * n as usize], &expected[..], "N = {n}");
    }
}

#[test]
fn strided_and_broadcast_inputs() {
    // {1,1,3,2} viewed with strides {0,0,0,1}: one row [0, 4] broadcast three times.
    let x = [0i16, 4];
    let d = desc(
        TensorDesc::strided(DmlDataType::Int16, &[1, 1, 3, 2], &[0, 0, 0, 1]),
        6,
        2,
    );
    let mut count = [0];
    let mut coords = [SENTINEL; 12];
    nonzero_coordinates(
        FeatureLevel::V3_0,
        &d,
        NumericSlice::new(&x),
        &mut count,
        &mut coords,
        &Rayon,
    )
    .unwrap();
    assert_eq!(count[0], 3);
    assert_eq!(&coords[..6], &[0, 1, 1, 1, 2, 1]);
    // The transpose of a 2x3 matrix: sizes {3,2}, strides {1,3}.
    let m = [1i32, 0, 2, 0, 3, 0]; // [[1,0,2],[0,3,0]] row-major
    let d = desc(
        TensorDesc::strided(DmlDataType::Int32, &[3, 2], &[1, 3]),
        6,
        2,
    );
    let mut coords = [SENTINEL; 12];
    nonzero_coordinates(
        FeatureLevel::V4_0,
        &d,
        NumericSlice::new(&m),
        &mut count,
        &mut coords,
        &Sequential,
    )
    .unwrap();
    assert_eq!(count[0], 3);
    assert_eq!(&coords[..6], &[0, 0, 1, 1, 2, 0]);
}

fn expect_error(
    level: FeatureLevel,
    d: &NonZeroCoordinatesDesc,
    input: NumericSlice<'_>,
    coords_len: usize,
) -> DmlError {
    let mut count = [SENTINEL];
    let mut coords = vec![SENTINEL; coords_len];
    let err =
        nonzero_coordinates(level, d, input, &mut count, &mut coords, &Sequential).unwrap_err();
    assert_eq!(count[0], SENTINEL, "count written despite {err}");
    assert!(
        coords.iter().all(|&c| c == SENTINEL),
        "coordinates written despite {err}"
    );
    err
}

#[test]
fn every_rule_has_its_own_error() {
    let x = [1.0f32; 8];
    let input = NumericSlice::new(&x);
    let ok = desc(
        TensorDesc::packed(DmlDataType::Float32, &[1, 1, 2, 4]),
        8,
        3,
    );

    let e = expect_error(FeatureLevel { major: 2, minor: 1 }, &ok, input, 24);
    assert_eq!(
        e,
        DmlError::FeatureLevelTooLow {
            level: FeatureLevel { major: 2, minor: 1 }
        }
    );

    // 3.0 accepts 4 to 5 dimensions only.
    let d2 = desc(TensorDesc::packed(DmlDataType::Float32, &[2, 4]), 8, 2);
    let e = expect_error(FeatureLevel::V3_0, &d2, input, 16);
    assert_eq!(
        e,
        DmlError::DimensionCount {
            tensor: TensorRole::Input,
            count: 2,
            min: 4,
            max: 5,
            level: FeatureLevel::V3_0
        }
    );
    // 4.0 accepts 1 to 8 for the input, 2 to 8 for the coordinates.
    let d9 = desc(
        TensorDesc::packed(DmlDataType::Float32, &[1, 1, 1, 1, 1, 1, 1, 2, 4]),
        8,
        2,
    );
    assert!(matches!(
        expect_error(FeatureLevel::V4_0, &d9, input, 16),
        DmlError::DimensionCount {
            count: 9,
            max: 8,
            ..
        }
    ));
    let mut d1 = desc(TensorDesc::packed(DmlDataType::Float32, &[8, 1]), 8, 1);
    d1.input.sizes = vec![8];
    d1.output_count.sizes = vec![1];
    assert!(matches!(
        expect_error(FeatureLevel::V4_0, &d1, input, 8),
        DmlError::DimensionCountsDiffer {
            input: 1,
            count: 1,
            coordinates: 2
        }
    ));

    let mut mixed = ok.clone();
    mixed.output_count.sizes = vec![1, 1, 1, 1, 1];
    assert!(matches!(
        expect_error(FeatureLevel::V4_0, &mixed, input, 24),
        DmlError::DimensionCountsDiffer { .. }
    ));

    let mut f64_in = ok.clone();
    f64_in.input.data_type = DmlDataType::Float64;
    assert_eq!(
        expect_error(FeatureLevel::V4_0, &f64_in, input, 24),
        DmlError::InputDataType {
            data_type: DmlDataType::Float64
        }
    );

    let mut i32_count = ok.clone();
    i32_count.output_count.data_type = DmlDataType::Int32;
    assert_eq!(
        expect_error(FeatureLevel::V4_0, &i32_count, input, 24),
        DmlError::OutputDataType {
            tensor: TensorRole::OutputCount,
            data_type: DmlDataType::Int32
        }
    );

    let mut big_count = ok.clone();
    big_count.output_count.sizes = vec![1, 1, 1, 2];
    assert!(matches!(
        expect_error(FeatureLevel::V4_0, &big_count, input, 24),
        DmlError::CountNotScalar { .. }
    ));

    let mut lead = ok.clone();
    lead.output_coordinates.sizes = vec![1, 2, 8, 3];
    assert!(matches!(
        expect_error(FeatureLevel::V4_0, &lead, input, 48),
        DmlError::CoordinatesLeadingSize { .. }
    ));

    let rows = desc(
        TensorDesc::packed(DmlDataType::Float32, &[1, 1, 2, 4]),
        7,
        3,
    );
    assert_eq!(
        expect_error(FeatureLevel::V4_0, &rows, input, 21),
        DmlError::CoordinatesRows {
            m: 7,
            input_elements: 8
        }
    );

    let narrow = desc(
        TensorDesc::packed(DmlDataType::Float32, &[1, 1, 2, 4]),
        8,
        1,
    );
    assert_eq!(
        expect_error(FeatureLevel::V4_0, &narrow, input, 8),
        DmlError::CoordinatesColumns {
            n: 1,
            effective_rank: 2,
            dimension_count: 4
        }
    );
    let wide = desc(
        TensorDesc::packed(DmlDataType::Float32, &[1, 1, 2, 4]),
        8,
        5,
    );
    assert!(matches!(
        expect_error(FeatureLevel::V4_0, &wide, input, 40),
        DmlError::CoordinatesColumns { n: 5, .. }
    ));

    let mut strides = ok.clone();
    strides.input.strides = Some(vec![8, 4, 1]);
    assert!(matches!(
        expect_error(FeatureLevel::V4_0, &strides, input, 24),
        DmlError::StridesLength { strides: 3, .. }
    ));
    let mut out_strides = ok.clone();
    out_strides.output_coordinates.strides = Some(vec![24, 24, 1, 8]);
    assert!(matches!(
        expect_error(FeatureLevel::V4_0, &out_strides, input, 24),
        DmlError::OutputStridesNotPacked { .. }
    ));

    assert_eq!(
        expect_error(FeatureLevel::V4_0, &ok, NumericSlice::new(&x[..7]), 24),
        DmlError::BufferTooSmall {
            tensor: TensorRole::Input,
            needed: 8,
            actual: 7
        }
    );
    assert_eq!(
        expect_error(FeatureLevel::V4_0, &ok, input, 23),
        DmlError::BufferTooSmall {
            tensor: TensorRole::OutputCoordinates,
            needed: 24,
            actual: 23
        }
    );
    assert!(matches!(
        expect_error(FeatureLevel::V4_0, &ok, NumericSlice::new(&[1; 8]), 24),
        DmlError::InputBufferType {
            described: DmlDataType::Float32,
            buffer: "int32"
        }
    ));

    let huge = desc(
        TensorDesc::packed(DmlDataType::Uint8, &[1, 1, 65536, 65536]),
        0,
        2,
    );
    assert_eq!(
        expect_error(FeatureLevel::V4_0, &huge, NumericSlice::new::<u8>(&[]), 0),
        DmlError::TooManyElements {
            input_elements: 1 << 32
        }
    );
}

#[test]
fn errors_name_the_rule() {
    let e = DmlError::DimensionCountsDiffer {
        input: 4,
        count: 5,
        coordinates: 4,
    };
    assert!(e.to_string().contains("must have the same DimensionCount"));
    let e = DmlError::CoordinatesColumns {
        n: 1,
        effective_rank: 2,
        dimension_count: 4,
    };
    assert!(e.to_string().contains("effective rank"));
}
