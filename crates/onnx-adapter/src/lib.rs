//! `libnonzero_ort.so`: an ONNX Runtime custom-op library whose NonZero replaces the built-in one.
//!
//! Load it with `SessionOptions.register_custom_ops_library(path)` (Python),
//! `Ort::SessionOptions::RegisterCustomOpsLibrary` (C++) or
//! `SessionBuilder::with_operator_library` (Rust `ort`). It registers NonZero in the ONNX domain
//! for opsets 9-12 and 13+, for every element type, backed by `nonzero-core`'s parallel kernel on
//! the session's intra-op thread pool.
//!
//! Layout (docs/architecture.md): [`ort`] is the operator layer, the only code that calls ONNX
//! Runtime's C API; [`ops`] holds one file per op and the list that registers them; [`device`]
//! decides CPU or GPU; [`gpu`] holds the process-wide GPU context; [`pin`] keeps the library
//! loaded once it has been registered.

mod device;
mod gpu;
mod ops;
mod opset;
mod ort;
mod pin;

use ort_sys::{OrtApiBase, OrtSessionOptions, OrtStatus};

/// The entry point ONNX Runtime looks up after loading the library: pins the library in the
/// process (the first time; [`pin`]), then registers the ops of [`ops::LIBRARY`] on `options`.
///
/// # Safety
/// Called by ONNX Runtime with live session options and its API base.
#[no_mangle]
pub unsafe extern "C" fn RegisterCustomOps(
    options: *mut OrtSessionOptions,
    api_base: *const OrtApiBase,
) -> *mut OrtStatus {
    pin::pin_once();
    // SAFETY: forwarded from ONNX Runtime (the caller).
    unsafe { ort::register_custom_ops(options, api_base, &ops::LIBRARY) }
}
