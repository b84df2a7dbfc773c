//! A deliberately naive NonZero: one element at a time, one division per dimension, no chunks.
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
