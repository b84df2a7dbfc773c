use super::*;
use crate::Sequential;

/// V broadcast to `x_shape` by index arithmetic, independent of [`FillPattern`].
fn broadcast(value: &[u8], value_shape: &[usize], x_shape: &[usize], elem: usize) -> Vec<u8> {
    let numel: usize = x_shape.iter().product();
    let offset = x_shape.len() - value_shape.len();
    let mut out = vec![];
    for flat in 0..numel {
        let mut rest = flat;
        let mut index = vec![0; x_shape.len()];
        for d in (0..x_shape.len()).rev() {
            index[d] = rest % x_shape[d];
            rest /= x_shape[d];
        }
        let mut at = 0;
        for (d, &size) in value_shape.iter().enumerate() {
            let i = if size == 1 { 0 } else { index[offset + d] };
            at = at * size + i;
        }
        out.extend_from_slice(&value[at * elem..(at + 1) * elem]);
    }
    out
}

#[test]
fn fill_writes_a_scalar_a_row_and_a_column_where_the_mask_is_set() {
    let x_shape = [3, 4];
    let mask = [
        true, false, false, true, false, false, false, false, true, true, true, true,
    ];
    let x: Vec<f32> = (0..12).map(|i| i as f32).collect();
    for (value_shape, value) in [
        (vec![], vec![-1.0f32]),
        (vec![1, 1], vec![-1.0]),
        (vec![4], vec![10.0, 11.0, 12.0, 13.0]),
        (vec![3, 1], vec![20.0, 21.0, 22.0]),
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
        // Bytes of a Vec<u8> need not be aligned for f32: copied, not cast.
        let full: Vec<f32> = broadcast(bytemuck::cast_slice(&value), &value_shape, &x_shape, 4)
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        let expected: Vec<f32> = (0..12)
            .map(|i| if mask[i] { full[i] } else { x[i] })
            .collect();
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
