//! A deliberately naive NonZero (and ArgWhere, BooleanMask, ONNX Runtime's NonZeroCoordinates):
//! one element at a time, one division per dimension, no chunks.
//! It shares nothing with the kernel but the zero test, and is the oracle of tests, fuzzers and
//! the conformance pack.

use crate::layout::element_count;

/// `[rank, nnz]` row-major coordinates of the elements of a tensor with `sizes` for which
/// `is_nonzero(offset)` holds, where `offset = sum(coord[d] * strides[d])`.
pub fn nonzero_strided(
    sizes: &[usize],
    strides: &[usize],
    is_nonzero: impl Fn(usize) -> bool,
) -> (usize, Vec<i64>) {
    assert_eq!(sizes.len(), strides.len(), "one stride per dimension");
    let numel = element_count(sizes).expect("element count fits usize");
    let mut found: Vec<Vec<usize>> = Vec::new();
    for flat in 0..numel {
        let mut coords = vec![0; sizes.len()];
        let mut rest = flat;
        for d in (0..sizes.len()).rev() {
            coords[d] = rest % sizes[d];
            rest /= sizes[d];
        }
        let offset: usize = coords.iter().zip(strides).map(|(c, s)| c * s).sum();
        if is_nonzero(offset) {
            found.push(coords);
        }
    }
    let nnz = found.len();
    let mut out = vec![0i64; sizes.len() * nnz];
    for (j, coords) in found.iter().enumerate() {
        for (d, &c) in coords.iter().enumerate() {
            out[d * nnz + j] = c as i64;
        }
    }
    (nnz, out)
}

/// `[rank, nnz]` coordinates of a packed row-major tensor: returns `(nnz, data)`.
pub fn nonzero_packed(sizes: &[usize], is_nonzero: impl Fn(usize) -> bool) -> (usize, Vec<i64>) {
    nonzero_strided(sizes, &crate::layout::row_major_strides(sizes), is_nonzero)
}

/// Coordinates of every element of `sizes` for which `is_nonzero(offset)` holds, in row-major
/// order, found one element at a time.
fn selected_coordinates(
    sizes: &[usize],
    strides: &[usize],
    is_nonzero: impl Fn(usize) -> bool,
) -> Vec<Vec<usize>> {
    let numel = element_count(sizes).expect("element count fits usize");
    let mut found = Vec::new();
    for flat in 0..numel {
        let mut coords = vec![0; sizes.len()];
        let mut rest = flat;
        for d in (0..sizes.len()).rev() {
            coords[d] = rest % sizes[d];
            rest /= sizes[d];
        }
        let offset: usize = coords.iter().zip(strides).map(|(c, s)| c * s).sum();
        if is_nonzero(offset) {
            found.push(coords);
        }
    }
    found
}

/// ArgWhere: `[nnz, rank]` row-major coordinates (one row per non-zero element) of a strided
/// view; returns `(nnz, data)`.
pub fn argwhere_strided(
    sizes: &[usize],
    strides: &[usize],
    is_nonzero: impl Fn(usize) -> bool,
) -> (usize, Vec<i64>) {
    assert_eq!(sizes.len(), strides.len(), "one stride per dimension");
    let found = selected_coordinates(sizes, strides, is_nonzero);
    let data = found.iter().flatten().map(|&c| c as i64).collect();
    (found.len(), data)
}

/// BooleanMask (`tf.boolean_mask`, `x[mask]`): the elements of every slice `x[i0, .., ik-1, ...]`
/// whose mask entry is true, in row-major order of the mask. Returns Y's shape and elements.
/// Panics unless the mask's shape is the leading part of X's shape.
pub fn boolean_mask<T: Clone>(
    x: &[T],
    x_shape: &[usize],
    mask: &[bool],
    mask_shape: &[usize],
) -> (Vec<usize>, Vec<T>) {
    assert!(
        mask_shape.len() <= x_shape.len() && x_shape[..mask_shape.len()] == *mask_shape,
        "mask shape {mask_shape:?} is not a prefix of {x_shape:?}"
    );
    let slice_shape = &x_shape[mask_shape.len()..];
    let slice_len = element_count(slice_shape).expect("slice size fits usize");
    let strides = crate::layout::row_major_strides(mask_shape);
    let selected = selected_coordinates(mask_shape, &strides, |i| mask[i]);
    let mut y = Vec::new();
    for coords in &selected {
        let slice: usize = coords.iter().zip(&strides).map(|(c, s)| c * s).sum();
        y.extend_from_slice(&x[slice * slice_len..(slice + 1) * slice_len]);
    }
    let mut shape = vec![selected.len()];
    shape.extend_from_slice(slice_shape);
    (shape, y)
}

/// NonZeroCoordinates as the ONNX Runtime op defines it: the count, and an `[numel, columns]`
/// matrix whose first `count` rows hold the last `columns` coordinates of each non-zero element
/// of a packed tensor and whose other rows are 0.
pub fn nonzero_coordinates_zero_filled(
    sizes: &[usize],
    columns: usize,
    is_nonzero: impl Fn(usize) -> bool,
) -> (u32, Vec<u32>) {
    let strides = crate::layout::row_major_strides(sizes);
    let numel = element_count(sizes).expect("element count fits usize");
    let found = selected_coordinates(sizes, &strides, is_nonzero);
    let mut out = vec![0u32; numel * columns];
    for (row, coords) in found.iter().enumerate() {
        for (c, &v) in coords[sizes.len() - columns..].iter().enumerate() {
            out[row * columns + c] = v as u32;
        }
    }
    (found.len() as u32, out)
}
