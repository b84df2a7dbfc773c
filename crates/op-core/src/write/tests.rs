use super::*;
use crate::Sequential;

#[test]
fn fill_writes_a_scalar_a_row_and_a_column_where_the_mask_is_set() {
    let x_shape = [3, 4];
    let mask = [
        true, false, false, true, false, false, false, false, true, true, true, true,
    ];
    let x: Vec<f32> = (0..12).map(|i| i as f32).collect();
    // Rows: [T F F T], [F F F F], [T T T T]; the written values, exactly.
    let written = |v: [f32; 3]| {
        vec![
            v[0], 1.0, 2.0, v[1], 4.0, 5.0, 6.0, 7.0, v[2], v[2], v[2], v[2],
        ]
    };
    let mut row = written([10.0, 13.0, 0.0]);
    row[8..].copy_from_slice(&[10.0, 11.0, 12.0, 13.0]);
    for (value_shape, value, expected) in [
        (vec![], vec![-1.0f32], written([-1.0; 3])),
        (vec![1, 1], vec![-1.0], written([-1.0; 3])),
        (vec![4], vec![10.0, 11.0, 12.0, 13.0], row),
        (
            vec![3, 1],
            vec![20.0, 21.0, 22.0],
            written([20.0, 20.0, 22.0]),
        ),
    ] {
        let pattern = check_fill_value(&x_shape, &value_shape).unwrap();
        let p = pattern.expand(bytemuck::cast_slice(&value), 4);
        let mut y = vec![0f32; 12];
        masked_fill_bytes(
            bytemuck::cast_slice(&x),
            &mask,
            &p,
            4,
            bytemuck::cast_slice_mut(&mut y),
            &Sequential,
        )
        .unwrap();
        assert_eq!(y, expected, "value shape {value_shape:?}");
    }
    // A column varies along a leading axis: it is broadcast to X's shape first.
    assert!(
        !check_fill_value(&x_shape, &[3, 1])
            .unwrap()
            .value_is_pattern
    );
    assert_eq!(check_fill_value(&x_shape, &[4]).unwrap().pattern_len, 4);
    assert_eq!(check_fill_value(&x_shape, &[1, 4]).unwrap().pattern_len, 4);
    assert_eq!(check_fill_value(&x_shape, &[3, 4]).unwrap().pattern_len, 12);
}

#[test]
fn fill_refuses_a_value_that_does_not_broadcast() {
    for bad in [vec![2], vec![3, 4, 1], vec![2, 4]] {
        let err = check_fill_value(&[3, 4], &bad).unwrap_err();
        assert_eq!(
            err,
            WriteError::ValueShape {
                value_shape: bad.clone(),
                x_shape: vec![3, 4]
            }
        );
        assert!(err
            .to_string()
            .contains("must broadcast to X's shape [3, 4]"));
    }
}

#[test]
fn the_mask_must_be_bool_and_of_x_shape() {
    let err = check_write_mask("MaskedFill", DataType::Uint8, &[2], &[2]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "MaskedFill's mask must be a bool tensor, not uint8"
    );
    let err = check_write_mask("MaskedScatter", DataType::Bool, &[2, 3], &[2]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "MaskedScatter's mask shape [2] must equal X's shape [2, 3]"
    );
    assert_eq!(
        check_write_mask("MaskedFill", DataType::Bool, &[2, 3], &[2, 3]),
        Ok(6)
    );
}

#[test]
fn scatter_refuses_a_short_source_and_reads_a_long_one_from_the_start() {
    let x = [0u8, 1, 2, 3];
    let mask = [true, false, true, true];
    let mut y = [9u8; 4];
    let err = masked_scatter_bytes(&x, &mask, &[7, 8], 1, &mut y, &Sequential).unwrap_err();
    assert_eq!(
        err,
        WriteError::SourceTooShort {
            selected: 3,
            available: 2
        }
    );
    assert_eq!(y, [9; 4], "nothing is written on an error");
    masked_scatter_bytes(&x, &mask, &[7, 8, 6, 5, 4], 1, &mut y, &Sequential).unwrap();
    assert_eq!(y, [7, 1, 8, 6]);
    // Nothing selected: an empty source is enough.
    masked_scatter_bytes(&x, &[false; 4], &[], 1, &mut y, &Sequential).unwrap();
    assert_eq!(y, x);
}

#[test]
fn wrong_buffer_lengths_are_refused() {
    let mut y = [0u8; 3];
    let err = masked_fill_bytes(&[0; 4], &[true; 2], &[1, 1], 2, &mut y, &Sequential).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Y must hold 4 bytes for its shape, it holds 3"
    );
}
