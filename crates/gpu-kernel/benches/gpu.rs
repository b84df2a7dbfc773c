//! GPU NonZero throughput against a buffer-to-buffer copy of the same bytes.
//!
//! `cargo bench -p nonzero-gpu --bench gpu` times the DirectML-form kernel (N = 1) on
//! device-resident 1-byte data with 50% non-zeros, and a copy of the input buffer, and prints
//! kernel GB/s, copy GB/s and their ratio. Timestamp queries are used when the adapter has
//! TIMESTAMP_QUERY and TIMESTAMP_QUERY_INSIDE_ENCODERS; otherwise wall-clock around
//! submit + `device.poll(wait)`.
//!
//! Sizes: `NONZERO_GPU_BENCH_SIZES` (comma-separated element counts, `K`/`M` suffixes allowed)
//! or the first non-flag argument; default `16M,256M`. For a lavapipe smoke run:
//! `NONZERO_GPU_BENCH_SIZES=1M cargo bench -p nonzero-gpu --bench gpu`.

use nonzero_core::DataType;
use nonzero_gpu::{request_device, GpuConfig, GpuNonZero};
use std::time::Instant;

const ITERS: usize = 5;

fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>().ok().map(|n| n * mul)
}

struct Timer {
    query: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer, f64)>,
}

impl Timer {
    fn new(ctx: &GpuNonZero) -> Timer {
        let features = ctx.device().features();
        let wanted =
            wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        if !features.contains(wanted) {
            return Timer { query: None };
        }
        let set = ctx.device().create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("bench"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench resolve"),
            size: 16,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: Some("bench staging"),
            size: 16,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let period = f64::from(ctx.queue().get_timestamp_period());
        Timer {
            query: Some((set, resolve, staging, period)),
        }
    }

    fn kind(&self) -> &'static str {
        if self.query.is_some() {
            "timestamp queries"
        } else {
            "wall clock (submit + poll)"
        }
    }

    /// Seconds that `record` takes on the device.
    fn time(&self, ctx: &GpuNonZero, record: impl FnOnce(&mut wgpu::CommandEncoder)) -> f64 {
        let mut enc = ctx.device().create_command_encoder(&Default::default());
        match &self.query {
            Some((set, resolve, staging, period)) => {
                enc.write_timestamp(set, 0);
                record(&mut enc);
                enc.write_timestamp(set, 1);
                enc.resolve_query_set(set, 0..2, resolve, 0);
                enc.copy_buffer_to_buffer(resolve, 0, staging, 0, 16);
                ctx.queue().submit([enc.finish()]);
                staging
                    .slice(..)
                    .map_async(wgpu::MapMode::Read, |r| r.expect("map"));
                ctx.device()
                    .poll(wgpu::PollType::wait_indefinitely())
                    .expect("poll");
                let ticks: Vec<u64> = {
                    let view = staging.slice(..).get_mapped_range().expect("mapped");
                    bytemuck::pod_collect_to_vec(&view)
                };
                staging.unmap();
                ticks[1].wrapping_sub(ticks[0]) as f64 * period * 1e-9
            }
            None => {
                record(&mut enc);
                let start = Instant::now();
                ctx.queue().submit([enc.finish()]);
                ctx.device()
                    .poll(wgpu::PollType::wait_indefinitely())
                    .expect("poll");
                start.elapsed().as_secs_f64()
            }
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let arg = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let spec = std::env::var("NONZERO_GPU_BENCH_SIZES")
        .ok()
        .or(arg)
        .unwrap_or_else(|| "16M,256M".into());
    let sizes: Vec<usize> = spec.split(',').filter_map(parse_size).collect();
    let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
    let (adapter, device, queue) = match request_device(wanted) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("no GPU: {e}");
            std::process::exit(1);
        }
    };
    let info = adapter.get_info();
    println!(
        "adapter: {} ({:?}, {:?})",
        info.name, info.device_type, info.backend
    );
    let ctx = GpuNonZero::new(device, queue, GpuConfig::default()).expect("context");
    ctx.warm_up();
    let timer = Timer::new(&ctx);
    println!("timing: {}, median of {ITERS}", timer.kind());
    println!(
        "{:>12} {:>12} {:>12} {:>12} {:>8}",
        "elements", "kernel ms", "kernel GB/s", "copy GB/s", "ratio"
    );
    for n in sizes {
        // 50% non-zeros, scattered (a cheap LCG so the pattern is not periodic).
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let data: Vec<u8> = (0..n)
            .map(|_| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((state >> 63) as u8) * (1 + (state >> 33) as u8 % 255)
            })
            .collect();
        let input = match ctx.upload(DataType::Uint8, &data) {
            Ok(b) => b,
            Err(e) => {
                println!("{n:>12} skipped: {e}");
                continue;
            }
        };
        drop(data);
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let buf = |size: u64| {
            ctx.device().create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        let count = buf(4);
        let coords = buf((n as u64 * 4).max(4));
        let copy_dst = buf(input.size());
        let shape = [n];
        let mut failed = None;
        let kernel: Vec<f64> = (0..=ITERS)
            .map(|_| {
                timer.time(&ctx, |enc| {
                    if let Err(e) =
                        ctx.encode_dml(enc, &input, DataType::Uint8, &shape, 1, &count, &coords)
                    {
                        failed = Some(e.to_string());
                    }
                })
            })
            .skip(1)
            .collect();
        if let Some(e) = failed {
            println!("{n:>12} skipped: {e}");
            continue;
        }
        let copy: Vec<f64> = (0..=ITERS)
            .map(|_| {
                timer.time(&ctx, |enc| {
                    enc.copy_buffer_to_buffer(&input, 0, &copy_dst, 0, input.size())
                })
            })
            .skip(1)
            .collect();
        let (tk, tc) = (median(kernel), median(copy));
        let bytes = n as f64;
        let (gk, gc) = (bytes / tk * 1e-9, bytes / tc * 1e-9);
        println!(
            "{n:>12} {:>12.3} {gk:>12.2} {gc:>12.2} {:>8.3}",
            tk * 1e3,
            gk / gc
        );
    }
}
