//! Loading ONNX Runtime (once per process), finding the NonZero library, and making sessions.

use anyhow::{anyhow, bail, Result};
use ort::session::Session;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

static ENV: OnceLock<std::result::Result<ort::environment::Environment, String>> = OnceLock::new();

/// The ONNX Runtime shared library to load: `explicit`, else `$ORT_DYLIB_PATH`, else the
/// onnxruntime wheel's in the project's own venvs (`.venv`, made by scripts/setup, then the
/// other `.venv*`), found from the running executable's `target` directory and from this
/// crate's source location. The error names where it looked and how to make it.
pub fn ort_dylib_path(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    venv_ort_dylib_in(&project_roots())
}

/// The first of `roots` whose venvs hold the onnxruntime wheel's library, or an error that
/// names where it looked and how to make one.
fn venv_ort_dylib_in(roots: &[PathBuf]) -> Result<PathBuf> {
    for root in roots {
        if let Some(lib) = venv_ort_dylib(root) {
            return Ok(lib);
        }
    }
    let looked: Vec<String> = roots
        .iter()
        .map(|r| {
            format!(
                "{}/.venv*/lib/python3*/site-packages/onnxruntime/capi/libonnxruntime.so*",
                r.display()
            )
        })
        .collect();
    let make = match roots.first() {
        Some(root) => format!("make it with `cd {} && scripts/setup`", root.display()),
        None => "make one with the project's `scripts/setup`".to_string(),
    };
    bail!(
        "no ONNX Runtime library: ORT_DYLIB_PATH is unset and no project venv has the onnxruntime wheel's libonnxruntime.so (looked for {}); {make} (or `. scripts/env.sh; venv .venv requirements/ort-1.31.txt`), or pass --ort-dylib PATH or set ORT_DYLIB_PATH to a libonnxruntime.so",
        if looked.is_empty() { "no project directory found".to_string() } else { looked.join(" and ") }
    )
}

/// The workspace directories this program may belong to: the one holding the running
/// executable's `target`, then the one this crate was built from, where they exist.
fn project_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = vec![];
    let mut add = |p: &Path| {
        if let Ok(p) = std::fs::canonicalize(p) {
            if p.join("Cargo.toml").is_file() && !roots.contains(&p) {
                roots.push(p);
            }
        }
    };
    if let Ok(exe) = std::env::current_exe() {
        for anc in exe.ancestors().skip(1).take(4) {
            if anc.file_name().is_some_and(|n| n == "target") {
                if let Some(root) = anc.parent() {
                    add(root);
                }
            }
        }
    }
    add(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."));
    roots
}

/// `libonnxruntime.so*` of the onnxruntime wheel in `root`'s `.venv`, else in another `.venv*`
/// (the newest name when a wheel has several).
fn venv_ort_dylib(root: &Path) -> Option<PathBuf> {
    let mut venvs: Vec<PathBuf> = std::fs::read_dir(root)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".venv"))
        .map(|e| e.path())
        .collect();
    venvs.sort_by_key(|v| {
        (
            v.file_name() != Some(std::ffi::OsStr::new(".venv")),
            v.clone(),
        )
    });
    let files_in = |dir: &Path| -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        found.sort();
        found
    };
    venvs.iter().find_map(|venv| {
        files_in(&venv.join("lib"))
            .iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("python"))
            })
            .filter_map(|lib| {
                let capi = lib.join("site-packages/onnxruntime/capi");
                files_in(&capi).into_iter().rev().find(|f| {
                    f.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("libonnxruntime.so"))
                })
            })
            .next()
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_projects_venvs_are_searched_and_the_error_says_where() {
        let root = std::env::temp_dir().join(format!("nonzero-venv-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        let e = venv_ort_dylib_in(std::slice::from_ref(&root)).unwrap_err();
        let r = root.display();
        assert_eq!(
            e.to_string(),
            format!("no ONNX Runtime library: ORT_DYLIB_PATH is unset and no project venv has the onnxruntime wheel's libonnxruntime.so (looked for {r}/.venv*/lib/python3*/site-packages/onnxruntime/capi/libonnxruntime.so*); make it with `cd {r} && scripts/setup` (or `. scripts/env.sh; venv .venv requirements/ort-1.31.txt`), or pass --ort-dylib PATH or set ORT_DYLIB_PATH to a libonnxruntime.so")
        );
        // .venv first, then the other .venv* in name order; the newest name in a wheel.
        let capi = |venv: &str| {
            let dir = root
                .join(venv)
                .join("lib/python3.11/site-packages/onnxruntime/capi");
            std::fs::create_dir_all(&dir).unwrap();
            dir
        };
        let static_capi = capi(".venv-static");
        std::fs::write(static_capi.join("libonnxruntime.so.1.31.1"), b"").unwrap();
        std::fs::write(
            capi(".venv-ort1.17").join("libonnxruntime_providers_shared.so"),
            b"",
        )
        .unwrap();
        let found = venv_ort_dylib_in(std::slice::from_ref(&root)).unwrap();
        assert_eq!(found, static_capi.join("libonnxruntime.so.1.31.1"));
        let main_capi = capi(".venv");
        for name in [
            "libonnxruntime.so",
            "libonnxruntime.so.1.31.1",
            "libonnxruntime_providers_shared.so",
        ] {
            std::fs::write(main_capi.join(name), b"").unwrap();
        }
        let found = venv_ort_dylib_in(std::slice::from_ref(&root)).unwrap();
        assert_eq!(found, main_capi.join("libonnxruntime.so.1.31.1"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
