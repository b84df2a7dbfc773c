//! ArgWhere, BooleanMask and NonZeroCoordinates (ONNX Runtime form) against the naive reference:
//! every fixed-size type, ranks 0 to 5 with zero and unit sizes, strided views for ArgWhere,
//! chunk boundaries anywhere, the sequential and rayon executors. Like kernel_vs_reference.rs,
//! `scripts/test` should run this file once per instruction set (NONZERO_SIMD=baseline, avx2,
//! avx512): the counting and index compaction loops are the multiversioned ones.

use nonzero_core::dml::{coordinates_columns, coordinates_for_onnx};
use nonzero_core::kernel::ONE_PASS_MAX;
use nonzero_core::mask::{check_mask_shape, MaskPlan};
use nonzero_core::{
    bf16, f16, reference, Complex32, Complex64, Counted, Element, Executor, Layout, NumericSlice,
    Rayon, Sequential,
};
use proptest::prelude::*;

const EXECUTORS: [&dyn Executor; 2] = [&Sequential, &Rayon];

/// Runs `$check::<T>(make)` for every fixed-size type, where `make(p)` maps a pattern byte to
/// zero (0), one (1), a tricky non-zero (2: NaN, subnormal, MIN) or a zero spelled differently
/// (3: -0.0).
macro_rules! every_type {
    ($check:ident ( $($arg:expr),* )) => {{
        $check($($arg,)* |p| p == 1 || p == 2)?;
        $check($($arg,)* |p| [0u8, 1, 255, 0][p as usize])?;
        $check($($arg,)* |p| [0i8, 1, i8::MIN, 0][p as usize])?;
        $check($($arg,)* |p| [0u16, 1, u16::MAX, 0][p as usize])?;
        $check($($arg,)* |p| [0i16, -1, i16::MIN, 0][p as usize])?;
        $check($($arg,)* |p| [0u32, 1, u32::MAX, 0][p as usize])?;
        $check($($arg,)* |p| [0i32, -1, i32::MIN, 0][p as usize])?;
        $check($($arg,)* |p| [0u64, 1, 1 << 63, 0][p as usize])?;
        $check($($arg,)* |p| [0i64, -1, i64::MIN, 0][p as usize])?;
        $check($($arg,)* |p| [0.0f32, 1.5, f32::NAN, -0.0][p as usize])?;
        $check($($arg,)* |p| [0.0f64, f64::INFINITY, f64::from_bits(1), -0.0][p as usize])?;
        $check($($arg,)* |p| f16::from_bits([0, 0x3C00, 0x0001, 0x8000][p as usize]))?;
        $check($($arg,)* |p| bf16::from_bits([0, 0x3F80, 0x7FC0, 0x8000][p as usize]))?;
        $check($($arg,)* |p| [Complex32::new(0.0, 0.0), Complex32::new(0.0, 1.0), Complex32::new(f32::NAN, 0.0), Complex32::new(-0.0, -0.0)][p as usize])?;
        $check($($arg,)* |p| [Complex64::new(0.0, 0.0), Complex64::new(2.0, 0.0), Complex64::new(0.0, f64::MIN_POSITIVE), Complex64::new(-0.0, 0.0)][p as usize])?;
    }};
}

/// Sizes (rank 0 to 5, sizes 0 to 4), strides (0 broadcasts) and whether to use the packed layout.
fn shape() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, bool)> {
    prop::collection::vec(0usize..5, 0..=5).prop_flat_map(|sizes| {
        let rank = sizes.len();
        (
            Just(sizes),
            prop::collection::vec(0usize..6, rank),
            any::<bool>(),
        )
    })
}

fn layout_of(sizes: &[usize], strides: &[usize], packed: bool) -> Layout {
    if packed {
        Layout::packed(sizes).unwrap()
    } else {
        Layout::strided(sizes, strides).unwrap()
    }
}

fn check_argwhere<T: Element>(
    pattern: &[u8],
    layout: &Layout,
    tasks: usize,
    make: impl Fn(u8) -> T,
) -> Result<(), TestCaseError> {
    let data: Vec<T> = pattern[..layout.required_len().unwrap()]
        .iter()
        .map(|&p| make(p))
        .collect();
    let (nnz, expected) =
        reference::argwhere_strided(layout.sizes(), layout.strides(), |o| data[o].is_nonzero());
    for exec in EXECUTORS {
        let counted = Counted::count_in_tasks(&data[..], layout, exec, tasks).unwrap();
        prop_assert_eq!(counted.nnz(), nnz);
        let mut out = vec![-1i64; nnz * layout.rank()];
        counted.write_argwhere(&data[..], &mut out, exec).unwrap();
        prop_assert_eq!(&out, &expected, "{:?} tasks {}", layout, tasks);
    }
    Ok(())
}

fn check_one_pass<T: Element>(
    pattern: &[u8],
    sizes: &[usize],
    make: impl Fn(u8) -> T,
) -> Result<(), TestCaseError> {
    let layout = Layout::packed(sizes).unwrap();
    let data: Vec<T> = pattern[..layout.numel()].iter().map(|&p| make(p)).collect();
    let (nnz, nonzero) = reference::nonzero_packed(sizes, |i| data[i].is_nonzero());
    let strides = nonzero_core::row_major_strides(sizes);
    let (_, argwhere) = reference::argwhere_strided(sizes, &strides, |i| data[i].is_nonzero());
    let src = NumericSlice::from_bytes(T::DTYPE, bytemuck::cast_slice(&data)).unwrap();
    let wide = sizes.iter().filter(|&&n| n != 1).count();
    let expected_done = layout.numel() <= ONE_PASS_MAX && wide <= 1;
    let layouts: [(bool, [usize; 2], &[i64]); 2] = [
        (false, [sizes.len(), nnz], &nonzero),
        (true, [nnz, sizes.len()], &argwhere),
    ];
    for (is_argwhere, shape, expected) in layouts {
        let mut out = Vec::new();
        let mut asked = None;
        let done = one_pass(&src, sizes, is_argwhere, &mut out, &mut asked);
        prop_assert_eq!(done, expected_done, "{:?}", sizes);
        if done {
            prop_assert_eq!(asked, Some(shape));
            prop_assert_eq!(&out[..], expected, "{:?}", sizes);
        } else {
            prop_assert_eq!(asked, None, "a refused input must not allocate the output");
        }
    }
    Ok(())
}

/// NonZero's or ArgWhere's one pass into `out`, recording the shape it asked for.
fn one_pass(
    src: &NumericSlice<'_>,
    sizes: &[usize],
    is_argwhere: bool,
    out: &mut Vec<i64>,
    asked: &mut Option<[usize; 2]>,
) -> bool {
    let output = move |shape: [usize; 2]| {
        let out = out; // moved, so the closure is FnOnce and may return a borrow of it
        *asked = Some(shape);
        *out = vec![-1i64; shape[0] * shape[1]];
        Ok::<_, ()>(&mut out[..])
    };
    let done = if is_argwhere {
        src.argwhere_one_pass(sizes, output)
    } else {
        src.nonzero_one_pass(sizes, output)
    };
    done.unwrap()
}

/// Bytes of a typed slice, so that NaN payloads compare exactly.
fn bytes_of<T: bytemuck::NoUninit>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

fn check_mask<T: Element + bytemuck::NoUninit>(
    pattern: &[u8],
    x_shape: &[usize],
    mask: &[bool],
    mask_dims: usize,
    tasks: usize,
    make: impl Fn(u8) -> T,
) -> Result<(), TestCaseError> {
    let x: Vec<T> = pattern.iter().map(|&p| make(p)).collect();
    let mask_shape = &x_shape[..mask_dims];
    let (expected_shape, expected) = reference::boolean_mask(&x, x_shape, mask, mask_shape);
    let shape = check_mask_shape(x_shape, mask_shape).unwrap();
    let slice_bytes = shape.slice_len * std::mem::size_of::<T>();
    for exec in EXECUTORS {
        let plan = MaskPlan::count_in_tasks(mask, exec, tasks);
        prop_assert_eq!(shape.output_shape(plan.nnz()), expected_shape.clone());
        let mut out = vec![0xA5u8; plan.nnz() * slice_bytes];
        plan.gather_bytes(bytemuck::cast_slice(&x), slice_bytes, &mut out, exec)
            .unwrap();
        prop_assert_eq!(
            &out,
            &bytes_of(&expected),
            "x {:?} mask {:?} tasks {}",
            x_shape,
            mask_shape,
            tasks
        );
    }
    Ok(())
}

fn check_coordinates<T: Element>(
    pattern: &[u8],
    sizes: &[usize],
    extra_columns: usize,
    make: impl Fn(u8) -> T,
) -> Result<(), TestCaseError> {
    let x: Vec<T> = pattern.iter().map(|&p| make(p)).collect();
    let effective = nonzero_core::effective_rank(sizes);
    let columns = (effective + extra_columns).min(sizes.len());
    prop_assert_eq!(
        coordinates_columns(sizes, Some(columns as i64)),
        Ok(columns)
    );
    let (count, expected) =
        reference::nonzero_coordinates_zero_filled(sizes, columns, |i| x[i].is_nonzero());
    for exec in EXECUTORS {
        let mut got_count = [u32::MAX];
        let mut coords = vec![u32::MAX; x.len() * columns];
        let nnz = coordinates_for_onnx(&x[..], sizes, columns, &mut got_count, &mut coords, exec);
        prop_assert_eq!(nnz, Ok(count));
        prop_assert_eq!(got_count[0], count);
        prop_assert_eq!(&coords, &expected, "sizes {:?} columns {}", sizes, columns);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn one_pass_matches_the_reference(
        // Up to 4 dimensions of size 1 around one of 0..=400 elements (past ONE_PASS_MAX; 0
        // a fifth of the time), or two wide dimensions (always refused).
        (sizes, pattern) in (prop_oneof![1 => Just(0usize), 4 => 0usize..=400], 0usize..4, 0usize..4, any::<bool>())
            .prop_map(|(n, before, after, second)| {
                let mut sizes = vec![1; before];
                sizes.push(n);
                sizes.extend(std::iter::repeat_n(1, after));
                if second { sizes.push(2); }
                sizes
            })
            .prop_flat_map(|sizes| {
                let numel: usize = sizes.iter().product();
                // Patterns of zeros only (no non-zero at all) as often as mixed ones.
                (Just(sizes), prop_oneof![
                    prop::collection::vec(0u8..4, numel),
                    prop::collection::vec(prop_oneof![Just(0u8), Just(3u8)], numel),
                ])
            }),
    ) {
        every_type!(check_one_pass(&pattern, &sizes));
    }

    #[test]
    fn argwhere_matches_the_reference(
        (sizes, strides, packed) in shape(),
        pattern in prop::collection::vec(0u8..4, 2048),
        tasks in 1usize..9,
    ) {
        let layout = layout_of(&sizes, &strides, packed);
        prop_assume!(layout.required_len().unwrap() <= pattern.len());
        every_type!(check_argwhere(&pattern, &layout, tasks));
    }

    #[test]
    fn boolean_mask_matches_the_reference(
        (x_shape, mask_dims) in prop::collection::vec(0usize..5, 1..=5)
            .prop_flat_map(|s| { let r = s.len(); (Just(s), 1..=r) }),
        seed in prop::collection::vec(0u8..4, 1024),
        density in 0u8..5,
        tasks in 1usize..9,
    ) {
        let numel: usize = x_shape.iter().product();
        let mask_len: usize = x_shape[..mask_dims].iter().product();
        // Densities 0%, ~25%, ~50%, ~75%, 100% from the same seed.
        let mask: Vec<bool> = (0..mask_len)
            .map(|i| (seed[i % seed.len()] as usize + i / seed.len()) % 4 < density as usize)
            .collect();
        let pattern: Vec<u8> = (0..numel).map(|i| seed[(i * 7) % seed.len()]).collect();
        every_type!(check_mask(&pattern, &x_shape, &mask, mask_dims, tasks));
    }

    #[test]
    fn coordinates_match_the_reference(
        sizes in prop::collection::vec(0usize..5, 0..=5),
        pattern in prop::collection::vec(0u8..4, 1024),
        extra_columns in 0usize..6,
    ) {
        let numel: usize = sizes.iter().product();
        every_type!(check_coordinates(&pattern[..numel], &sizes, extra_columns));
    }
}

#[test]
fn large_inputs_run_in_parallel_chunks_and_match() {
    // 3M elements: above the parallel threshold, so the default task counts split them.
    let n = 3_000_000usize;
    let data: Vec<u8> = (0..n)
        .map(|i| ((i.wrapping_mul(2654435761) >> 7) % 3 == 0) as u8)
        .collect();
    let shape = [3, 1000, 1000];
    let got = nonzero_core::argwhere(&data, &shape).unwrap();
    let (nnz, expected) =
        reference::argwhere_strided(&shape, &[1_000_000, 1000, 1], |i| data[i] != 0);
    assert_eq!((got.nnz, got.rank), (nnz, 3));
    assert_eq!(got.data, expected);

    let mask: Vec<bool> = data.iter().map(|&d| d != 0).collect();
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let (shape_y, y) = nonzero_core::mask::boolean_mask(&x, &shape, &mask, &shape, &Rayon).unwrap();
    let (expected_shape, expected) = reference::boolean_mask(&x, &shape, &mask, &shape);
    assert_eq!((shape_y, y), (expected_shape, expected));
    // A short mask over large slices still splits into chunks.
    let rows: Vec<bool> = (0..3000).map(|i| i % 3 != 1).collect();
    let (shape_y, y) =
        nonzero_core::mask::boolean_mask(&x, &[3000, 1000], &rows, &[3000], &Rayon).unwrap();
    let (expected_shape, expected) = reference::boolean_mask(&x, &[3000, 1000], &rows, &[3000]);
    assert_eq!((shape_y, y), (expected_shape, expected));

    let mut count = [0u32];
    let mut coords = vec![u32::MAX; n * 3];
    coordinates_for_onnx(&data[..], &shape, 3, &mut count, &mut coords, &Rayon).unwrap();
    let (expected_count, expected) =
        reference::nonzero_coordinates_zero_filled(&shape, 3, |i| data[i] != 0);
    assert_eq!(count[0], expected_count);
    assert!(coords == expected, "coordinates differ from the reference");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn instruction_set_in_use() {
    let set = nonzero_core::instruction_set();
    eprintln!("kernel loops use: {set}");
    match std::env::var("NONZERO_SIMD").as_deref() {
        Ok("baseline") => assert!(set.starts_with("x86-64 baseline"), "{set}"),
        Ok("avx2") if std::is_x86_feature_detected!("avx2") => assert_eq!(set, "AVX2"),
        _ => {}
    }
}
