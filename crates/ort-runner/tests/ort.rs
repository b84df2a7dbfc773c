//! Rust end to end: a real ONNX Runtime loaded by the `ort` crate (`load-dynamic`) with the real
//! libnonzero_ort.so (`NONZERO_ORT_LIB` or target/release/libnonzero_ort.so).
//!
//! ONNX Runtime is `ORT_DYLIB_PATH`, else the onnxruntime wheel in the workspace's `.venv`.
//! `scripts/test onnxruntime` (or `scripts/setup`) makes both. When one is missing, each test fails
//! with one line that says so, unless `NONZERO_ORT_ALLOW_SKIP=1` is set outside CI: then they skip,
//! as `NONZERO_GPU_ALLOW_SKIP` does for the GPU tests.

use nonzero_core::DataType;
use nonzero_harness::{bundled, model, Tensor, TensorData, TestCase};
use nonzero_ort_runner::{self as runner, RunOptions, Status};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// ONNX Runtime, loaded once; `None`: skip the test. Every test that calls this gets the same
/// outcome, so a missing runtime fails each of them with the same line, never a poisoned lock.
#[must_use]
fn ort_ready() -> Option<()> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        let dylib = match std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
            Some(path) => PathBuf::from(path),
            None => workspace_venv_ort().ok_or(
                "ONNX Runtime not found (ORT_DYLIB_PATH is unset and .venv has no onnxruntime wheel)",
            )?,
        };
        runner::init_ort(Some(&dylib))
            .map(drop)
            .map_err(|e| format!("ONNX Runtime did not load: {e:#}"))
    });
    loaded.clone().map_or_else(unavailable, Some)
}

/// libnonzero_ort.so (release build); `None`: skip the test.
#[must_use]
fn library_ready() -> Option<RunOptions> {
    match runner::default_library() {
        Some(library) => Some(RunOptions {
            library: Some(library),
            ..Default::default()
        }),
        None => unavailable(
            "libnonzero_ort.so not found (no NONZERO_ORT_LIB, no target/release build)".into(),
        ),
    }
}

/// The one line a missing prerequisite fails with, or a skip where `NONZERO_ORT_ALLOW_SKIP=1`
/// allows one (never under CI=true).
fn unavailable<T>(why: String) -> Option<T> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let allow = std::env::var("NONZERO_ORT_ALLOW_SKIP").is_ok_and(|v| v == "1");
    if ci || !allow {
        panic!(
            "{why}: run `scripts/test onnxruntime`, which provides it, \
             or set NONZERO_ORT_ALLOW_SKIP=1 (ignored when CI=true) to skip"
        );
    }
    eprintln!("SKIPPED: {why}; NONZERO_ORT_ALLOW_SKIP=1 is set");
    None
}

/// libonnxruntime.so in the workspace's `.venv` (made by scripts/setup), as scripts/env.sh's
/// `ort_dylib` finds it: the last `libonnxruntime.so*` in the wheel's `capi/` folder.
fn workspace_venv_ort() -> Option<PathBuf> {
    let venv_lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/lib");
    let mut found: Vec<PathBuf> = std::fs::read_dir(venv_lib)
        .ok()?
        .flatten()
        .map(|python| python.path().join("site-packages/onnxruntime/capi"))
        .filter_map(|capi| std::fs::read_dir(capi).ok())
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libonnxruntime.so"))
        })
        .collect();
    found.sort();
    found.pop()
}

#[test]
fn builtin_runs_the_backend_example() {
    let Some(()) = ort_ready() else { return };
    let r = runner::run_case(
        "example",
        &bundled::nonzero_example(),
        &RunOptions::default(),
    );
    assert_eq!(r.status, Status::Match, "{r:?}");
    assert_eq!(
        r.outputs[0].1,
        Tensor::new(vec![2, 3], TensorData::Int64(vec![0, 1, 1, 0, 0, 1]))
    );
}

#[test]
fn library_runs_every_bundled_model() {
    let (Some(()), Some(opts)) = (ort_ready(), library_ready()) else {
        return;
    };
    for (name, case) in bundled::bundled_models() {
        let r = runner::run_case(name, &case, &opts);
        assert_eq!(r.status, Status::Match, "{name}: {:?}", r.status);
    }
}

/// int8 is a NonZero type ONNX Runtime's built-in kernel lacks: the model fails without the
/// library and gives the exact coordinates with it, so the library's kernel is what ran.
#[test]
fn our_kernel_is_the_one_that_runs() {
    let (Some(()), Some(opts)) = (ort_ready(), library_ready()) else {
        return;
    };
    let input = Tensor::new(vec![2, 3], TensorData::Int8(vec![0, -1, 0, 5, 0, i8::MIN]));
    let model = model::nonzero_model(
        DataType::Int8,
        &[model::Dim::Value(2), model::Dim::Value(3)],
        13,
    );
    let mut builtin = runner::session(&prost::Message::encode_to_vec(&model), None, 1)
        .and_then(|mut s| runner::run(&mut s, &[("x".to_string(), input.clone())]));
    assert!(
        builtin.is_err(),
        "ONNX Runtime's built-in NonZero unexpectedly ran int8: {:?}",
        builtin.as_mut().ok()
    );
    let case = TestCase::new(
        model,
        vec![("x".into(), input)],
        vec![(
            "y".into(),
            Tensor::new(vec![2, 3], TensorData::Int64(vec![0, 1, 1, 1, 0, 2])),
        )],
    );
    let r = runner::run_case("int8", &case, &opts);
    assert_eq!(r.status, Status::Match, "{:?}", r.status);
}
