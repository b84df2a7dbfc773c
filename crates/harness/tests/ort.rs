//! Runs the bundled models through a real ONNX Runtime; skipped (with a message) unless
//! `ORT_DYLIB_PATH` names libonnxruntime.so. Uses the custom-op library when one is found
//! (`NONZERO_ORT_LIB` or target/release/libnonzero_ort.so).

use nonzero_harness::runner::{self, RunOptions, Status};
use nonzero_harness::{bundled, Tensor, TensorData};

fn ort_available() -> bool {
    if std::env::var_os("ORT_DYLIB_PATH").is_none() {
        eprintln!("ORT_DYLIB_PATH not set: skipping");
        return false;
    }
    runner::init_ort(None).expect("loading ONNX Runtime");
    true
}

#[test]
fn builtin_runs_the_backend_example() {
    if !ort_available() {
        return;
    }
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
    if !ort_available() {
        return;
    }
    let Some(lib) = runner::default_library() else {
        eprintln!("no libnonzero_ort.so: skipping");
        return;
    };
    let opts = RunOptions {
        library: Some(lib),
        ..Default::default()
    };
    for (name, case) in bundled::bundled_models() {
        let r = runner::run_case(name, &case, &opts);
        assert_eq!(r.status, Status::Match, "{name}: {:?}", r.status);
    }
}
