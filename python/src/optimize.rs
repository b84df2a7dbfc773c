//! `nonzero_ort.optimize` for Python: the `nonzero-optimize` crate behind a C ABI that
//! `nonzero_ort/__init__.py` calls through ctypes (so the rewriter has one implementation, and
//! the package still needs no compiled Python module).

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Success.
const OK: i32 = 0;
/// The model was refused or a panic was caught; `*error` holds the message.
const FAILED: i32 = 1;
/// A null out-pointer: nothing was done.
const BAD_CALL: i32 = 2;

/// Rewrites the serialized ONNX model `model[..len]` (see docs/optimize.md) with the options in
/// `options`, a NUL-terminated JSON object (`nonzero_optimize::Options::from_json`: unknown keys
/// and wrong types are refused by name; null means the defaults).
///
/// On success returns 0, stores the new model in `*out`/`*out_len` (free it with
/// [`nonzero_ort_free`]) and the report as NUL-terminated JSON in `*report` (free it with
/// [`nonzero_ort_free_string`]). On failure returns 1 and stores a NUL-terminated message in
/// `*error` (free it with [`nonzero_ort_free_string`]). Returns 2, touching nothing, when an
/// out-pointer is null. No panic crosses this boundary.
///
/// # Safety
/// `model` must be valid for reads of `len` bytes (or `len` must be 0); `options` must be null
/// or a NUL-terminated string; `out`, `out_len`,
/// `report` and `error` must be valid for one pointer-sized write each.
#[no_mangle]
pub unsafe extern "C" fn nonzero_ort_optimize(
    model: *const u8,
    len: usize,
    options: *const c_char,
    out: *mut *mut u8,
    out_len: *mut usize,
    report: *mut *mut c_char,
    error: *mut *mut c_char,
) -> i32 {
    let null_out = out.is_null() || out_len.is_null() || report.is_null() || error.is_null();
    if null_out || (model.is_null() && len > 0) {
        return BAD_CALL;
    }
    let bytes: &[u8] = if len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees `model` is valid for `len` bytes (checked non-null above).
        unsafe { std::slice::from_raw_parts(model, len) }
    };
    let options_text = if options.is_null() {
        "{}".to_string()
    } else {
        // SAFETY: the caller guarantees a non-null `options` is a NUL-terminated string.
        unsafe { CStr::from_ptr(options) }
            .to_string_lossy()
            .into_owned()
    };
    let result = catch_unwind(AssertUnwindSafe(|| {
        let options = nonzero_optimize::Options::from_json(&options_text)?;
        nonzero_optimize::optimize_with(bytes, &options).map_err(|e| e.to_string())
    }));
    let message = match result {
        Ok(Ok((model, summary))) => {
            let boxed = model.into_boxed_slice();
            let json = c_string(summary.to_json());
            // SAFETY: the out-pointers were checked non-null and the caller guarantees they
            // are writable.
            unsafe {
                *out_len = boxed.len();
                *out = Box::into_raw(boxed).cast::<u8>();
                *report = json.into_raw();
            }
            return OK;
        }
        Ok(Err(e)) => e,
        Err(_) => "nonzero_ort.optimize: internal error (a panic was caught)".to_string(),
    };
    // SAFETY: `error` was checked non-null and the caller guarantees it is writable.
    unsafe { *error = c_string(message).into_raw() };
    FAILED
}

/// `text` as a C string (a NUL inside becomes a space).
fn c_string(text: String) -> CString {
    CString::new(text.replace('\0', " ")).expect("NULs replaced")
}

/// Frees a model returned by [`nonzero_ort_optimize`].
///
/// # Safety
/// `ptr`/`len` must be exactly a pair returned by `nonzero_ort_optimize`, freed once.
#[no_mangle]
pub unsafe extern "C" fn nonzero_ort_free(ptr: *mut u8, len: usize) {
    if !ptr.is_null() {
        // SAFETY: `ptr`/`len` came from `Box::<[u8]>::into_raw` in nonzero_ort_optimize.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) });
    }
}

/// Frees an error message or report returned by [`nonzero_ort_optimize`].
///
/// # Safety
/// `ptr` must be a message or report returned by `nonzero_ort_optimize`, freed once.
#[no_mangle]
pub unsafe extern "C" fn nonzero_ort_free_string(ptr: *mut c_char) {
    if !ptr.is_null() {
        // SAFETY: `ptr` came from `CString::into_raw` in nonzero_ort_optimize.
        drop(unsafe { CString::from_raw(ptr) });
    }
}
