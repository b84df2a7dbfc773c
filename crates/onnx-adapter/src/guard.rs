//! Nothing unwinds into ONNX Runtime: every entry point runs its body under `catch_unwind` and
//! turns errors and panics into an `OrtStatus`.

use crate::api::Api;
use ort_sys::{OrtErrorCode, OrtStatusPtr};
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`; `Err(message)` and panics become an error status prefixed with `what`.
pub fn guarded(what: &str, body: impl FnOnce() -> Result<(), String>) -> OrtStatusPtr {
    let outcome = catch_unwind(AssertUnwindSafe(body));
    let (code, message) = match outcome {
        Ok(Ok(())) => return OrtStatusPtr(std::ptr::null_mut()),
        Ok(Err(message)) => (
            OrtErrorCode::ORT_FAIL,
            format!("nonzero_ort: {what}: {message}"),
        ),
        Err(panic) => (
            OrtErrorCode::ORT_RUNTIME_EXCEPTION,
            format!(
                "nonzero_ort: {what}: internal error (panic: {})",
                panic_message(&panic)
            ),
        ),
    };
    match Api::get() {
        Some(api) => OrtStatusPtr(api.status(code, &message)),
        // Without the host's API there is no way to build a status; this cannot happen after a
        // successful RegisterCustomOps, which every other entry point follows.
        None => OrtStatusPtr(std::ptr::null_mut()),
    }
}

pub fn panic_message(panic: &Box<dyn Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown payload".to_string()
    }
}
