//! Cross-checks of the GPU kernel against nonzero_core on a real adapter (lavapipe in CI).
//!
//! Without an adapter these tests fail, unless `NONZERO_GPU_ALLOW_SKIP=1` is set outside CI
//! (`CI=true` always fails): they never pass silently.

use nonzero_core::{bf16, f16, Complex32, Complex64, DataType, OnnxCoordinates};
use nonzero_gpu::{DmlCoordinates, GpuConfig, GpuError, GpuNonZero};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::OnceLock;

const TYPES: [DataType; 15] = DataType::FIXED_SIZE;

fn make(config: GpuConfig) -> Option<GpuNonZero> {
    match GpuNonZero::request(config) {
        Ok(ctx) => Some(ctx),
        Err(e @ (GpuError::NoAdapter(_) | GpuError::RequestDevice(_))) => {
            let ci = std::env::var("CI").is_ok_and(|v| v == "true");
            let allow = std::env::var("NONZERO_GPU_ALLOW_SKIP").is_ok_and(|v| v == "1");
            if ci || !allow {
                panic!(
                    "no GPU adapter: {e}. Run crates/gpu-kernel/setup-lavapipe.sh to install lavapipe, \
                     or set NONZERO_GPU_ALLOW_SKIP=1 (ignored when CI=true) to skip"
                );
            }
            eprintln!("SKIPPED: no GPU adapter ({e}); NONZERO_GPU_ALLOW_SKIP=1 is set");
            None
        }
        Err(e) => panic!("creating the GPU context failed: {e}"),
    }
}

/// Both scan paths: `true` = subgroup operations where the device has them (lavapipe does),
/// `false` = the workgroup-memory path, forced by `GpuConfig::use_subgroups`.
const PATHS: [bool; 2] = [true, false];

type Slot = OnceLock<Option<GpuNonZero>>;

fn cached(slots: &'static [Slot; 2], sub: bool, config: GpuConfig) -> Option<&'static GpuNonZero> {
    slots[usize::from(sub)]
        .get_or_init(|| {
            make(GpuConfig {
                use_subgroups: sub,
                ..config
            })
        })
        .as_ref()
}

/// The default context: 256-thread workgroups, chunks as large as the device allows.
fn big(sub: bool) -> Option<&'static GpuNonZero> {
    static CTX: [Slot; 2] = [OnceLock::new(), OnceLock::new()];
    cached(&CTX, sub, GpuConfig::default())
}

/// Tiny tiles (16 elements), the smallest chunks and at most 3 workgroups along x, so the
/// chunked and 2-D dispatch paths run on small data. 4-thread workgroups are smaller than
/// lavapipe's subgroups (8): one partial subgroup per workgroup.
fn tiny(sub: bool) -> Option<&'static GpuNonZero> {
    static CTX: [Slot; 2] = [OnceLock::new(), OnceLock::new()];
    cached(
        &CTX,
        sub,
        GpuConfig {
            workgroup_size: 4,
            max_elements_per_chunk: 1,
            max_workgroups_per_dim: 3,
            use_subgroups: sub,
        },
    )
}

/// Middle: 64-thread workgroups (256-element tiles), chunks of about 1000 elements, at most 2
/// workgroups along x (so 3- and 4-tile chunks dispatch 2 x 2).
fn mid(sub: bool) -> Option<&'static GpuNonZero> {
    static CTX: [Slot; 2] = [OnceLock::new(), OnceLock::new()];
    cached(
        &CTX,
        sub,
        GpuConfig {
            workgroup_size: 64,
            max_elements_per_chunk: 1000,
            max_workgroups_per_dim: 65535,
            use_subgroups: sub,
        },
    )
}

/// The three contexts of one path.
fn contexts_of(sub: bool) -> Vec<&'static GpuNonZero> {
    [big(sub), tiny(sub), mid(sub)]
        .into_iter()
        .flatten()
        .collect()
}

/// All six contexts (three sizes, both paths).
fn contexts() -> Vec<&'static GpuNonZero> {
    PATHS.into_iter().flat_map(contexts_of).collect()
}

fn size_of(t: DataType) -> usize {
    t.size_of().unwrap()
}

/// Zero bit patterns of each type (little-endian element bytes): signed zeros for floats.
fn zero_value(t: DataType, rng: &mut StdRng) -> Vec<u8> {
    let s = size_of(t);
    let mut v = vec![0u8; s];
    let neg = |rng: &mut StdRng, v: &mut [u8], byte: usize| {
        if rng.random_bool(0.5) {
            v[byte] |= 0x80;
        }
    };
    match t {
        DataType::Float16 | DataType::Bfloat16 => neg(rng, &mut v, 1),
        DataType::Float32 => neg(rng, &mut v, 3),
        DataType::Float64 => neg(rng, &mut v, 7),
        DataType::Complex64 => {
            neg(rng, &mut v, 3);
            neg(rng, &mut v, 7);
        }
        DataType::Complex128 => {
            neg(rng, &mut v, 7);
            neg(rng, &mut v, 15);
        }
        _ => {}
    }
    v
}

/// Non-zero values: special patterns (NaN, inf, subnormals, sign-only-plus-one, half 0x0001,
/// integer sign bit) or random bits with the lowest bit set.
fn nonzero_value(t: DataType, rng: &mut StdRng) -> Vec<u8> {
    let s = size_of(t);
    if t == DataType::Bool {
        return vec![1];
    }
    let specials: &[u64] = match t {
        DataType::Float16 => &[0x0001, 0x8001, 0x7C00, 0xFC00, 0x7E00, 0x0400, 0x3C00],
        DataType::Bfloat16 => &[0x0001, 0x8001, 0x7F80, 0xFF80, 0x7FC0, 0x3F80],
        DataType::Float32 | DataType::Complex64 => &[
            0x0000_0001,
            0x8000_0001,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0000,
            0x0080_0000,
            0x3F80_0000,
        ],
        DataType::Float64 | DataType::Complex128 => &[
            1,
            0x8000_0000_0000_0001,
            0x7FF0_0000_0000_0000,
            0xFFF0_0000_0000_0000,
            0x7FF8_0000_0000_0000,
            0x0000_0001_0000_0000,
            0x3FF0_0000_0000_0000,
        ],
        DataType::Int8 | DataType::Uint8 => &[0x80, 0xFF, 1],
        DataType::Int16 | DataType::Uint16 => &[0x8000, 0xFFFF, 1, 0x0100],
        DataType::Int32 | DataType::Uint32 => &[0x8000_0000, 1, 0x0100_0000],
        _ => &[0x8000_0000_0000_0000, 1, 0x0000_0001_0000_0000],
    };
    let part = match t {
        DataType::Complex64 => 4,
        DataType::Complex128 => 8,
        _ => s,
    };
    let mut v = vec![0u8; s];
    let fill = |rng: &mut StdRng, dst: &mut [u8]| {
        if rng.random_bool(0.5) {
            let x = specials[rng.random_range(0..specials.len())];
            dst.copy_from_slice(&x.to_le_bytes()[..dst.len()]);
        } else {
            rng.fill(dst);
            dst[0] |= 1;
        }
    };
    if part == s {
        fill(rng, &mut v);
    } else {
        // Complex: one or both parts non-zero, the other possibly a signed zero.
        let which = rng.random_range(0..3);
        for (i, dst) in v.chunks_exact_mut(part).enumerate() {
            if which == 2 || which == i {
                fill(rng, dst);
            } else if rng.random_bool(0.5) {
                dst[part - 1] = 0x80;
            }
        }
    }
    v
}

fn gen_bytes(t: DataType, n: usize, density: f64, rng: &mut StdRng) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * size_of(t));
    for _ in 0..n {
        if rng.random_bool(density) {
            out.extend(nonzero_value(t, rng));
        } else {
            out.extend(zero_value(t, rng));
        }
    }
    out
}

/// nonzero_core's kernel on the same bytes, after checking it against the naive reference.
fn oracle(t: DataType, bytes: &[u8], shape: &[usize]) -> OnnxCoordinates {
    fn run<T: nonzero_core::Element + bytemuck::Pod>(
        bytes: &[u8],
        shape: &[usize],
    ) -> OnnxCoordinates {
        let v: Vec<T> = bytemuck::pod_collect_to_vec(bytes);
        let y = nonzero_core::nonzero(&v, shape).unwrap();
        if v.len() <= 4096 {
            let (nnz, data) = nonzero_core::reference::nonzero_packed(shape, |i| {
                nonzero_core::Element::is_nonzero(v[i])
            });
            assert_eq!(
                (nnz, &data),
                (y.nnz, &y.data),
                "nonzero_core disagrees with its reference"
            );
        }
        y
    }
    match t {
        DataType::Bool => {
            let v: Vec<bool> = bytes.iter().map(|&b| b != 0).collect();
            nonzero_core::nonzero(&v, shape).unwrap()
        }
        DataType::Uint8 => run::<u8>(bytes, shape),
        DataType::Int8 => run::<i8>(bytes, shape),
        DataType::Uint16 => run::<u16>(bytes, shape),
        DataType::Int16 => run::<i16>(bytes, shape),
        DataType::Uint32 => run::<u32>(bytes, shape),
        DataType::Int32 => run::<i32>(bytes, shape),
        DataType::Uint64 => run::<u64>(bytes, shape),
        DataType::Int64 => run::<i64>(bytes, shape),
        DataType::Float16 => run::<f16>(bytes, shape),
        DataType::Bfloat16 => run::<bf16>(bytes, shape),
        DataType::Float32 => run::<f32>(bytes, shape),
        DataType::Float64 => run::<f64>(bytes, shape),
        DataType::Complex64 => run::<Complex32>(bytes, shape),
        DataType::Complex128 => run::<Complex64>(bytes, shape),
        DataType::String => unreachable!(),
    }
}

/// The DirectML rows expected from the ONNX coordinates: the last `n` dimensions.
fn dml_from_onnx(y: &OnnxCoordinates, n: usize) -> DmlCoordinates {
    let mut coords = Vec::with_capacity(y.nnz * n);
    for j in 0..y.nnz {
        for d in y.rank - n..y.rank {
            coords.push(y.data[d * y.nnz + j] as u32);
        }
    }
    DmlCoordinates {
        count: y.nnz as u32,
        columns: n,
        coords,
    }
}

fn check(ctx: &GpuNonZero, t: DataType, bytes: &[u8], shape: &[usize], what: &str) {
    let want = oracle(t, bytes, shape);
    let got = ctx
        .nonzero_bytes(t, bytes, shape)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.shape(), want.shape(), "{what}: {t} {shape:?} {ctx:?}");
    assert_eq!(got.data, want.data, "{what}: {t} {shape:?} {ctx:?}");
    let n = shape.len() - shape.iter().take_while(|&&d| d == 1).count();
    for cols in [n, shape.len()] {
        let got = ctx
            .nonzero_coordinates_bytes(t, bytes, shape, cols)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            got,
            dml_from_onnx(&want, cols),
            "{what}: DML N={cols} {t} {shape:?} {ctx:?}"
        );
    }
}

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
