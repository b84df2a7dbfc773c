//! The conformance pack: many single-node NonZero cases in ONNX test-case layout, with expected
//! outputs computed by `nonzero_core::reference` (the naive oracle, never the fast kernel).
//!
//! Coverage: every type at opsets 9 and 13 (bfloat16 at 13 only) over shapes of rank 0 to 8,
//! zero-size dimensions, scalars, densities 0/1/50/100 %, special values (-0.0, NaN, ±inf,
//! subnormals, f16/bf16 bit patterns, complex with one part zero, empty/" "/"\0" strings, integer
//! extremes), and large inputs (one ~2M-element case by default, more with `large`).
//! Everything is deterministic: each case's PRNG is seeded from its name.

use crate::model::{dims, nonzero_model};
use crate::{Tensor, TensorData, TestCase};
use anyhow::{Context, Result};
use nonzero_core::{bf16, f16, Complex32, Complex64, DataType};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

/// How a case's input values are made.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Seeded random values, each non-zero with probability `density`.
    Random { density: f64 },
    /// Exactly these values.
    Explicit(TensorData),
}

/// One case of the pack (the input is built on demand, so large cases cost nothing until written).
#[derive(Debug, Clone, PartialEq)]
pub struct CaseSpec {
    pub name: String,
    pub dtype: DataType,
    pub shape: Vec<usize>,
    pub opset: i64,
    pub values: Values,
}

/// One line of the manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestEntry {
    pub name: String,
    pub dtype: DataType,
    pub shape: Vec<usize>,
    pub opset: i64,
    pub nnz: usize,
}

/// What [`write_pack`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct PackSummary {
    pub entries: Vec<ManifestEntry>,
    pub bytes: u64,
}

fn seed_of(name: &str) -> u64 {
    // FNV-1a: stable across runs and platforms.
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

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

impl CaseSpec {
    fn random(dtype: DataType, shape: &[usize], opset: i64, density: f64, tag: &str) -> CaseSpec {
        let shape_s = if shape.is_empty() {
            "scalar".to_string()
        } else {
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("x")
        };
        let pct = (density * 100.0).round() as u32;
        CaseSpec {
            name: format!("{}_op{opset}_{shape_s}_d{pct}{tag}", dtype.onnx_name()),
            dtype,
            shape: shape.to_vec(),
            opset,
            values: Values::Random { density },
        }
    }

    fn explicit(name: &str, opset: i64, shape: &[usize], data: TensorData) -> CaseSpec {
        CaseSpec {
            name: format!("{}_op{opset}_{name}", data.dtype().onnx_name()),
            dtype: data.dtype(),
            shape: shape.to_vec(),
            opset,
            values: Values::Explicit(data),
        }
    }

    /// Number of input elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The input tensor (seeded from the case name).
    pub fn input(&self) -> Tensor {
        match &self.values {
            Values::Explicit(d) => Tensor::new(self.shape.clone(), d.clone()),
            Values::Random { density } => {
                let mut rng = StdRng::seed_from_u64(seed_of(&self.name));
                Tensor::new(
                    self.shape.clone(),
                    random_data(self.dtype, self.numel(), *density, &mut rng),
                )
            }
        }
    }

    /// The model, the input `x` and the expected output `y` from the reference oracle.
    pub fn test_case(&self) -> TestCase {
        let x = self.input();
        let y = x.nonzero_reference();
        TestCase::with_graph_names(
            nonzero_model(self.dtype, &dims(&self.shape), self.opset),
            vec![x],
            vec![y],
        )
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

/// Every case of the pack; the large ones (millions of elements) only with `large`, except one
/// ~2M-element float case that is always there.
pub fn case_specs(large: bool) -> Vec<CaseSpec> {
    let mut specs = vec![];
    let shapes: &[&[usize]] = &[
        &[],
        &[1],
        &[7],
        &[3, 4],
        &[2, 3, 4],
        &[0],
        &[2, 0, 3],
        &[1, 2, 1, 3, 1],
        &[2, 1, 2, 1, 2, 1, 2, 3],
    ];
    for dtype in DataType::ALL {
        let opsets: &[i64] = if dtype.since_opset() > 9 {
            &[13]
        } else {
            &[9, 13]
        };
        for &opset in opsets {
            for shape in shapes {
                specs.push(CaseSpec::random(dtype, shape, opset, 0.5, ""));
            }
            // Scalars: one zero, one non-zero (expected shape [0, nnz]).
            specs.push(CaseSpec::random(dtype, &[], opset, 0.0, ""));
            specs.push(CaseSpec::random(dtype, &[], opset, 1.0, ""));
        }
        // Densities on a 2-D block at opset 13.
        for density in [0.0, 0.01, 1.0] {
            specs.push(CaseSpec::random(dtype, &[64, 33], 13, density, ""));
        }
        specs.push(CaseSpec::random(dtype, &[64, 33], 13, 0.5, ""));
    }
    // Ranks 0 to 8 (float and bool), with and without a zero-size dimension.
    for dtype in [DataType::Float32, DataType::Bool] {
        for rank in 0..=8usize {
            let shape: Vec<usize> = (0..rank).map(|d| [3, 2, 4, 1, 2, 3, 1, 2][d]).collect();
            specs.push(CaseSpec::random(
                dtype,
                &shape,
                13,
                0.5,
                &format!("_rank{rank}"),
            ));
            if rank > 0 {
                let mut z = shape.clone();
                z[rank / 2] = 0;
                specs.push(CaseSpec::random(
                    dtype,
                    &z,
                    13,
                    0.5,
                    &format!("_rank{rank}"),
                ));
            }
        }
    }
    // Special values, at both opsets where the type allows.
    for (tag, data) in special_values() {
        let dtype = data.dtype();
        for opset in [9, 13] {
            if opset >= dtype.since_opset() {
                let n = data.len();
                specs.push(CaseSpec::explicit(tag, opset, &[n], data.clone()));
                if n.is_multiple_of(2) {
                    specs.push(CaseSpec::explicit(
                        &format!("{tag}_2d"),
                        opset,
                        &[2, n / 2],
                        data.clone(),
                    ));
                }
            }
        }
    }
    // Large inputs.
    specs.push(CaseSpec::random(
        DataType::Float32,
        &[2048, 1024],
        13,
        0.5,
        "_large",
    ));
    if large {
        specs.push(CaseSpec::random(
            DataType::Float32,
            &[4, 1024, 1024],
            13,
            0.5,
            "_large",
        ));
        specs.push(CaseSpec::random(
            DataType::Bool,
            &[8 * 1024 * 1024],
            13,
            0.1,
            "_large",
        ));
        specs.push(CaseSpec::random(
            DataType::Int8,
            &[3, 1000, 1000],
            9,
            0.5,
            "_large",
        ));
        specs.push(CaseSpec::random(
            DataType::Float16,
            &[1536, 1024],
            13,
            0.01,
            "_large",
        ));
    }
    specs
}

fn dir_size(path: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = fs::read_dir(path) {
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => total += dir_size(&e.path()),
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The manifest as JSON: `{"cases": [{"name", "dtype", "shape", "opset", "nnz"}, ...]}`.
pub fn manifest_json(entries: &[ManifestEntry]) -> String {
    let mut s = String::from("{\n  \"cases\": [\n");
    for (i, e) in entries.iter().enumerate() {
        let shape = e
            .shape
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        let _ = write!(
            s,
            "    {{\"name\": {}, \"dtype\": {}, \"shape\": [{shape}], \"opset\": {}, \"nnz\": {}}}",
            json_str(&e.name),
            json_str(e.dtype.onnx_name()),
            e.opset,
            e.nnz
        );
        s.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
    }
    s.push_str("  ]\n}\n");
    s
}

/// Writes the cases for which `keep` holds into `out/<case name>/` and `out/manifest.json`.
pub fn write_pack(
    out: &Path,
    large: bool,
    keep: impl Fn(&CaseSpec) -> bool,
) -> Result<PackSummary> {
    fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut entries = vec![];
    for spec in case_specs(large).into_iter().filter(|s| keep(s)) {
        let case = spec.test_case();
        let nnz = case.data_sets[0].outputs[0].1.shape[1];
        case.write(&out.join(&spec.name))
            .with_context(|| format!("writing case {}", spec.name))?;
        entries.push(ManifestEntry {
            name: spec.name,
            dtype: spec.dtype,
            shape: spec.shape,
            opset: spec.opset,
            nnz,
        });
    }
    fs::write(out.join("manifest.json"), manifest_json(&entries))?;
    Ok(PackSummary {
        entries,
        bytes: dir_size(out),
    })
}
