//! MaskedFill and MaskedScatter (`nonzero_core::write`) against their definitions, element by
//! element: every element width (the typed loops and the byte loop), every density, value shapes
//! that repeat (a scalar, a row) and one that is broadcast first (a column), sizes past the
//! parallel threshold (chunk boundaries), the sequential and rayon executors. Here rather than
//! in the crate's unit tests, which Miri runs: proptest needs the file system.

use nonzero_core::write::{check_fill_value, masked_fill_bytes, masked_scatter_bytes};
use nonzero_core::{Executor, Rayon, Sequential};
use proptest::prelude::*;

/// The definitions, element by element, on `elem`-byte elements.
fn naive_fill(x: &[u8], mask: &[bool], full_value: &[u8], elem: usize) -> Vec<u8> {
    let mut y = x.to_vec();
    for (i, &m) in mask.iter().enumerate() {
        if m {
            y[i * elem..(i + 1) * elem].copy_from_slice(&full_value[i * elem..(i + 1) * elem]);
        }
    }
    y
}

fn naive_scatter(x: &[u8], mask: &[bool], source: &[u8], elem: usize) -> Vec<u8> {
    let mut y = x.to_vec();
    let mut j = 0;
    for (i, &m) in mask.iter().enumerate() {
        if m {
            y[i * elem..(i + 1) * elem].copy_from_slice(&source[j * elem..(j + 1) * elem]);
            j += 1;
        }
    }
    y
}

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

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn mask_of(n: usize, every: usize) -> Vec<bool> {
    (0..n)
        .map(|i| every > 0 && (i * 7 + i / 3) % every == 0)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Every width (the typed loops and the byte loop), every density, chunk boundaries of the
    /// parallel path (sizes past the parallel threshold), against the definitions.
    #[test]
    fn fill_and_scatter_match_their_definitions(
        elem in prop::sample::select(vec![1usize, 2, 3, 4, 8, 12, 16]),
        rows in 1usize..40,
        cols in prop::sample::select(vec![1usize, 3, 64, 5000]),
        every in 0usize..6,
        value_kind in 0usize..3,
    ) {
        let x_shape = [rows, cols];
        let n = rows * cols;
        let x = bytes(n * elem, 1);
        let mask = mask_of(n, every);
        let value_shape: Vec<usize> = match value_kind { 0 => vec![], 1 => vec![cols], _ => vec![rows, 1] };
        let value = bytes(value_shape.iter().product::<usize>() * elem, 101);
        let pattern = check_fill_value(&x_shape, &value_shape).unwrap();
        let p = pattern.expand(&value, elem);
        let full = broadcast(&value, &value_shape, &x_shape, elem);
        for exec in [&Sequential as &dyn Executor, &Rayon] {
            let mut y = vec![0u8; n * elem];
            masked_fill_bytes(&x, &mask, &p, elem, &mut y, exec).unwrap();
            prop_assert_eq!(&y, &naive_fill(&x, &mask, &full, elem));
            let selected = mask.iter().filter(|&&m| m).count();
            let source = bytes((selected + every) * elem, 201);
            let mut y = vec![0u8; n * elem];
            masked_scatter_bytes(&x, &mask, &source, elem, &mut y, exec).unwrap();
            prop_assert_eq!(&y, &naive_scatter(&x, &mask, &source, elem));
        }
    }
}
