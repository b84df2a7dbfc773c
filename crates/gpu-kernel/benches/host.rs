//! Where the host path's time goes: `nonzero_bytes` (what ONNX Runtime's GPU option runs) split
//! into its phases, and the transfers done with buffers kept from call to call instead.
//!
//! `cargo bench -p nonzero-gpu --bench host` prints, per input, the median milliseconds of:
//! - `total`: `nonzero_bytes`, end to end (the kept buffers, a new result vector);
//! - `into`: `nonzero_bytes_into` a result vector kept from call to call (as ONNX Runtime's
//!   arena hands its output back);
//! - `upload`: `upload` (a new buffer written at creation) until the device has it;
//! - `kernel`: `onnx_device` (count, read-back of the count, scatter) until done;
//! - `read`: `read_buffer` of the `[rank, nnz]` result (a new staging buffer, copy, map, copy
//!   out), then `convert` to `Vec<i64>` (the host path before kept buffers);
//! - `write_kept`: `queue.write_buffer` into a buffer kept from call to call;
//! - `read_kept`: the result copied into a staging buffer kept from call to call, mapped, and
//!   copied once into an `i64` vector.
//!
//! Inputs: `NONZERO_GPU_HOST_SIDE` (default 8192) squared, bool at densities 0.5 and 0.01.

use nonzero_core::DataType;
use std::time::Instant;

const ITERS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn wait(ctx: &nonzero_gpu::GpuNonZero) {
    ctx.queue().submit([]);
    ctx.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn map_read(ctx: &nonzero_gpu::GpuNonZero, staging: &wgpu::Buffer, out: &mut [u8]) {
    let slice = staging.slice(..out.len() as u64);
    slice.map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    ctx.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("poll");
    out.copy_from_slice(&slice.get_mapped_range().expect("mapped"));
    staging.unmap();
}

fn main() {
    let side: usize = std::env::var("NONZERO_GPU_HOST_SIDE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8192);
    let ctx = match nonzero_gpu::GpuNonZero::request(Default::default()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("no GPU: {e}");
            std::process::exit(1);
        }
    };
    ctx.warm_up();
    let shape = [side, side];
    let n = side * side;
    println!("bool {side}x{side}, median of {ITERS} (ms)");
    println!(
        "{:>8} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>10} {:>9}",
        "density",
        "nnz",
        "total",
        "into",
        "upload",
        "kernel",
        "read",
        "convert",
        "write_kept",
        "read_kept"
    );
    for density in [0.5f64, 0.01] {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let data: Vec<u8> = (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                u8::from(((state >> 11) as f64 / (1u64 << 53) as f64) < density)
            })
            .collect();
        let expected = ctx
            .nonzero_bytes(DataType::Bool, &data, &shape)
            .expect("nonzero");
        let result_bytes = (expected.rank * expected.nnz * 8) as u64;
        let kept_input = ctx.upload(DataType::Bool, &data).expect("upload");
        let kept_staging = ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("kept staging"),
            size: result_bytes.max(8),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut kept_result = vec![0i64; expected.rank * expected.nnz];
        let mut t: [Vec<f64>; 8] = Default::default();
        for _ in 0..=ITERS {
            let start = Instant::now();
            let got = ctx
                .nonzero_bytes(DataType::Bool, &data, &shape)
                .expect("nonzero");
            t[0].push(ms(start));
            assert_eq!(got, expected);

            let start = Instant::now();
            let input = ctx.upload(DataType::Bool, &data).expect("upload");
            wait(&ctx);
            t[1].push(ms(start));
            let start = Instant::now();
            let out = ctx
                .onnx_device(&input, DataType::Bool, &shape)
                .expect("kernel");
            wait(&ctx);
            t[2].push(ms(start));
            let start = Instant::now();
            let bytes = ctx.read_buffer(&out.buffer, result_bytes).expect("read");
            t[3].push(ms(start));
            let start = Instant::now();
            let converted: Vec<i64> = bytes
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
                .collect();
            t[4].push(ms(start));
            assert_eq!(converted, expected.data);

            let start = Instant::now();
            ctx.queue().write_buffer(&kept_input, 0, &data[..n / 4 * 4]);
            wait(&ctx);
            t[5].push(ms(start));
            let start = Instant::now();
            if result_bytes > 0 {
                let mut enc = ctx.device().create_command_encoder(&Default::default());
                enc.copy_buffer_to_buffer(&out.buffer, 0, &kept_staging, 0, result_bytes);
                ctx.queue().submit([enc.finish()]);
                map_read(
                    &ctx,
                    &kept_staging,
                    bytemuck::cast_slice_mut(&mut kept_result),
                );
            }
            t[6].push(ms(start));
            assert_eq!(kept_result, expected.data);

            let start = Instant::now();
            ctx.nonzero_bytes_into(DataType::Bool, &data, &shape, |_| {
                Ok::<_, nonzero_gpu::GpuError>(&mut kept_result[..])
            })
            .expect("into");
            t[7].push(ms(start));
            assert_eq!(kept_result, expected.data);
        }
        let m: Vec<f64> = t.into_iter().map(|v| median(v[1..].to_vec())).collect();
        println!(
            "{density:>8} {:>10} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>10.2} {:>9.2}",
            expected.nnz, m[0], m[7], m[1], m[2], m[3], m[4], m[5], m[6]
        );
    }
}
