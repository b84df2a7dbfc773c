//! Shared by the CLI's integration tests: the `nonzero` binary run in a directory, a real model,
//! the names a directory holds.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A small real export: `x[mask]`, TorchScript (inputs `input_0` [n, 5, 3], `input_1` [n, 5]).
pub fn model() -> Vec<u8> {
    std::fs::read(root().join("models/exported/x_mask_ts17.onnx")).unwrap()
}

/// `nonzero ARGS` run in `dir`.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_nonzero"));
    c.args(args).current_dir(dir);
    c
}

pub fn nonzero(dir: &Path, args: &[&str]) -> Output {
    command(dir, args).output().unwrap()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The names in `dir`, sorted (temporary files included: they start with a dot).
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// ONNX Runtime's library for the tests that run models: `ORT_DYLIB_PATH`, else the
/// onnxruntime wheel in the workspace's `.venv`. Missing, the test fails with one line naming
/// `scripts/setup`, unless `NONZERO_ORT_ALLOW_SKIP=1` (ignored when CI=true): then `None`.
pub fn ort_dylib() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let lib = root().join(".venv/lib");
    let found = std::fs::read_dir(&lib).ok().and_then(|d| {
        d.filter_map(|e| e.ok()).find_map(|e| {
            let capi = e.path().join("site-packages/onnxruntime/capi");
            let mut libs: Vec<PathBuf> = std::fs::read_dir(capi)
                .ok()?
                .filter_map(|f| f.ok().map(|f| f.path()))
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("libonnxruntime.so"))
                })
                .collect();
            libs.sort();
            libs.pop()
        })
    });
    if found.is_some() {
        return found;
    }
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let allow = std::env::var("NONZERO_ORT_ALLOW_SKIP").is_ok_and(|v| v == "1");
    let why = "ONNX Runtime not found (ORT_DYLIB_PATH is unset and .venv has no onnxruntime wheel)";
    if ci || !allow {
        panic!("{why}: run `scripts/setup`, which makes .venv, or set NONZERO_ORT_ALLOW_SKIP=1 (ignored when CI=true) to skip");
    }
    eprintln!("SKIPPED: {why}; NONZERO_ORT_ALLOW_SKIP=1 is set");
    None
}
