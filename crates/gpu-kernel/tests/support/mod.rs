//! What the GPU tests share: the test contexts (three sizes on both scan paths), seeded input
//! generators with the special bit patterns of every type, and the oracle (nonzero_core).

use nonzero_core::{dispatch_element, DataType, OnnxCoordinates};
use nonzero_gpu::{DmlCoordinates, GpuConfig, GpuError, GpuNonZero};
use rand::rngs::StdRng;
use rand::Rng;
use std::sync::OnceLock;

pub const TYPES: [DataType; 15] = DataType::FIXED_SIZE;

pub fn make(config: GpuConfig) -> Option<GpuNonZero> {
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
pub const PATHS: [bool; 2] = [true, false];

pub type Slot = OnceLock<Option<GpuNonZero>>;

pub fn cached(
    slots: &'static [Slot; 2],
    sub: bool,
    config: GpuConfig,
) -> Option<&'static GpuNonZero> {
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
pub fn big(sub: bool) -> Option<&'static GpuNonZero> {
    static CTX: [Slot; 2] = [OnceLock::new(), OnceLock::new()];
    cached(&CTX, sub, GpuConfig::default())
}

/// Tiny tiles (16 elements), the smallest chunks and at most 3 workgroups along x, so the
/// chunked and 2-D dispatch paths run on small data. 4-thread workgroups are smaller than
/// lavapipe's subgroups (8): one partial subgroup per workgroup.
pub fn tiny(sub: bool) -> Option<&'static GpuNonZero> {
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
pub fn mid(sub: bool) -> Option<&'static GpuNonZero> {
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
pub fn contexts_of(sub: bool) -> Vec<&'static GpuNonZero> {
    [big(sub), tiny(sub), mid(sub)]
        .into_iter()
        .flatten()
        .collect()
}

/// All six contexts (three sizes, both paths).
pub fn contexts() -> Vec<&'static GpuNonZero> {
    PATHS.into_iter().flat_map(contexts_of).collect()
}

pub fn size_of(t: DataType) -> usize {
    t.size_of().unwrap()
}

/// Zero bit patterns of each type (little-endian element bytes): signed zeros for floats.
pub fn zero_value(t: DataType, rng: &mut StdRng) -> Vec<u8> {
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
pub fn nonzero_value(t: DataType, rng: &mut StdRng) -> Vec<u8> {
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
    let part = t.component_size().unwrap();
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

pub fn gen_bytes(t: DataType, n: usize, density: f64, rng: &mut StdRng) -> Vec<u8> {
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
pub fn oracle(t: DataType, bytes: &[u8], shape: &[usize]) -> OnnxCoordinates {
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
    // A bool is a byte, any non-zero byte `true`: the kernel's own view of bool buffers.
    dispatch_element!(t, bool as u8,
        T => run::<T>(bytes, shape),
        String => unreachable!("the GPU tests make no strings"),
    )
}

/// The DirectML rows expected from the ONNX coordinates: the last `n` dimensions.
pub fn dml_from_onnx(y: &OnnxCoordinates, n: usize) -> DmlCoordinates {
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

pub fn check(ctx: &GpuNonZero, t: DataType, bytes: &[u8], shape: &[usize], what: &str) {
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
