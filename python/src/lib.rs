//! The `nonzero-ort` wheel's native module is `libnonzero_ort` itself: this crate only links
//! `crates/onnx-adapter` into a cdylib that maturin can package, and re-exports its entry point.
//! There is no Python module init here on purpose: Python never imports this file, ONNX Runtime
//! `dlopen`s it through `SessionOptions.register_custom_ops_library`.

pub use nonzero_ort::RegisterCustomOps;

mod optimize;
pub use optimize::{nonzero_ort_free, nonzero_ort_free_string, nonzero_ort_optimize};
