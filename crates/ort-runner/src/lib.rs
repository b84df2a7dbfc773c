//! Running models through ONNX Runtime, loaded at run time with `ort`'s `load-dynamic` feature.
//!
//! `ort` is built with `api-17`, so it asks the host for ORT API version 17 and works with ONNX
//! Runtime 1.17 and later. Sessions are made with or without the NonZero custom-op library
//! (`SessionBuilder::with_operator_library`); without it, ORT's built-in NonZero runs.

use anyhow::{anyhow, bail, Context, Result};
use nonzero_core::{dispatch_element, DataType};
use nonzero_harness::testcase::{io_names, read_model};
use nonzero_harness::{Tensor, TensorData, TestCase};
use nonzero_proto::onnx::{
    tensor_shape_proto::dimension::Value as DimValue, type_proto, ModelProto,
};
use ort::session::Session;
use ort::value::{DynValue, Tensor as OrtTensor, ValueRef};
use prost::Message;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static ENV: OnceLock<std::result::Result<ort::environment::Environment, String>> = OnceLock::new();

/// The ONNX Runtime shared library to load: `explicit`, else `$ORT_DYLIB_PATH`.
pub fn ort_dylib_path(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    match std::env::var_os("ORT_DYLIB_PATH") {
        Some(p) if !p.is_empty() => Ok(PathBuf::from(p)),
        _ => bail!("no ONNX Runtime library: pass --ort-dylib PATH or set ORT_DYLIB_PATH to libonnxruntime.so"),
    }
}

/// Loads ONNX Runtime once per process (later calls reuse the first environment).
pub fn init_ort(dylib: Option<&Path>) -> Result<ort::environment::Environment> {
    if let Some(env) = ENV.get() {
        return env.clone().map_err(|e| anyhow!(e));
    }
    let path = ort_dylib_path(dylib)?;
    let env = ENV.get_or_init(|| {
        let builder =
            ort::init_from(&path).map_err(|e| format!("loading {}: {e}", path.display()))?;
        builder
            .with_name("nonzero")
            .build()
            .map_err(|e| format!("creating the ORT environment: {e}"))
    });
    env.clone().map_err(|e| anyhow!(e))
}

/// The NonZero custom-op library: `$NONZERO_ORT_LIB`, else `target/release/libnonzero_ort.so` of
/// this workspace (found from the running executable, then from this crate's source location).
pub fn default_library() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NONZERO_ORT_LIB").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let name = "libnonzero_ort.so";
    let mut candidates = vec![];
    if let Ok(exe) = std::env::current_exe() {
        // target/{debug,release}[/deps]/exe -> target/release/lib
        for anc in exe.ancestors().skip(1).take(3) {
            if anc.file_name().is_some_and(|n| n == "target") {
                candidates.push(anc.join("release").join(name));
            }
        }
    }
    candidates.push(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../target/release")
            .join(name),
    );
    candidates.into_iter().find(|p| p.is_file())
}

/// Creates a session for a serialized model, with the custom-op `library` when given.
pub fn session(model: &[u8], library: Option<&Path>, threads: usize) -> Result<Session> {
    let env = ENV
        .get()
        .and_then(|e| e.as_ref().ok())
        .ok_or_else(|| anyhow!("call init_ort first"))?;
    let mut builder = Session::builder(env).map_err(|e| anyhow!("{e}"))?;
    if threads > 0 {
        builder = builder
            .with_intra_threads(threads)
            .map_err(|e| anyhow!("{e}"))?;
    }
    if let Some(lib) = library {
        builder = builder
            .with_operator_library(lib)
            .map_err(|e| anyhow!("registering custom-op library {}: {e}", lib.display()))?;
    }
    builder
        .commit_from_memory(model)
        .map_err(|e| anyhow!("creating the session: {e}"))
}

/// Converts a tensor to an ORT value.
pub fn to_value(t: &Tensor) -> Result<DynValue> {
    let shape: Vec<i64> = t.shape.iter().map(|&d| d as i64).collect();
    // `values` is `Some` for the type `dispatch_element!` binds for the tensor's dtype.
    let v = dispatch_element!(t.dtype(), T => {
        let values = t.data.values::<T>().unwrap_or_default().to_vec();
        OrtTensor::from_array((shape, values)).map(|x| x.into_dyn())
    }, String => {
        let v = t.data.values::<String>().unwrap_or_default();
        if v.iter().any(|s| s.contains('\0')) {
            bail!("string input holds a NUL character, which ORT's C API (FillStringTensor, C strings) cannot carry");
        }
        OrtTensor::from_string_array((shape, v)).map(|x| x.into_dyn())
    });
    v.map_err(|e| anyhow!("creating an ORT tensor: {e}"))
}

/// Converts an ORT tensor value back.
pub fn from_value(v: &ValueRef<'_>) -> Result<Tensor> {
    let ty = v
        .dtype()
        .tensor_type()
        .ok_or_else(|| anyhow!("output is not a tensor: {:?}", v.dtype()))?;
    let dtype = DataType::from_onnx_code(ort::sys::ONNXTensorElementDataType::from(ty) as i32)
        .ok_or_else(|| anyhow!("unsupported output element type {ty:?}"))?;
    let (shape, data) = dispatch_element!(
        dtype,
        T => {
            let (shape, data) = v.try_extract_tensor::<T>().map_err(|e| anyhow!("{e}"))?;
            (
                shape.iter().map(|&d| d as usize).collect::<Vec<_>>(),
                TensorData::from(data.to_vec()),
            )
        },
        String => {
            let (shape, data) = v.try_extract_strings().map_err(|e| anyhow!("{e}"))?;
            (
                shape.iter().map(|&d| d as usize).collect(),
                TensorData::String(data),
            )
        },
    );
    // `Tensor::new` would panic on an inconsistent pair; ORT's scalar NonZero gives [1, nnz].
    let n: usize = shape.iter().product();
    if n != data.len() {
        bail!(
            "output shape {shape:?} does not match its {} values",
            data.len()
        );
    }
    Ok(Tensor { shape, data })
}

/// Runs `session` on named inputs; returns the outputs in the session's output order.
pub fn run(session: &mut Session, inputs: &[(String, Tensor)]) -> Result<Vec<(String, Tensor)>> {
    let values = inputs
        .iter()
        .map(|(n, t)| {
            Ok((
                n.clone(),
                to_value(t).with_context(|| format!("input {n}"))?,
            ))
        })
        .collect::<Result<Vec<(String, DynValue)>>>()?;
    let outputs = session
        .run(values)
        .map_err(|e| anyhow!("run failed: {e}"))?;
    outputs
        .iter()
        .map(|(name, v)| {
            Ok((
                name.to_string(),
                from_value(&v).with_context(|| format!("output {name}"))?,
            ))
        })
        .collect()
}

/// The outcome for one model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Every output equals the expected one (bit-exact).
    Match,
    /// At least one output differs; the text says which.
    Mismatch(String),
    /// No expected output: ran, and either matched ORT's built-in kernel (`Some(true)`), differed
    /// from it (`Some(false)`) or the built-in could not run the model (`None`).
    NoExpected {
        builtin_equal: Option<bool>,
        note: String,
    },
    /// The model could not be run.
    Error(String),
    /// Not runnable through this path, for a stated reason (e.g. NUL characters in string inputs).
    Skipped(String),
}

impl Status {
    /// `true` for outcomes that should fail the command.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            Status::Mismatch(_)
                | Status::Error(_)
                | Status::NoExpected {
                    builtin_equal: Some(false),
                    ..
                }
        )
    }
}

/// What running one case (or bare model) produced.
#[derive(Debug, Clone)]
pub struct Report {
    pub name: String,
    pub inputs: Vec<(String, Tensor)>,
    pub outputs: Vec<(String, Tensor)>,
    pub expected: Vec<(String, Tensor)>,
    pub status: Status,
}

/// Compares outputs with expected ones by name (or position), bit-exact.
pub fn compare(outputs: &[(String, Tensor)], expected: &[(String, Tensor)]) -> Status {
    for (i, (name, want)) in expected.iter().enumerate() {
        let got = outputs
            .iter()
            .find(|(n, _)| n == name)
            .or_else(|| outputs.get(i));
        match got {
            None => return Status::Mismatch(format!("missing output {name}")),
            Some((_, got)) if !got.same_as(want) => {
                return Status::Mismatch(format!(
                    "{name}: got {}, expected {}",
                    got.describe(8),
                    want.describe(8)
                ))
            }
            _ => {}
        }
    }
    Status::Match
}

/// Settings for [`run_path`].
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The NonZero custom-op library; `None` runs ORT's built-in kernel.
    pub library: Option<PathBuf>,
    /// Intra-op threads (0: ORT's default).
    pub threads: usize,
    /// Size used for symbolic dimensions of bare models' inputs.
    pub symbolic_size: usize,
}

/// Runs a test case read from disk (first data set) and compares with its expected outputs.
pub fn run_case(name: &str, case: &TestCase, opts: &RunOptions) -> Report {
    let set = case.data_sets.first().cloned().unwrap_or_default();
    let mut report = Report {
        name: name.to_string(),
        inputs: set.inputs,
        outputs: vec![],
        expected: set.outputs,
        status: Status::Match,
    };
    let result = (|| -> Result<Vec<(String, Tensor)>> {
        let mut s = session(
            &case.model.encode_to_vec(),
            opts.library.as_deref(),
            opts.threads,
        )?;
        run(&mut s, &report.inputs)
    })();
    report.status = match result {
        Ok(outputs) => {
            report.outputs = outputs;
            if report.expected.is_empty() {
                Status::NoExpected {
                    builtin_equal: None,
                    note: "no expected outputs in the case".into(),
                }
            } else {
                compare(&report.outputs, &report.expected)
            }
        }
        Err(e) if format!("{e:#}").contains("NUL character") => Status::Skipped(format!("{e:#}")),
        // ONNX Runtime has no complex tensor type ("MLDataType for: tensor(complex64) is not
        // currently registered or supported"), so no custom op can receive one. If a future
        // release accepts the model, the case is compared like any other.
        Err(e) if has_complex_input(&report.inputs) && format!("{e:#}").contains("complex") => {
            Status::Skipped(format!(
                "ONNX Runtime cannot represent complex tensors: {e:#}"
            ))
        }
        Err(e) => Status::Error(format!("{e:#}")),
    };
    report
}

fn has_complex_input(inputs: &[(String, Tensor)]) -> bool {
    inputs
        .iter()
        .any(|(_, t)| matches!(t.data, TensorData::Complex64(_) | TensorData::Complex128(_)))
}

/// Seeded random inputs for a model's declared inputs (symbolic dimensions get `symbolic_size`).
pub fn random_inputs(
    model: &ModelProto,
    symbolic_size: usize,
    seed: u64,
) -> Result<Vec<(String, Tensor)>> {
    let (names, _) = io_names(model);
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| anyhow!("model has no graph"))?;
    let mut rng = StdRng::seed_from_u64(seed);
    names
        .iter()
        .map(|name| {
            let vi = graph
                .input
                .iter()
                .find(|v| v.name() == name)
                .expect("name from the graph");
            let Some(type_proto::Value::TensorType(tt)) =
                vi.r#type.as_ref().and_then(|t| t.value.as_ref())
            else {
                bail!("input {name} is not a tensor");
            };
            let code = tt.elem_type.unwrap_or(0);
            let dtype = DataType::from_onnx_code(code)
                .ok_or_else(|| anyhow!("input {name}: unsupported element type {code}"))?;
            let shape: Vec<usize> = tt
                .shape
                .as_ref()
                .map(|s| {
                    s.dim
                        .iter()
                        .map(|d| match d.value {
                            Some(DimValue::DimValue(v)) if v >= 0 => v as usize,
                            _ => symbolic_size,
                        })
                        .collect()
                })
                .unwrap_or_default();
            let n = shape.iter().product();
            Ok((
                name.clone(),
                Tensor::new(
                    shape,
                    nonzero_harness::pack::random_data(dtype, n, 0.5, &mut rng),
                ),
            ))
        })
        .collect()
}

/// ORT's built-in NonZero returns `[1, nnz]` (all zeros) for a scalar input where ONNX says
/// `[0, nnz]`: `true` when that is the only difference between `ours` and `builtin`.
fn scalar_nonzero_difference(ours: &[(String, Tensor)], builtin: &[(String, Tensor)]) -> bool {
    let mut any = false;
    for ((_, a), (_, b)) in ours.iter().zip(builtin) {
        if a.same_as(b) {
            continue;
        }
        let zeros = matches!(&b.data, TensorData::Int64(v) if v.iter().all(|&x| x == 0));
        if a.shape.len() == 2 && a.shape[0] == 0 && b.shape == [1, a.shape[1]] && zeros {
            any = true;
        } else {
            return false;
        }
    }
    any && ours.len() == builtin.len()
}

/// Runs a bare model with random inputs, and compares with ORT's built-in kernel when that runs.
pub fn run_bare_model(path: &Path, opts: &RunOptions) -> Report {
    let name = path.display().to_string();
    let mut report = Report {
        name,
        inputs: vec![],
        outputs: vec![],
        expected: vec![],
        status: Status::Match,
    };
    let result = (|| -> Result<Status> {
        let model = read_model(path)?;
        let bytes = model.encode_to_vec();
        report.inputs = random_inputs(&model, opts.symbolic_size.max(1), 0x5eed)?;
        let mut ours = session(&bytes, opts.library.as_deref(), opts.threads)?;
        report.outputs = run(&mut ours, &report.inputs)?;
        if opts.library.is_none() {
            return Ok(Status::NoExpected {
                builtin_equal: None,
                note: "ran with the built-in kernel only".into(),
            });
        }
        let builtin =
            session(&bytes, None, opts.threads).and_then(|mut s| run(&mut s, &report.inputs));
        Ok(match builtin {
            Err(e) => Status::NoExpected {
                builtin_equal: None,
                note: format!("built-in ORT cannot run it: {e:#}"),
            },
            Ok(b) if scalar_nonzero_difference(&report.outputs, &b) => Status::NoExpected {
                builtin_equal: None,
                note: "ORT's built-in kernel gives [1, nnz] for a scalar input, ours the ONNX text's [0, nnz] (known difference)".into(),
            },
            Ok(b) => match compare(&report.outputs, &b) {
                Status::Match => Status::NoExpected {
                    builtin_equal: Some(true),
                    note: "equals ORT's built-in kernel".into(),
                },
                Status::Mismatch(m) => Status::NoExpected {
                    builtin_equal: Some(false),
                    note: format!("differs from ORT's built-in kernel: {m}"),
                },
                other => other,
            },
        })
    })();
    report.status = result.unwrap_or_else(|e| Status::Error(format!("{e:#}")));
    report
}

/// Runs a case directory (`model.onnx` + `test_data_set_*`) or a bare `.onnx` file.
pub fn run_path(path: &Path, opts: &RunOptions) -> Report {
    if path.is_dir() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_else(|| path.display().to_string());
        match TestCase::read(path) {
            Ok(case) if case.data_sets.is_empty() => run_bare_model(&path.join("model.onnx"), opts),
            Ok(case) => run_case(&name, &case, opts),
            Err(e) => Report {
                name,
                inputs: vec![],
                outputs: vec![],
                expected: vec![],
                status: Status::Error(format!("{e:#}")),
            },
        }
    } else {
        run_bare_model(path, opts)
    }
}

/// Case directories under `root` (directories holding `model.onnx`), sorted; `root` itself if
/// it is one.
pub fn case_dirs(root: &Path) -> Result<Vec<PathBuf>> {
    if root.join("model.onnx").is_file() {
        return Ok(vec![root.to_path_buf()]);
    }
    let mut out = vec![];
    for e in std::fs::read_dir(root).with_context(|| format!("reading {}", root.display()))? {
        let p = e?.path();
        if p.join("model.onnx").is_file() {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}
