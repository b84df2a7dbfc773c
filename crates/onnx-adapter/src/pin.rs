//! The library pins itself in the process at its first registration, so that it is loaded at
//! most once per process (docs/architecture.md, "The ONNX Runtime boundary").
//!
//! ONNX Runtime unloads a custom-op library when the session options that registered it, and
//! every session made from them, are freed. The library keeps what ONNX Runtime points at for the
//! life of the process (the op tables and domains of `ort/registration.rs`, the GPU context of
//! `gpu.rs`), so every unload would lose them and every load would build them again. Pinned, the
//! unload only drops ONNX Runtime's reference, the statics survive, and a later registration
//! finds them already built: nothing is allocated again.
//!
//! - Unix: `dlopen(own path, RTLD_NOLOAD | RTLD_NODELETE)` marks the loaded object "never
//!   unload" (glibc and musl keep it mapped; the same flag as linking with `-z nodelete`, set at
//!   run time so that it also covers every cdylib that links this crate, the wheel's included).
//! - Windows: `GetModuleHandleExW(PIN | FROM_ADDRESS)` on an address inside the DLL.
//!
//! Pinning is best effort: a failure leaves the library as it was (unloaded with the last
//! session options, as before), and registration goes on.

use std::sync::Once;

/// An address inside this library (the object that holds this code).
static ANCHOR: u8 = 0;

static PINNED: Once = Once::new();

/// Pins the library that holds this code, once per load.
pub fn pin_once() {
    PINNED.call_once(|| {
        // Best effort (module doc): there is nothing better to do on failure than to go on.
        let _ = pin();
    });
}

#[cfg(unix)]
fn pin() -> Result<(), String> {
    let anchor = std::ptr::addr_of!(ANCHOR).cast::<std::ffi::c_void>();
    // SAFETY: an all-zero Dl_info is valid (null pointers); dladdr fills it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: `anchor` is an address in this object; `info` is a valid out-pointer.
    if unsafe { libc::dladdr(anchor, &mut info) } == 0 || info.dli_fname.is_null() {
        return Err("dladdr found no object for the library's own address".into());
    }
    // SAFETY: dli_fname is the NUL-terminated path of the loaded object holding this code;
    // RTLD_NOLOAD only finds it (it is loaded), RTLD_NODELETE keeps it. The handle is never
    // closed on purpose.
    let handle = unsafe {
        libc::dlopen(
            info.dli_fname,
            libc::RTLD_LAZY | libc::RTLD_NOLOAD | libc::RTLD_NODELETE,
        )
    };
    if handle.is_null() {
        return Err("dlopen(RTLD_NOLOAD | RTLD_NODELETE) of the library's own path failed".into());
    }
    Ok(())
}

#[cfg(windows)]
fn pin() -> Result<(), String> {
    const GET_MODULE_HANDLE_EX_FLAG_PIN: u32 = 0x1;
    const GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS: u32 = 0x4;
    #[link(name = "kernel32")]
    extern "system" {
        fn GetModuleHandleExW(
            flags: u32,
            module_name: *const u16,
            module: *mut *mut std::ffi::c_void,
        ) -> i32;
    }
    let mut module = std::ptr::null_mut();
    // SAFETY: with FROM_ADDRESS, `module_name` is an address inside a loaded module (this DLL);
    // `module` is a valid out-pointer. PIN makes the module stay until the process ends.
    let ok = unsafe {
        GetModuleHandleExW(
            GET_MODULE_HANDLE_EX_FLAG_PIN | GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS,
            std::ptr::addr_of!(ANCHOR).cast(),
            &mut module,
        )
    };
    if ok == 0 {
        return Err(format!(
            "GetModuleHandleExW(PIN) failed: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(not(any(unix, windows)))]
fn pin() -> Result<(), String> {
    Err("no way to pin a library on this platform".into())
}
