//! Cross-checks of the GPU kernel against nonzero_core on a real adapter (lavapipe in CI).
//!
//! Without an adapter these tests fail, unless `NONZERO_GPU_ALLOW_SKIP=1` is set outside CI
//! (`CI=true` always fails): they never pass silently.

mod support;

use nonzero_core::{bf16, f16, Complex32, Complex64, DataType, OnnxCoordinates};
use nonzero_gpu::{GpuConfig, GpuError, GpuNonZero};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use support::*;
#[test]
fn directml_doc_example() {
    for ctx in contexts() {
        let x: [f32; 8] = [1.0, 0.0, 0.0, 2.0, -0.0, 3.5, 0.0, -5.2];
        let y = ctx.nonzero_coordinates(&x, &[1, 1, 2, 4], 3).unwrap();
        assert_eq!(y.count, 4);
        assert_eq!(y.coords, vec![0, 0, 0, 0, 0, 3, 0, 1, 1, 0, 1, 3]);
        let y = ctx.nonzero(&x, &[1, 1, 2, 4]).unwrap();
        assert_eq!(y.shape(), [4, 4]);
        assert_eq!(y.data, vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 3, 1, 3]);
    }
}

#[test]
fn onnx_examples_scalar_and_empty() {
    for ctx in contexts() {
        let y = ctx.nonzero(&[true, false, true, true], &[2, 2]).unwrap();
        assert_eq!((y.shape(), y.data), ([2, 3], vec![0, 1, 1, 0, 0, 1]));
        assert_eq!(
            ctx.nonzero(&[5i32], &[]).unwrap(),
            OnnxCoordinates {
                rank: 0,
                nnz: 1,
                data: vec![]
            }
        );
        assert_eq!(
            ctx.nonzero(&[0.0f64], &[]).unwrap(),
            OnnxCoordinates {
                rank: 0,
                nnz: 0,
                data: vec![]
            }
        );
        assert_eq!(ctx.nonzero(&[-0.0f32], &[]).unwrap().nnz, 0);
        assert_eq!(
            ctx.nonzero::<f32>(&[], &[3, 0, 2]).unwrap(),
            OnnxCoordinates {
                rank: 3,
                nnz: 0,
                data: vec![]
            }
        );
        let d = ctx.nonzero_coordinates::<u8>(&[], &[3, 0, 2], 3).unwrap();
        assert_eq!((d.count, d.coords.len()), (0, 0));
        let d = ctx.nonzero_coordinates(&[7u16], &[], 0).unwrap();
        assert_eq!((d.count, d.coords.len()), (1, 0));
    }
}

#[test]
fn special_bit_patterns() {
    for sub in PATHS {
        if let Some(ctx) = tiny(sub) {
            special_bit_patterns_on(ctx);
        }
    }
}

fn special_bit_patterns_on(ctx: &GpuNonZero) {
    let h = |b: u16| f16::from_bits(b);
    let x = [h(0x8000), h(0x0001), h(0), h(0x7E00), h(0xFC00), h(0x8001)];
    assert_eq!(ctx.nonzero(&x, &[6]).unwrap().data, vec![1, 3, 4, 5]);
    let b = |v: u16| bf16::from_bits(v);
    let x = [b(0x8000), b(0x0001), b(0), b(0x7FC0)];
    assert_eq!(ctx.nonzero(&x, &[4]).unwrap().data, vec![1, 3]);
    let x = [
        0.0f32,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(1),
        -f32::from_bits(1),
    ];
    assert_eq!(ctx.nonzero(&x, &[7]).unwrap().data, vec![2, 3, 4, 5, 6]);
    let x = [
        -0.0f64,
        f64::from_bits(1),
        0.0,
        f64::NAN,
        f64::from_bits(1 << 32),
        -0.0,
    ];
    assert_eq!(ctx.nonzero(&x, &[6]).unwrap().data, vec![1, 3, 4]);
    let x = [
        Complex32::new(0.0, -0.0),
        Complex32::new(-0.0, 1e-45),
        Complex32::new(f32::NAN, 0.0),
    ];
    assert_eq!(ctx.nonzero(&x, &[3]).unwrap().data, vec![1, 2]);
    let x = [
        Complex64::new(-0.0, -0.0),
        Complex64::new(0.0, f64::from_bits(1)),
        Complex64::new(0.0, 0.0),
    ];
    assert_eq!(ctx.nonzero(&x, &[3]).unwrap().data, vec![1]);
    let x = [0i16, i16::MIN, 0, 1];
    assert_eq!(ctx.nonzero(&x, &[4]).unwrap().data, vec![1, 3]);
    let x = [0u64, 1 << 32, 1 << 63, 0];
    assert_eq!(ctx.nonzero(&x, &[4]).unwrap().data, vec![1, 2]);
}

#[test]
fn random_shapes_every_type() {
    let paths: Vec<_> = PATHS.into_iter().map(contexts_of).collect();
    let mut rng = StdRng::seed_from_u64(0x5EED_0001);
    for (ti, &t) in TYPES.iter().enumerate() {
        for case in 0..12 {
            let rank = case % 9;
            let shape: Vec<usize> = (0..rank)
                .map(|_| {
                    if rng.random_bool(0.05) {
                        0
                    } else {
                        rng.random_range(1..=if rank > 5 { 3 } else { 7 })
                    }
                })
                .collect();
            let n: usize = shape.iter().product();
            let density = [0.0, 0.01, 0.5, 1.0][case % 4];
            let bytes = gen_bytes(t, n, density, &mut rng);
            for ctxs in &paths {
                if !ctxs.is_empty() {
                    check(
                        ctxs[(ti + case) % ctxs.len()],
                        t,
                        &bytes,
                        &shape,
                        "random shape",
                    );
                }
            }
        }
    }
}

#[test]
fn tile_and_chunk_boundaries() {
    for sub in PATHS {
        let (Some(t_ctx), Some(m_ctx)) = (tiny(sub), mid(sub)) else {
            return;
        };
        boundaries_on(t_ctx, m_ctx);
    }
}

fn boundaries_on(t_ctx: &GpuNonZero, m_ctx: &GpuNonZero) {
    let mut rng = StdRng::seed_from_u64(0x5EED_0002);
    // tiny: 16-element tiles; chunks of 16..256 elements by type; 3 workgroups per row.
    // mid: 256-element tiles, chunks of <= 1000 elements.
    let sizes = [
        1usize, 15, 16, 17, 63, 64, 65, 255, 256, 257, 511, 999, 1000, 1001, 1024, 4097,
    ];
    for (i, &t) in TYPES.iter().enumerate() {
        for (k, &n) in sizes.iter().enumerate() {
            let density = [0.0, 0.01, 0.5, 1.0][(i + k) % 4];
            let bytes = gen_bytes(t, n, density, &mut rng);
            let ctx = if k % 2 == 0 { t_ctx } else { m_ctx };
            check(ctx, t, &bytes, &[n], "1-D boundary");
            if n % 16 == 1 {
                check(ctx, t, &bytes, &[1, n, 1], "unit dims");
            }
        }
    }
}

#[test]
fn large_inputs_all_densities() {
    for sub in PATHS {
        let (Some(b_ctx), Some(m_ctx)) = (big(sub), mid(sub)) else {
            return;
        };
        large_on(b_ctx, m_ctx);
    }
}

fn large_on(b_ctx: &GpuNonZero, m_ctx: &GpuNonZero) {
    let mut rng = StdRng::seed_from_u64(0x5EED_0003);
    for (k, density) in [0.0, 0.01, 0.5, 1.0].into_iter().enumerate() {
        let t = [
            DataType::Uint8,
            DataType::Float16,
            DataType::Float32,
            DataType::Float64,
        ][k];
        let n = 4 * (75_000 + 333 * k);
        let bytes = gen_bytes(t, n, density, &mut rng);
        check(b_ctx, t, &bytes, &[n / 4, 4], "large");
        check(m_ctx, t, &bytes, &[n], "large, chunked");
    }
}

#[test]
fn errors_are_values() {
    let Some(ctx) = big(true) else { return };
    assert!(matches!(
        ctx.nonzero_bytes(DataType::String, &[], &[0]),
        Err(GpuError::UnsupportedType(DataType::String))
    ));
    assert!(matches!(
        ctx.nonzero(&[1u8; 3], &[2, 2]),
        Err(GpuError::ShapeMismatch {
            expected: 4,
            actual: 3
        })
    ));
    assert!(matches!(
        ctx.nonzero_bytes(DataType::Float32, &[0; 6], &[2]),
        Err(GpuError::ByteLength { .. })
    ));
    assert!(matches!(
        ctx.nonzero_coordinates(&[1u8; 4], &[2, 2], 1),
        Err(GpuError::Columns { .. })
    ));
    assert!(matches!(
        ctx.nonzero_coordinates(&[1u8; 4], &[2, 2], 3),
        Err(GpuError::Columns { .. })
    ));
    assert!(matches!(
        ctx.nonzero(&[1u8; 1], &[1; 17]),
        Err(GpuError::TooLarge { what: "rank", .. })
    ));
    assert!(matches!(
        ctx.nonzero::<u8>(&[], &[1 << 20, 1 << 20, 0]),
        Ok(OnnxCoordinates {
            rank: 3,
            nnz: 0,
            ..
        })
    ));
    assert!(matches!(
        ctx.nonzero::<u8>(&[], &[1 << 20, 1 << 20]),
        Err(GpuError::TooLarge { .. })
    ));
    assert!(matches!(
        ctx.nonzero::<u8>(&[], &[usize::MAX, 2]),
        Err(GpuError::ShapeOverflow { .. })
    ));
    // Device entry points check their buffers.
    let small = ctx.upload(DataType::Float32, &[0; 8]).unwrap();
    assert!(matches!(
        ctx.onnx_device(&small, DataType::Float32, &[3]),
        Err(GpuError::BufferTooSmall { .. })
    ));
    let bad = GpuNonZero::new(
        ctx.device().clone(),
        ctx.queue().clone(),
        GpuConfig {
            workgroup_size: 100,
            ..GpuConfig::default()
        },
    );
    assert!(matches!(bad, Err(GpuError::InvalidConfig(_))));
}

#[test]
fn device_resident_forms() {
    for sub in PATHS {
        if let Some(ctx) = mid(sub) {
            device_resident_on(ctx);
        }
    }
}

fn device_resident_on(ctx: &GpuNonZero) {
    let mut rng = StdRng::seed_from_u64(0x5EED_0004);
    let shape = [1usize, 5, 70];
    let n: usize = shape.iter().product();
    let bytes = gen_bytes(DataType::Int32, n, 0.5, &mut rng);
    let want = oracle(DataType::Int32, &bytes, &shape);
    let input = ctx.upload(DataType::Int32, &bytes).unwrap();
    // ONNX into a caller-sized [rank, numel] buffer, no read-back inside.
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
    let buf = |size| {
        ctx.device().create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage,
            mapped_at_creation: false,
        })
    };
    let (count, out) = (buf(4), buf((3 * n * 8) as u64));
    ctx.onnx_device_into(&input, DataType::Int32, &shape, &count, &out)
        .unwrap();
    let c = ctx.read_buffer(&count, 4).unwrap();
    let nnz = u32::from_le_bytes(c[..4].try_into().unwrap()) as usize;
    assert_eq!(nnz, want.nnz);
    let all = ctx.read_buffer(&out, (3 * n * 8) as u64).unwrap();
    let words: Vec<i64> = all
        .chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    for d in 0..3 {
        assert_eq!(
            &words[d * n..d * n + nnz],
            &want.data[d * nnz..(d + 1) * nnz]
        );
    }
    // ONNX with the exact buffer.
    let y = ctx.onnx_device(&input, DataType::Int32, &shape).unwrap();
    assert_eq!((y.rank, y.nnz), (3, want.nnz));
    // DML into caller buffers, then reused across calls.
    let (count, coords) = (buf(4), buf((n * 2 * 4) as u64));
    for _ in 0..2 {
        ctx.dml_device(&input, DataType::Int32, &shape, 2, &count, &coords)
            .unwrap();
        let c = ctx.read_buffer(&count, 4).unwrap();
        assert_eq!(
            u32::from_le_bytes(c[..4].try_into().unwrap()) as usize,
            want.nnz
        );
        let rows = ctx.read_buffer(&coords, (want.nnz * 8) as u64).unwrap();
        let rows: Vec<u32> = rows
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(rows, dml_from_onnx(&want, 2).coords);
    }
}

/// Which path each context runs: subgroups exactly when asked for and the device has
/// `Features::SUBGROUP` (which `GpuNonZero::request` asks for when the adapter has it).
#[test]
fn paths_follow_config_and_features() {
    for sub in PATHS {
        for ctx in contexts_of(sub) {
            let has = ctx.device().features().contains(wgpu::Features::SUBGROUP);
            assert_eq!(ctx.uses_subgroups(), sub && has, "{ctx:?}");
        }
    }
    let Some(ctx) = big(true) else { return };
    let (adapter, _, _) = nonzero_gpu::request_device(wgpu::Features::SUBGROUP).unwrap();
    let info = adapter.get_info();
    let has = adapter.features().contains(wgpu::Features::SUBGROUP);
    eprintln!(
        "adapter {:?} ({:?}, {:?}): SUBGROUP {has}, subgroup sizes {}..={}",
        info.name, info.backend, info.device_type, info.subgroup_min_size, info.subgroup_max_size
    );
    assert_eq!(ctx.uses_subgroups(), has);
    // CI runs lavapipe, which has subgroups: make sure the subgroup path is really tested there.
    if std::env::var("CI").is_ok_and(|v| v == "true") && info.name.contains("llvmpipe") {
        assert!(has, "lavapipe should report Features::SUBGROUP");
    }
}

/// The test contexts really take the chunked and 2-D dispatch paths (the planner's arithmetic is
/// unit-tested in src/plan_tests.rs; this ties it to the device's real limits).
#[test]
fn tiny_and_mid_contexts_chunk_and_dispatch_in_2d() {
    for sub in PATHS {
        let (Some(t_ctx), Some(m_ctx), Some(b_ctx)) = (tiny(sub), mid(sub), big(sub)) else {
            return;
        };
        let align = u64::from(t_ctx.device().limits().min_storage_buffer_offset_alignment).max(4);
        // tiny: 16-element tiles; a chunk is the smallest whole number of tiles whose bytes are
        // aligned, so 1000 bytes take 1000 / unit chunks, and 3 workgroups per row need rows.
        let unit = (1..).map(|k| 16 * k).find(|e| e % align == 0).unwrap();
        let c = t_ctx.chunking(DataType::Uint8, &[1000]).unwrap();
        assert_eq!(c.chunks as u64, 1000u64.div_ceil(unit));
        assert_eq!(c.tiles, 63);
        assert!(c.max_dispatch_rows > 1, "{c:?}");
        // mid: 256-element tiles, chunks of 3 tiles (768 elements), one row.
        let c = m_ctx.chunking(DataType::Float32, &[4097]).unwrap();
        assert_eq!((c.chunks, c.tiles, c.max_dispatch_rows), (6, 17, 1));
        // big: the large test inputs fit one binding.
        let c = b_ctx.chunking(DataType::Float64, &[300_000]).unwrap();
        assert_eq!((c.chunks, c.tiles, c.max_dispatch_rows), (1, 293, 1));
        let e = t_ctx.chunking(DataType::Uint8, &[]).unwrap();
        assert_eq!((e.chunks, e.tiles, e.max_dispatch_rows), (1, 1, 1));
    }
}
