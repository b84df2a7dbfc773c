//! `nonzero run --load-unload CYCLES` (issue 39): the loop's summary line, here on Linux; the
//! platforms stage runs it under Wine with the Windows DLL, the asan stage under LeakSanitizer.

mod common;

use common::{nonzero, root, stderr, stdout};
use std::path::PathBuf;

/// The library under test: `NONZERO_ORT_LIB`, else target/release's (scripts/setup builds it).
fn library() -> PathBuf {
    let lib = std::env::var_os("NONZERO_ORT_LIB")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/release/libnonzero_ort.so"));
    assert!(
        lib.is_file(),
        "{} is missing: run scripts/setup",
        lib.display()
    );
    lib
}

#[test]
fn the_loop_keeps_the_library_loaded_once_and_memory_flat() {
    let Some(ort) = common::ort_dylib() else {
        return;
    };
    let lib = library();
    let out = nonzero(
        &root(),
        &[
            "run",
            "--quiet",
            "--library",
            lib.to_str().unwrap(),
            "--ort-dylib",
            ort.to_str().unwrap(),
            "--load-unload",
            "300",
            "models/nonzero_opset13_float",
            "models/masked_select_opset13",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("load-unload: "))
        .unwrap_or_else(|| panic!("no summary line: {text}"));
    assert!(
        line.starts_with("load-unload: 300 cycles x 2 models: 600 matched, 0 failed; resident "),
        "{line}"
    );
    // Pinned at its first registration: not loaded before, never unloaded after.
    assert!(
        line.ends_with("library loaded before the first cycle: no; after every cycle: yes"),
        "{line}"
    );
    let growth: i64 = line
        .split(" KiB after cycle 300 (")
        .nth(1)
        .and_then(|rest| rest.split(" KiB)").next())
        .and_then(|n| n.trim_start_matches('+').parse().ok())
        .unwrap_or_else(|| panic!("no growth in {line}"));
    assert!(growth < 2048, "{line}");
}

#[test]
fn the_loop_needs_the_library_and_a_cycle() {
    let Some(ort) = common::ort_dylib() else {
        return;
    };
    let ort = ort.to_str().unwrap();
    let model = "models/nonzero_opset13_float";
    let out = nonzero(
        &root(),
        &[
            "run",
            "--builtin",
            "--ort-dylib",
            ort,
            "--load-unload",
            "3",
            model,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--load-unload needs the library (not --builtin)"),
        "{}",
        stderr(&out)
    );
    let lib = library();
    let lib = lib.to_str().unwrap();
    let out = nonzero(
        &root(),
        &[
            "run",
            "--library",
            lib,
            "--ort-dylib",
            ort,
            "--load-unload",
            "0",
            model,
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("--load-unload needs at least one cycle and one model"),
        "{}",
        stderr(&out)
    );
}
