//! Loading ONNX Runtime (once per process), finding the NonZero library, and making sessions.

use anyhow::{anyhow, bail, Result};
use ort::session::Session;
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
        let env = builder
            .with_name("nonzero")
            .build()
            .map_err(|e| format!("creating the ORT environment: {e}"))?;
        // ONNX Runtime's own log lines (a failed node's error, with colour codes) would come
        // between the runner's lines; every error reaches the report as a status anyway.
        // `ORT_LOG=warning` (ort's variable) brings them back.
        if std::env::var_os("ORT_LOG").is_none() {
            env.set_log_level(ort::logging::LogLevel::Fatal);
        }
        Ok(env)
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
