//! The asan stage's positive control: a custom-op library whose `RegisterCustomOps` reads one
//! byte past a heap buffer. Built as the real library is (`-Zsanitizer=address`, a cdylib) and
//! registered by the same hosts through the same ONNX Runtime, it must produce a
//! heap-buffer-overflow report; otherwise a run of the real library with no report proves nothing.

use std::ffi::c_void;

/// ONNX Runtime's entry point of a custom-op library; this one overflows instead of registering.
///
/// # Safety
/// None: the read is out of bounds on purpose, for AddressSanitizer to report.
#[allow(non_snake_case)]
#[no_mangle]
pub unsafe extern "C" fn RegisterCustomOps(
    _options: *mut c_void,
    _api: *const c_void,
) -> *mut c_void {
    // A heap buffer on purpose (clippy would have an array on the stack).
    #[allow(clippy::useless_vec)]
    let buffer = vec![1u8; 16];
    // SAFETY: not sound; one byte past the allocation, which is the point of this crate.
    let past_the_end = unsafe { std::ptr::read_volatile(buffer.as_ptr().add(buffer.len())) };
    std::hint::black_box(past_the_end);
    std::ptr::null_mut()
}
