//! Running a test case, a bare model or a directory of them, and walking a folder for cases.

use crate::report::scalar_nonzero_difference;
use crate::{compare, file_inputs, random_inputs, run, session, Report, Status};
use anyhow::{Context, Result};
use nonzero_harness::testcase::read_model;
use nonzero_harness::{Tensor, TensorData, TestCase};
use prost::Message;
use std::path::{Path, PathBuf};

/// Settings for [`run_path`].
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// The NonZero custom-op library; `None` runs ORT's built-in kernel.
    pub library: Option<PathBuf>,
    /// Intra-op threads (0: ORT's default).
    pub threads: usize,
    /// Size used for symbolic dimensions of bare models' inputs.
    pub symbolic_size: usize,
    /// Bare models' inputs from this `.npz` (`np.savez`) instead of seeded random ones.
    pub inputs: Option<PathBuf>,
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
        report.inputs = match &opts.inputs {
            Some(file) => file_inputs(&model, file)?,
            None => random_inputs(&model, opts.symbolic_size.max(1), 0x5eed)?,
        };
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
