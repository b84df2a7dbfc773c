//! The planner without a GPU: chunk, tile, block and dispatch arithmetic.

use super::*;

const MIB: u64 = 1 << 20;

/// Limits like lavapipe's defaults (128 MiB bindings), 256-byte offset alignment as on most
/// GPUs, with the given workgroup size, chunk bound and x limit.
fn limits(workgroup_size: u64, max_elements_per_chunk: u64, max_x: u64) -> PlanLimits {
    PlanLimits {
        workgroup_size,
        max_elements_per_chunk,
        max_workgroups_x: max_x,
        max_workgroups_y: 65535,
        offset_alignment: 256,
        max_binding: 128 * MIB,
        max_buffer: 256 * MIB,
    }
}

fn default_limits() -> PlanLimits {
    limits(256, u64::MAX, 65535)
}

fn chunk(start: u64, n: u64, tile_base: u64, tiles: u64) -> Chunk {
    Chunk {
        start,
        n,
        tile_base,
        tiles,
    }
}

/// What every plan must satisfy, whatever the sizes.
fn check_invariants(plan: &Plan, limits: &PlanLimits) {
    let size = plan.info.kind.size();
    let tile = limits.tile();
    // The smallest whole number of tiles whose bytes are a multiple of the alignment.
    let unit = (1..)
        .map(|k| k * tile)
        .find(|e| (e * size).is_multiple_of(limits.offset_alignment))
        .unwrap();
    assert!(!plan.chunks.is_empty());
    let (mut start, mut tile_base) = (0, 0);
    for (i, c) in plan.chunks.iter().enumerate() {
        let last = i + 1 == plan.chunks.len();
        assert_eq!(
            (c.start, c.tile_base),
            (start, tile_base),
            "chunk {i} follows on"
        );
        assert_eq!(c.tiles, c.n.div_ceil(tile), "chunk {i} tiles");
        assert!(c.n > 0 || plan.numel == 0, "chunk {i} is not empty");
        assert!(
            (c.start * size).is_multiple_of(limits.offset_alignment),
            "chunk {i} offset"
        );
        if !last {
            assert!(c.n.is_multiple_of(tile), "chunk {i} is whole tiles");
        }
        assert!(
            c.n * size <= limits.max_binding,
            "chunk {i} fits one binding"
        );
        assert!(
            c.n <= limits.max_elements_per_chunk.max(unit),
            "chunk {i} bound"
        );
        assert!(dispatch_size(c.tiles, limits.max_workgroups_x)
            .is_none_or(|(x, y)| u64::from(x) * u64::from(y) >= c.tiles));
        for v in [c.start, c.n, c.tile_base, c.tiles] {
            assert!(u32::try_from(v).is_ok(), "chunk {i} fits the shader's u32");
        }
        start += c.n;
        tile_base += c.tiles;
    }
    assert_eq!(start, plan.numel);
    assert_eq!(tile_base, plan.total_tiles);
    assert_eq!(plan.total_tiles, plan.numel.div_ceil(tile));
    assert_eq!(plan.blocks, plan.total_tiles.div_ceil(tile));
    assert!(u32::try_from(plan.total_tiles).is_ok());
}

#[test]
fn empty_tensor_is_one_empty_chunk() {
    let l = default_limits();
    let shapes: [&[usize]; 3] = [&[0], &[3, 0, 2], &[1 << 20, 1 << 20, 0]];
    for shape in shapes {
        let p = plan(DataType::Float32, shape, &l).unwrap();
        assert_eq!(p.numel, 0);
        assert!(p.dims.is_empty(), "{shape:?}");
        assert_eq!(p.chunks, [chunk(0, 0, 0, 0)]);
        assert_eq!((p.total_tiles, p.blocks), (0, 0));
        assert_eq!(
            p.chunking(&l),
            Chunking {
                chunks: 1,
                tiles: 0,
                max_dispatch_rows: 1
            }
        );
        check_invariants(&p, &l);
    }
}

#[test]
fn one_element_and_scalars() {
    let l = default_limits();
    let cases: [(&[usize], &[u32]); 3] = [(&[], &[]), (&[1], &[1]), (&[1, 1, 1], &[1, 1, 1])];
    for (shape, dims) in cases {
        for dtype in DataType::FIXED_SIZE {
            let p = plan(dtype, shape, &l).unwrap();
            assert_eq!((p.numel, p.dims.as_slice()), (1, dims));
            assert_eq!(p.chunks, [chunk(0, 1, 0, 1)]);
            assert_eq!((p.total_tiles, p.blocks), (1, 1));
            check_invariants(&p, &l);
        }
    }
}

#[test]
fn chunks_past_the_binding_limit() {
    // 400 MB of f32 in 128 MiB bindings: 2^25 elements (32768 tiles of 1024) per chunk.
    let l = default_limits();
    let p = plan(DataType::Float32, &[100_000_000], &l).unwrap();
    let per = 32 * MIB;
    assert_eq!(
        p.chunks,
        [
            chunk(0, per, 0, 32768),
            chunk(per, per, 32768, 32768),
            chunk(2 * per, 100_000_000 - 2 * per, 65536, 32121),
        ]
    );
    assert_eq!((p.total_tiles, p.blocks), (97657, 96));
    check_invariants(&p, &l);
    // The same bytes as u8, f16, f64 and complex128: the chunk is the binding in elements.
    for (dtype, per_chunk) in [
        (DataType::Uint8, 128 * MIB),
        (DataType::Float16, 64 * MIB),
        (DataType::Float64, 16 * MIB),
        (DataType::Complex128, 8 * MIB),
    ] {
        let p = plan(dtype, &[200_000_000], &l).unwrap();
        assert_eq!(p.chunks[0].n, per_chunk, "{dtype}");
        assert_eq!(p.chunks.len() as u64, 200_000_000u64.div_ceil(per_chunk));
        check_invariants(&p, &l);
    }
}

#[test]
fn a_binding_limit_off_the_alignment_rounds_down_to_whole_units() {
    // 100 MB + 12 bytes: the chunk is the largest whole number of 1024-element tiles below it.
    let l = PlanLimits {
        max_binding: 100_000_012,
        ..default_limits()
    };
    let p = plan(DataType::Float32, &[60_000_000], &l).unwrap();
    assert_eq!(p.chunks[0].n, 25_000_003 / 1024 * 1024);
    check_invariants(&p, &l);
}

#[test]
fn two_d_dispatch() {
    assert_eq!(dispatch_size(0, 3), None);
    assert_eq!(dispatch_size(1, 3), Some((1, 1)));
    assert_eq!(dispatch_size(3, 3), Some((3, 1)));
    assert_eq!(dispatch_size(10, 3), Some((3, 4)));
    assert_eq!(dispatch_size(65535, 65535), Some((65535, 1)));
    assert_eq!(dispatch_size(65536, 65535), Some((65535, 2)));
    assert_eq!(dispatch_size(1 << 22, 65535), Some((65535, 65)));
    // One chunk of 10 tiles (16 elements each) with 3 workgroups per row: 4 rows.
    let l = limits(4, u64::MAX, 3);
    let p = plan(DataType::Uint8, &[10, 16], &l).unwrap();
    assert_eq!(p.chunks, [chunk(0, 160, 0, 10)]);
    assert_eq!(p.chunking(&l).max_dispatch_rows, 4);
    check_invariants(&p, &l);
    // 2^32 - 1 bytes at the default workgroup size: 2^22 tiles over 32 chunks, 4096 blocks.
    let l = default_limits();
    let p = plan(DataType::Uint8, &[u32::MAX as usize], &l).unwrap();
    assert_eq!(p.chunking(&l).max_dispatch_rows, 3);
    // A chunk too large for x * y workgroups.
    let l = PlanLimits {
        max_workgroups_y: 2,
        ..limits(4, u64::MAX, 2)
    };
    assert!(matches!(
        plan(DataType::Uint8, &[1000], &l),
        Err(GpuError::TooLarge {
            what: "workgroups per chunk",
            needed: 63,
            limit: 4
        })
    ));
}

#[test]
fn tiny_forced_chunks() {
    // The tests' `tiny` context: 16-element tiles, chunks of one unit.
    for align in [4, 16, 256] {
        let l = PlanLimits {
            offset_alignment: align,
            ..limits(4, 1, 3)
        };
        for dtype in DataType::FIXED_SIZE {
            let size = dtype.size_of().unwrap() as u64;
            // The smallest whole number of tiles whose bytes are aligned.
            let unit = (1..)
                .map(|k| 16 * k)
                .find(|e| (e * size).is_multiple_of(align))
                .unwrap();
            for n in [1u64, 15, 16, 17, 255, 256, 257, 1000, 4097] {
                let p = plan(dtype, &[n as usize], &l).unwrap();
                assert_eq!(
                    p.chunks.len() as u64,
                    n.div_ceil(unit),
                    "{dtype} {n} {align}"
                );
                assert!(p.chunks.iter().all(|c| c.tiles <= unit / 16));
                check_invariants(&p, &l);
            }
        }
    }
    // Exact split: 17 bytes with 16-byte alignment.
    let l = PlanLimits {
        offset_alignment: 16,
        ..limits(4, 1, 3)
    };
    let p = plan(DataType::Uint8, &[17], &l).unwrap();
    assert_eq!(p.chunks, [chunk(0, 16, 0, 1), chunk(16, 1, 1, 1)]);
    assert_eq!((p.total_tiles, p.blocks), (2, 1));
    // The tests' `mid` context: 256-element tiles, chunks of at most 1000 elements = 3 tiles.
    let l = limits(64, 1000, 65535);
    let p = plan(DataType::Float32, &[4097], &l).unwrap();
    assert_eq!(p.chunks.len(), 6);
    assert_eq!(p.chunks[5], chunk(3840, 257, 15, 2));
    check_invariants(&p, &l);
}

#[test]
fn more_than_2_pow_32_elements() {
    let l = default_limits();
    assert!(matches!(
        plan(DataType::Uint8, &[1 << 16, 1 << 16], &l),
        Err(GpuError::TooLarge {
            what: "element count",
            needed: 0x1_0000_0000,
            limit: 0xFFFF_FFFF
        })
    ));
    assert!(matches!(
        plan(DataType::Uint8, &[usize::MAX, 2], &l),
        Err(GpuError::ShapeOverflow { .. })
    ));
    // The largest tensor: 2^32 - 1 elements. Chunk starts, tile bases and totals stay in u32.
    let p = plan(DataType::Uint8, &[u32::MAX as usize], &l).unwrap();
    assert_eq!(p.chunks.len(), 32);
    assert_eq!(
        p.chunks[31],
        chunk(31 << 27, (1 << 27) - 1, 31 << 17, 1 << 17)
    );
    assert_eq!((p.total_tiles, p.blocks), (1 << 22, 1 << 12));
    check_invariants(&p, &l);
    for dtype in [DataType::Float64, DataType::Complex128] {
        let p = plan(dtype, &[65535, 65537], &l).unwrap();
        check_invariants(&p, &l);
    }
    // Too many tiles for one tile-count binding (4-thread workgroups: 2^28 tiles, 1 GiB).
    assert!(matches!(
        plan(
            DataType::Uint8,
            &[u32::MAX as usize],
            &limits(4, u64::MAX, 65535)
        ),
        Err(GpuError::TooLarge {
            what: "tile counts",
            ..
        })
    ));
}

#[test]
fn refusals() {
    let l = default_limits();
    assert!(matches!(
        plan(DataType::Uint8, &[1; MAX_RANK + 1], &l),
        Err(GpuError::TooLarge { what: "rank", .. })
    ));
    assert!(plan(DataType::Uint8, &[1; MAX_RANK], &l).is_ok());
    assert!(matches!(
        plan(DataType::String, &[1], &l),
        Err(GpuError::UnsupportedType(DataType::String))
    ));
    // One tile of complex128 (16 KiB) does not fit an 8 KiB binding.
    let small = PlanLimits {
        max_binding: 8192,
        ..l
    };
    assert!(matches!(
        plan(DataType::Complex128, &[1], &small),
        Err(GpuError::InvalidConfig(_))
    ));
    // Too many blocks for pass 2a's dispatch.
    let narrow = PlanLimits {
        max_workgroups_y: 1,
        ..limits(4, u64::MAX, 1)
    };
    assert!(matches!(
        plan(DataType::Uint8, &[16 * 16 + 1], &narrow),
        Err(GpuError::TooLarge {
            what: "workgroups per chunk",
            ..
        })
    ));
    let l = limits(4, 16, 1);
    let narrow = PlanLimits {
        max_workgroups_y: 1,
        offset_alignment: 16,
        ..l
    };
    assert!(matches!(
        plan(DataType::Uint8, &[16 * 16 + 1], &narrow),
        Err(GpuError::TooLarge {
            what: "tile blocks",
            needed: 2,
            limit: 1
        })
    ));
}

#[test]
fn limits_from_the_device_and_config() {
    let device = wgpu::Limits {
        max_compute_workgroups_per_dimension: 65535,
        min_storage_buffer_offset_alignment: 2,
        ..wgpu::Limits::default()
    };
    let config = GpuConfig {
        workgroup_size: 64,
        max_workgroups_per_dim: 3,
        ..GpuConfig::default()
    };
    let l = PlanLimits::new(&device, &config);
    assert_eq!((l.max_workgroups_x, l.max_workgroups_y), (3, 65535));
    assert_eq!(l.offset_alignment, 4);
    assert_eq!(l.tile(), 256);
    assert!(l
        .check_binding("x", device.max_storage_buffer_binding_size)
        .is_ok());
    assert!(matches!(
        l.check_binding("x", device.max_storage_buffer_binding_size + 1),
        Err(GpuError::TooLarge { what: "x", .. })
    ));
}
