//! The parallel kernel against the naive reference: random shapes (ranks 0 to 8, zero and unit
//! sizes), random strides (0 = broadcast), every fixed-size type, and chunk boundaries anywhere.
//! `scripts/test` runs this file once per instruction set the CPU has (NONZERO_SIMD=baseline,
//! avx2, avx512); `instruction_set_in_use` prints which one a run exercised.

use nonzero_core::dml::{
    nonzero_coordinates, DmlDataType, FeatureLevel, NonZeroCoordinatesDesc, TensorDesc,
};
use nonzero_core::{
    bf16, f16, reference, Complex32, Complex64, Counted, Element, Layout, NumericSlice, Rayon,
    Sequential,
};
use proptest::prelude::*;

/// A shape, strides that keep it inside a buffer, and the buffer length they need.
fn strided_shape() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, bool)> {
    prop::collection::vec(0usize..5, 0..=8).prop_flat_map(|sizes| {
        let rank = sizes.len();
        (
            Just(sizes),
            prop::collection::vec(0usize..7, rank),
            any::<bool>(),
        )
    })
}

fn buffer_len(sizes: &[usize], strides: &[usize]) -> usize {
    Layout::strided(sizes, strides)
        .unwrap()
        .required_len()
        .unwrap()
}

/// Values of T where `pattern[i]` picks zero (-0.0 for floats), one, NaN-like or a subnormal.
fn values<T: Element>(pattern: &[u8], make: impl Fn(u8) -> T) -> Vec<T> {
    pattern.iter().map(|&p| make(p)).collect()
}

fn check<T: Element>(
    data: &[T],
    sizes: &[usize],
    strides: &[usize],
    packed: bool,
    tasks: usize,
) -> Result<(), TestCaseError> {
    let layout = if packed {
        Layout::packed(sizes).unwrap()
    } else {
        Layout::strided(sizes, strides).unwrap()
    };
    let strides = layout.strides().to_vec();
    let (nnz, expected) = reference::nonzero_strided(sizes, &strides, |o| data[o].is_nonzero());
    for exec in [&Sequential as &dyn nonzero_core::Executor, &Rayon] {
        let counted = Counted::count_in_tasks(data, &layout, exec, tasks).unwrap();
        prop_assert_eq!(counted.nnz(), nnz);
        prop_assert_eq!(counted.rank(), sizes.len());
        let mut out = vec![-1i64; sizes.len() * nnz];
        counted.write_onnx(data, &mut out, exec).unwrap();
        prop_assert_eq!(
            &out,
            &expected,
            "sizes {:?} strides {:?} tasks {}",
            sizes,
            strides,
            tasks
        );
    }
    Ok(())
}

fn pattern_for(sizes: &[usize], strides: &[usize], packed: bool) -> impl Strategy<Value = Vec<u8>> {
    let len = if packed {
        sizes.iter().product()
    } else {
        buffer_len(sizes, strides)
    };
    prop::collection::vec(0u8..4, len)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_type_matches_the_reference(
        (sizes, strides, packed, pattern) in strided_shape().prop_flat_map(|(s, t, p)| {
            let pat = pattern_for(&s, &t, p);
            (Just(s), Just(t), Just(p), pat)
        }),
        tasks in 1usize..9,
    ) {
        // 0 -> zero, 1 -> one, 2 -> the "tricky" non-zero (NaN, subnormal, MIN), 3 -> negative zero / zero.
        check(&values(&pattern, |p| p == 1 || p == 2), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| [0u8, 1, 255, 0][p as usize]), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| [0i8, 1, i8::MIN, 0][p as usize]), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| [0u16, 1, u16::MAX, 0][p as usize]), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| [0i32, -1, i32::MIN, 0][p as usize]), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| [0u64, 1, 1 << 63, 0][p as usize]), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| [0.0f32, 1.5, f32::NAN, -0.0][p as usize]), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| [0.0f64, f64::INFINITY, f64::from_bits(1), -0.0][p as usize]), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| f16::from_bits([0, 0x3C00, 0x0001, 0x8000][p as usize])), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| bf16::from_bits([0, 0x3F80, 0x7FC0, 0x8000][p as usize])), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| [Complex32::new(0.0, 0.0), Complex32::new(0.0, 1.0), Complex32::new(f32::NAN, 0.0), Complex32::new(-0.0, -0.0)][p as usize]), &sizes, &strides, packed, tasks)?;
        check(&values(&pattern, |p| [Complex64::new(0.0, 0.0), Complex64::new(2.0, 0.0), Complex64::new(0.0, f64::MIN_POSITIVE), Complex64::new(-0.0, 0.0)][p as usize]), &sizes, &strides, packed, tasks)?;
    }

    /// DirectML: every valid N, strided input, against the reference's right-aligned columns.
    #[test]
    fn directml_matches_the_reference(
        (sizes, strides, pattern) in prop::collection::vec(1usize..5, 1..=8).prop_flat_map(|sizes| {
            let rank = sizes.len();
            (Just(sizes), prop::collection::vec(0usize..6, rank))
        }).prop_flat_map(|(s, t)| { let len = buffer_len(&s, &t); (Just(s), Just(t), prop::collection::vec(0u8..3, len)) }),
        extra_columns in 0usize..8,
    ) {
        let data: Vec<f32> = pattern.iter().map(|&p| [0.0, 1.0, -0.0][p as usize]).collect();
        let rank = sizes.len();
        let effective = nonzero_core::effective_rank(&sizes);
        let n = (effective.max(1) + extra_columns).min(rank).max(effective);
        let dims = rank.max(2);
        let pad = |v: &[usize], fill: u32| -> Vec<u32> {
            let mut out = vec![fill; dims - v.len()];
            out.extend(v.iter().map(|&x| x as u32));
            out
        };
        let m: usize = sizes.iter().product();
        let mut coords_sizes = vec![1u32; dims];
        coords_sizes[dims - 2] = m as u32;
        coords_sizes[dims - 1] = n as u32;
        let desc = NonZeroCoordinatesDesc {
            input: TensorDesc::strided(DmlDataType::Float32, &pad(&sizes, 1), &pad(&strides, 0)),
            output_count: TensorDesc::packed(DmlDataType::Uint32, &vec![1; dims]),
            output_coordinates: TensorDesc::packed(DmlDataType::Uint32, &coords_sizes),
        };
        let (nnz, onnx) = reference::nonzero_strided(&sizes, &strides, |o| data[o].is_nonzero());
        let mut count = [u32::MAX];
        let mut coords = vec![u32::MAX; m * n];
        let got = nonzero_coordinates(FeatureLevel::V4_0, &desc, NumericSlice::new(&data), &mut count, &mut coords, &Rayon);
        // A rank-1 input padded to 2 dimensions must keep N within the padded DimensionCount.
        let got = got.unwrap();
        prop_assert_eq!(got as usize, nnz);
        prop_assert_eq!(count[0] as usize, nnz);
        for j in 0..nnz {
            for c in 0..n {
                let d = rank - n + c;
                prop_assert_eq!(coords[j * n + c] as i64, onnx[d * nnz + j], "row {} col {}", j, c);
            }
        }
        prop_assert!(coords[nnz * n..].iter().all(|&c| c == u32::MAX), "rows past the count are untouched");
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn instruction_set_in_use() {
    let set = nonzero_core::instruction_set();
    eprintln!("kernel loops use: {set}");
    match std::env::var("NONZERO_SIMD").as_deref() {
        Ok("baseline") => assert!(
            set.starts_with("x86-64 baseline") || set == "portable",
            "{set}"
        ),
        Ok("avx2") if std::is_x86_feature_detected!("avx2") => assert_eq!(set, "AVX2"),
        _ => {}
    }
}

#[cfg(target_arch = "aarch64")]
#[test]
fn instruction_set_in_use() {
    // One build on aarch64, whatever NONZERO_SIMD says (docs/configuration.md).
    assert_eq!(nonzero_core::instruction_set(), "NEON (portable loops)");
}

#[test]
fn large_input_runs_in_parallel_chunks_and_matches() {
    // 3M elements: above the parallel threshold, so the default task count splits it.
    let n = 3_000_000usize;
    let data: Vec<u8> = (0..n)
        .map(|i| ((i.wrapping_mul(2654435761) >> 7) % 3 == 0) as u8)
        .collect();
    let shape = [3, 1000, 1000];
    let got = nonzero_core::nonzero(&data, &shape).unwrap();
    let (nnz, expected) = reference::nonzero_packed(&shape, |i| data[i] != 0);
    assert_eq!(got.nnz, nnz);
    assert_eq!(got.data, expected);
}

#[test]
fn short_innermost_rows_in_parallel_chunks_match() {
    // Rows shorter than the kernel's short-row bound are compacted many rows at a time
    // (kernel/walk.rs): sparse (rows skipped, coordinates divided out again), dense (rows
    // carried one by one), and blocks that end inside a row, across parallel chunks.
    for (shape, every) in [
        (vec![400_000usize, 3], 97usize),
        (vec![400_000, 3], 2),
        (vec![1_000, 7, 1, 2, 63], 5),
        (vec![2, 1, 350_001, 2], 1_000_003),
    ] {
        let n: usize = shape.iter().product();
        let data: Vec<u8> = (0..n)
            .map(|i| (i.wrapping_mul(2654435761) % every == 0) as u8)
            .collect();
        let got = nonzero_core::nonzero(&data, &shape).unwrap();
        let (nnz, expected) = reference::nonzero_packed(&shape, |i| data[i] != 0);
        assert_eq!(got.nnz, nnz, "{shape:?}");
        assert_eq!(got.data, expected, "{shape:?}");
    }
}
