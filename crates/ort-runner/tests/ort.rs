//! Rust end to end: a real ONNX Runtime loaded by the `ort` crate (`load-dynamic`, from
//! `ORT_DYLIB_PATH`) with the real libnonzero_ort.so (`NONZERO_ORT_LIB` or
//! target/release/libnonzero_ort.so). `scripts/test` sets both up; a missing one is a failure.

use nonzero_core::DataType;
use nonzero_harness::{bundled, model, Tensor, TensorData, TestCase};
use nonzero_ort_runner::{self as runner, RunOptions, Status};
use std::path::PathBuf;
use std::sync::Once;

fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        assert!(
            std::env::var_os("ORT_DYLIB_PATH").is_some(),
            "ORT_DYLIB_PATH must name libonnxruntime.so (scripts/test sets it from the pinned wheel)"
        );
        runner::init_ort(None).expect("loading ONNX Runtime");
    });
}

fn library() -> PathBuf {
    runner::default_library()
        .expect("libnonzero_ort.so not found: build it with `cargo build --release -p nonzero-ort`")
}

fn with_library() -> RunOptions {
    RunOptions {
        library: Some(library()),
        ..Default::default()
    }
}

#[test]
fn builtin_runs_the_backend_example() {
    init();
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
    init();
    let opts = with_library();
    for (name, case) in bundled::bundled_models() {
        let r = runner::run_case(name, &case, &opts);
        assert_eq!(r.status, Status::Match, "{name}: {:?}", r.status);
    }
}

/// int8 is a NonZero type ONNX Runtime's built-in kernel lacks: the model fails without the
/// library and gives the exact coordinates with it, so the library's kernel is what ran.
#[test]
fn our_kernel_is_the_one_that_runs() {
    init();
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
    let r = runner::run_case("int8", &case, &with_library());
    assert_eq!(r.status, Status::Match, "{:?}", r.status);
}
