//! op-core alone (no ONNX Runtime) against the bandwidth floor, measured in the same run: a copy
//! of the input into a preallocated buffer plus one write of the output's bytes.
//!
//! `cargo bench -p nonzero-benches --bench op_core`; criterion prints each case's time, compare
//! `nonzero/...` with `floor/...` of the same case.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nonzero_benches::mask;
use nonzero_core::{Counted, Layout, Rayon, Sequential};
use rayon::prelude::*;
use std::hint::black_box;

fn floor(input: &[u8], copy: &mut [u8], output: &mut [i64]) {
    copy.par_chunks_mut(1 << 20)
        .zip(input.par_chunks(1 << 20))
        .for_each(|(d, s)| d.copy_from_slice(s));
    output.par_chunks_mut(1 << 17).for_each(|o| o.fill(1));
}

fn bench_case<T: nonzero_core::Element + Copy>(
    c: &mut Criterion,
    name: &str,
    shape: &[usize],
    density: f64,
    one: T,
    zero: T,
) {
    let n: usize = shape.iter().product();
    let data: Vec<T> = mask(n, density)
        .into_iter()
        .map(|b| if b { one } else { zero })
        .collect();
    let layout = Layout::packed(shape).unwrap();
    let nnz = Counted::count(&data[..], &layout, &Rayon).unwrap().nnz();
    let mut out = vec![0i64; shape.len() * nnz];
    let bytes = std::mem::size_of_val(&data[..]);
    let mut copy = vec![0u8; bytes];
    let mut group = c.benchmark_group(name);
    group
        .sample_size(20)
        .throughput(Throughput::Bytes(bytes as u64));
    let id = format!("{:.0}%", density * 100.0);
    group.bench_function(BenchmarkId::new("nonzero", &id), |b| {
        b.iter(|| {
            let counted = Counted::count(&data[..], &layout, &Rayon).unwrap();
            counted.write_onnx(&data[..], &mut out, &Rayon).unwrap();
            black_box(counted.nnz())
        })
    });
    // The floor copies as many bytes as the input has; their values do not matter to a copy.
    let input_bytes = vec![1u8; bytes];
    group.bench_function(BenchmarkId::new("floor", &id), |b| {
        b.iter(|| floor(&input_bytes, &mut copy, &mut out))
    });
    group.finish();
}

/// The fixed cost of one call on the inputs real models feed NonZero (token and score masks):
/// the sequential path, which allocates nothing. `nonzero` has the layout built once, like the
/// cases above; `with_layout` builds it every call, as the ONNX Runtime adapter does.
fn small_cases(c: &mut Criterion) {
    let mut group = c.benchmark_group("f32_small_rank1");
    for n in [1usize, 13, 1 << 10, 1 << 16] {
        let data: Vec<f32> = mask(n, 0.5).into_iter().map(|b| b as u8 as f32).collect();
        let shape = [n];
        let layout = Layout::packed(&shape).unwrap();
        let nnz = Counted::count(&data[..], &layout, &Sequential)
            .unwrap()
            .nnz();
        let mut out = vec![0i64; nnz];
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("nonzero", n), |b| {
            b.iter(|| {
                let counted = Counted::count(black_box(&data[..]), &layout, &Sequential).unwrap();
                counted
                    .write_onnx(&data[..], &mut out, &Sequential)
                    .unwrap();
                black_box(counted.nnz())
            })
        });
        group.bench_function(BenchmarkId::new("with_layout", n), |b| {
            b.iter(|| {
                let layout = Layout::packed(black_box(&shape)).unwrap();
                let counted = Counted::count(black_box(&data[..]), &layout, &Sequential).unwrap();
                counted
                    .write_onnx(&data[..], &mut out, &Sequential)
                    .unwrap();
                black_box(counted.nnz())
            })
        });
        let mut copy = vec![0f32; n];
        group.bench_function(BenchmarkId::new("floor", n), |b| {
            b.iter(|| {
                copy.copy_from_slice(black_box(&data));
                out.fill(1);
                black_box(&mut out);
            })
        });
    }
    group.finish();
}

fn benches(c: &mut Criterion) {
    for density in [0.01, 0.1, 0.5, 0.99] {
        bench_case(c, "f32_16M_rank1", &[16 << 20], density, 1.0f32, 0.0);
    }
    bench_case(c, "f32_16M_rank2", &[4096, 4096], 0.5, 1.0f32, -0.0);
    bench_case(c, "u8_64M_rank2", &[8192, 8192], 0.5, 1u8, 0);
    bench_case(c, "i64_4M_rank3", &[64, 256, 256], 0.5, 7i64, 0);
    bench_case(c, "f32_64K_rank1", &[1 << 16], 0.5, 1.0f32, 0.0);
    bench_case(c, "f32_1K_rank1", &[1 << 10], 0.5, 1.0f32, 0.0);
}

criterion_group!(op_core, small_cases, benches);
criterion_main!(op_core);
