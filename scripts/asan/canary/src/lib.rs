//! The asan stage's positive controls: a custom-op library whose `RegisterCustomOps` reads one
//! byte past a heap buffer, or, with `NONZERO_ASAN_CANARY_LEAK=1`, leaks a heap buffer instead.
//! Built as the real library is (`-Zsanitizer=address`, a cdylib) and registered by the same
//! hosts through the same ONNX Runtime, it must produce a heap-buffer-overflow report, or a
//! LeakSanitizer report at exit that names it; otherwise a run of the real library with no report
//! proves nothing. The leak is made inside ONNX Runtime's call (`RegisterCustomOpsLibrary` ->
//! `RegisterCustomOps`), so its stack holds ONNX Runtime's frames under ours: a leak suppression
//! that matched ONNX Runtime's library would hide it, and the stage would fail.

use std::ffi::{c_char, c_int, c_void};

/// Bytes the leak control loses.
const LEAKED: usize = 1234;

/// ONNX Runtime's entry point of a custom-op library; this one overflows (or leaks) instead of
/// registering anything.
///
/// # Safety
/// None: the read is out of bounds on purpose, for AddressSanitizer to report.
#[allow(non_snake_case)]
#[no_mangle]
pub unsafe extern "C" fn RegisterCustomOps(
    _options: *mut c_void,
    _api: *const c_void,
) -> *mut c_void {
    if std::env::var_os("NONZERO_ASAN_CANARY_LEAK").is_some_and(|v| v == "1") {
        leak();
        return std::ptr::null_mut();
    }
    // A heap buffer on purpose (clippy would have an array on the stack).
    #[allow(clippy::useless_vec)]
    let buffer = vec![1u8; 16];
    // SAFETY: not sound; one byte past the allocation, which is the point of this crate.
    let past_the_end = unsafe { std::ptr::read_volatile(buffer.as_ptr().add(buffer.len())) };
    std::hint::black_box(past_the_end);
    std::ptr::null_mut()
}

/// Loses LEAKED bytes, and pins this library (as the real one pins itself) so that the report
/// at exit can still name its frames: ONNX Runtime unloads it when the session options go.
#[inline(never)]
fn leak() {
    let block = Box::into_raw(vec![0x5au8; LEAKED].into_boxed_slice());
    std::hint::black_box(block);
    pin();
}

#[repr(C)]
struct DlInfo {
    fname: *const c_char,
    fbase: *mut c_void,
    sname: *const c_char,
    saddr: *mut c_void,
}

extern "C" {
    fn dladdr(addr: *const c_void, info: *mut DlInfo) -> c_int;
    fn dlopen(filename: *const c_char, flags: c_int) -> *mut c_void;
}

/// `dlopen(own path, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE)`, as crates/onnx-adapter/src/pin.rs.
fn pin() {
    const RTLD_LAZY: c_int = 0x1;
    const RTLD_NOLOAD: c_int = 0x4;
    const RTLD_NODELETE: c_int = 0x1000;
    let mut info = DlInfo {
        fname: std::ptr::null(),
        fbase: std::ptr::null_mut(),
        sname: std::ptr::null(),
        saddr: std::ptr::null_mut(),
    };
    // SAFETY: an address inside this library; `info` is a valid out-pointer; dladdr's path is
    // NUL-terminated. The handle is never closed on purpose.
    unsafe {
        if dladdr(pin as *const c_void, &mut info) != 0 && !info.fname.is_null() {
            dlopen(info.fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
        }
    }
}
