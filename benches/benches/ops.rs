//! The `nonzero`-domain ops' kernels alone (no ONNX Runtime) against the bandwidth floor of the
//! same run: ArgWhere (with NonZero, whose transposed output it replaces), BooleanMask (floor:
//! read the mask, copy X, write Y) and NonZeroCoordinates (ONNX Runtime form).
//!
//! `cargo bench -p nonzero-benches --bench ops`; compare each case's kernel with its `floor`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nonzero_benches::mask;
use nonzero_core::dml::coordinates_for_onnx;
use nonzero_core::mask::MaskPlan;
use nonzero_core::{Counted, Layout, Rayon};
use rayon::prelude::*;
use std::hint::black_box;

const CHUNK: usize = 1 << 20;

/// Reads `input` once (into `copy`) and writes every byte of `output`.
fn floor(input: &[u8], copy: &mut [u8], output: &mut [u8]) {
    copy.par_chunks_mut(CHUNK)
        .zip(input.par_chunks(CHUNK))
        .for_each(|(d, s)| d.copy_from_slice(s));
    output.par_chunks_mut(CHUNK).for_each(|o| o.fill(1));
}

fn data(n: usize, density: f64) -> Vec<f32> {
    mask(n, density)
        .into_iter()
        .map(|b| if b { 1.0 } else { 0.0 })
        .collect()
}

fn argwhere(c: &mut Criterion, shape: &[usize], density: f64) {
    let n: usize = shape.iter().product();
    let x = data(n, density);
    let layout = Layout::packed(shape).unwrap();
    let nnz = Counted::count(&x[..], &layout, &Rayon).unwrap().nnz();
    let mut out = vec![0i64; shape.len() * nnz];
    let name = format!("argwhere_f32_{}", shape_name(shape));
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .throughput(Throughput::Bytes((n * 4) as u64));
    let id = format!("{:.0}%", density * 100.0);
    group.bench_function(BenchmarkId::new("argwhere", &id), |b| {
        b.iter(|| {
            let counted = Counted::count(&x[..], &layout, &Rayon).unwrap();
            counted.write_argwhere(&x[..], &mut out, &Rayon).unwrap();
            black_box(counted.nnz())
        })
    });
    group.bench_function(BenchmarkId::new("nonzero", &id), |b| {
        b.iter(|| {
            let counted = Counted::count(&x[..], &layout, &Rayon).unwrap();
            counted.write_onnx(&x[..], &mut out, &Rayon).unwrap();
            black_box(counted.nnz())
        })
    });
    let input = vec![1u8; n * 4];
    let mut copy = vec![0u8; n * 4];
    let mut out_bytes = vec![0u8; out.len() * 8];
    group.bench_function(BenchmarkId::new("floor", &id), |b| {
        b.iter(|| floor(&input, &mut copy, &mut out_bytes))
    });
    group.finish();
}

/// BooleanMask of f32 X with `slice` elements per mask entry.
fn boolean_mask(c: &mut Criterion, mask_len: usize, slice: usize, density: f64) {
    let m = mask(mask_len, density);
    let x: Vec<f32> = (0..mask_len * slice).map(|i| i as f32).collect();
    let nnz = MaskPlan::count(&m, &Rayon).nnz();
    let mut y = vec![0f32; nnz * slice];
    let name = format!("boolean_mask_f32_{mask_len}x{slice}");
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .throughput(Throughput::Bytes((x.len() * 4 + m.len()) as u64));
    let id = format!("{:.0}%", density * 100.0);
    group.bench_function(BenchmarkId::new("boolean_mask", &id), |b| {
        b.iter(|| {
            let plan = MaskPlan::count_for_slices(&m, slice, &Rayon);
            plan.gather(&x, slice, &mut y, &Rayon).unwrap();
            black_box(plan.nnz())
        })
    });
    // Floor: the mask's and X's bytes read once (copied), Y's bytes written once.
    let input = vec![1u8; x.len() * 4 + m.len()];
    let mut copy = vec![0u8; input.len()];
    let mut out = vec![0u8; y.len() * 4];
    group.bench_function(BenchmarkId::new("floor", &id), |b| {
        b.iter(|| floor(&input, &mut copy, &mut out))
    });
    group.finish();
}

fn coordinates(c: &mut Criterion, shape: &[usize], density: f64) {
    let n: usize = shape.iter().product();
    let x = data(n, density);
    let mut count = [0u32];
    let mut coords = vec![0u32; n * shape.len()];
    let name = format!("nonzero_coordinates_f32_{}", shape_name(shape));
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .throughput(Throughput::Bytes((n * 4) as u64));
    let id = format!("{:.0}%", density * 100.0);
    group.bench_function(BenchmarkId::new("nonzero_coordinates", &id), |b| {
        b.iter(|| {
            coordinates_for_onnx(&x[..], shape, shape.len(), &mut count, &mut coords, &Rayon)
                .unwrap()
        })
    });
    let input = vec![1u8; n * 4];
    let mut copy = vec![0u8; n * 4];
    let mut out = vec![0u8; coords.len() * 4];
    group.bench_function(BenchmarkId::new("floor", &id), |b| {
        b.iter(|| floor(&input, &mut copy, &mut out))
    });
    group.finish();
}

fn shape_name(shape: &[usize]) -> String {
    shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

fn benches(c: &mut Criterion) {
    argwhere(c, &[4096, 4096], 0.5);
    argwhere(c, &[1 << 16], 0.5);
    for density in [0.01, 0.5, 0.99] {
        boolean_mask(c, 16 << 20, 1, density);
    }
    // boxes[scores > t]: detection post-processing sizes.
    boolean_mask(c, 1 << 10, 4, 0.5);
    boolean_mask(c, 1 << 16, 4, 0.5);
    boolean_mask(c, 4096, 4096, 0.5);
    coordinates(c, &[4096, 4096], 0.5);
}

criterion_group!(ops, benches);
criterion_main!(ops);
