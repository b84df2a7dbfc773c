//! The conformance pack: many single-node NonZero cases in ONNX test-case layout, with expected
//! outputs computed by `nonzero_core::reference` (the naive oracle, never the fast kernel).
//!
//! Coverage: every type at opsets 9 and 13 (bfloat16 at 13 only) over shapes of rank 0 to 8,
//! zero-size dimensions, scalars, densities 0/1/50/100 %, special values (-0.0, NaN, ±inf,
//! subnormals, f16/bf16 bit patterns, complex with one part zero, empty/" "/"\0" strings, integer
//! extremes), and large inputs (one ~2M-element case by default, more with `large`).
//! Everything is deterministic: each case's PRNG is seeded from its name.

use crate::model::{dims, nonzero_model};
pub use crate::values::{random_data, special_values};
use crate::{Tensor, TensorData, TestCase};
use anyhow::{Context, Result};
use nonzero_core::DataType;
use rand::rngs::StdRng;
use rand::SeedableRng;
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
