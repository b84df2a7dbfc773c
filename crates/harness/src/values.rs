//! The element values of the conformance pack: random tensors of a given density and the special
//! values of each type (signed zeros, NaN, subnormals, extremes). Reached through [`crate::pack`].

use crate::TensorData;
use nonzero_core::{bf16, f16, Complex32, Complex64, DataType};
use rand::rngs::StdRng;
use rand::Rng;

/// Random values of `dtype`, each non-zero with probability `density` (zeros include -0.0).
pub fn random_data(dtype: DataType, n: usize, density: f64, rng: &mut StdRng) -> TensorData {
    macro_rules! ints {
        ($variant:ident, $t:ty) => {
            TensorData::$variant(
                (0..n)
                    .map(|_| {
                        if rng.random_bool(density) {
                            loop {
                                let v: $t = rng.random();
                                if v != 0 {
                                    break v;
                                }
                            }
                        } else {
                            0
                        }
                    })
                    .collect(),
            )
        };
    }
    // A non-zero float-ish magnitude in [0.001, 100), random sign; zeros are +0.0 or -0.0.
    let float = |rng: &mut StdRng| -> f64 {
        if rng.random_bool(density) {
            let m = rng.random_range(0.001..100.0);
            if rng.random_bool(0.5) {
                -m
            } else {
                m
            }
        } else if rng.random_bool(0.5) {
            -0.0
        } else {
            0.0
        }
    };
    match dtype {
        DataType::Bool => TensorData::Bool((0..n).map(|_| rng.random_bool(density)).collect()),
        DataType::Uint8 => ints!(Uint8, u8),
        DataType::Int8 => ints!(Int8, i8),
        DataType::Uint16 => ints!(Uint16, u16),
        DataType::Int16 => ints!(Int16, i16),
        DataType::Uint32 => ints!(Uint32, u32),
        DataType::Int32 => ints!(Int32, i32),
        DataType::Uint64 => ints!(Uint64, u64),
        DataType::Int64 => ints!(Int64, i64),
        DataType::Float16 => {
            TensorData::Float16((0..n).map(|_| f16::from_f64(float(rng))).collect())
        }
        DataType::Bfloat16 => {
            TensorData::Bfloat16((0..n).map(|_| bf16::from_f64(float(rng))).collect())
        }
        DataType::Float32 => TensorData::Float32((0..n).map(|_| float(rng) as f32).collect()),
        DataType::Float64 => TensorData::Float64((0..n).map(|_| float(rng)).collect()),
        DataType::Complex64 => TensorData::Complex64(
            (0..n)
                .map(|_| {
                    if rng.random_bool(density) {
                        // One part may be zero: still non-zero.
                        match rng.random_range(0..3) {
                            0 => Complex32::new(1.5, 0.0),
                            1 => Complex32::new(-0.0, -2.25),
                            _ => Complex32::new(rng.random_range(-9.0..9.0), 0.5),
                        }
                    } else {
                        Complex32::new(if rng.random_bool(0.5) { -0.0 } else { 0.0 }, 0.0)
                    }
                })
                .collect(),
        ),
        DataType::Complex128 => TensorData::Complex128(
            (0..n)
                .map(|_| {
                    if rng.random_bool(density) {
                        match rng.random_range(0..3) {
                            0 => Complex64::new(1.5, 0.0),
                            1 => Complex64::new(0.0, -2.25),
                            _ => Complex64::new(rng.random_range(-9.0..9.0), 0.5),
                        }
                    } else {
                        Complex64::new(0.0, if rng.random_bool(0.5) { -0.0 } else { 0.0 })
                    }
                })
                .collect(),
        ),
        DataType::String => TensorData::String(
            (0..n)
                .map(|_| {
                    if rng.random_bool(density) {
                        // No "\0" here: ORT's C API takes C strings, so random cases stay runnable
                        // through it; the explicit "specials" case holds "\0".
                        ["a", " ", "\t", "zero", "0", "\u{fc}ber"][rng.random_range(0..6)]
                            .to_string()
                    } else {
                        String::new()
                    }
                })
                .collect(),
        ),
    }
}

/// Special values per type: `(case suffix, data)`; every list holds zeros and non-zeros.
pub fn special_values() -> Vec<(&'static str, TensorData)> {
    let f16s = [
        0x0000u16, 0x8000, 0x0001, 0x8001, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0x03FF, 0x8000,
    ];
    let f32s = [
        0.0f32,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::MIN_POSITIVE,
        1.0,
        -0.0,
        0.0,
    ];
    let f64s = [
        0.0f64,
        -0.0,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::from_bits(1),
        -f64::from_bits(1),
        f64::MIN_POSITIVE,
        1.0,
        -0.0,
        0.0,
    ];
    vec![
        ("specials", TensorData::Float32(f32s.to_vec())),
        ("specials", TensorData::Float64(f64s.to_vec())),
        (
            "bitpatterns",
            TensorData::Float16(f16s.iter().map(|&b| f16::from_bits(b)).collect()),
        ),
        (
            "bitpatterns",
            TensorData::Bfloat16(f16s.iter().map(|&b| bf16::from_bits(b)).collect()),
        ),
        (
            "specials",
            TensorData::Complex64(vec![
                Complex32::new(0.0, 0.0),
                Complex32::new(-0.0, -0.0),
                Complex32::new(0.0, 1.0),
                Complex32::new(1.0, 0.0),
                Complex32::new(-0.0, f32::from_bits(1)),
                Complex32::new(f32::NAN, 0.0),
                Complex32::new(0.0, f32::NEG_INFINITY),
                Complex32::new(0.0, -0.0),
            ]),
        ),
        (
            "specials",
            TensorData::Complex128(vec![
                Complex64::new(0.0, 0.0),
                Complex64::new(-0.0, -0.0),
                Complex64::new(0.0, 1.0),
                Complex64::new(1.0, 0.0),
                Complex64::new(-0.0, f64::from_bits(1)),
                Complex64::new(f64::NAN, 0.0),
                Complex64::new(0.0, f64::NEG_INFINITY),
                Complex64::new(0.0, -0.0),
            ]),
        ),
        (
            "specials",
            TensorData::String(
                ["", " ", "\0", "a", "", "0", "false", ""]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            ),
        ),
        (
            "specials_no_nul",
            TensorData::String(
                ["", " ", "\t", "a", "", "0", "false", ""]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            ),
        ),
        (
            "specials",
            TensorData::Bool(vec![false, true, true, false, false, true, false, false]),
        ),
        (
            "extremes",
            TensorData::Int8(vec![0, i8::MIN, i8::MAX, -1, 1, 0, 0, 0]),
        ),
        (
            "extremes",
            TensorData::Uint8(vec![0, u8::MAX, 1, 0, 0x80, 0, 0, 0]),
        ),
        (
            "extremes",
            TensorData::Int16(vec![0, i16::MIN, i16::MAX, -1, 1, 0, 0, 0]),
        ),
        (
            "extremes",
            TensorData::Uint16(vec![0, u16::MAX, 1, 0, 0x8000, 0, 0, 0]),
        ),
        (
            "extremes",
            TensorData::Int32(vec![0, i32::MIN, i32::MAX, -1, 1, 0, 0, 0]),
        ),
        (
            "extremes",
            TensorData::Uint32(vec![0, u32::MAX, 1, 0, 0x8000_0000, 0, 0, 0]),
        ),
        (
            "extremes",
            TensorData::Int64(vec![0, i64::MIN, i64::MAX, -1, 1, 0, 0, 0]),
        ),
        (
            "extremes",
            TensorData::Uint64(vec![0, u64::MAX, 1, 0, 1 << 63, 0, 0, 0]),
        ),
    ]
}
