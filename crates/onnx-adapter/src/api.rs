//! The host's `OrtApi`, obtained once from `RegisterCustomOps`, and thin checked wrappers.
//!
//! We compile against API 17 (ONNX Runtime 1.17) and only ever call functions that exist in
//! API 17, through the host's own table (never a copy of it: a table compiled for a newer API
//! than the host's would read past the host's).

use ort_sys::{OrtApi, OrtApiBase, OrtErrorCode, OrtStatus};
use std::ffi::{c_char, CStr, CString};
use std::sync::OnceLock;

/// The API version this library needs: 17 added opset ranges and shape inference for custom ops.
pub const REQUIRED_API_VERSION: u32 = 17;
/// The ONNX Runtime release that introduced [`REQUIRED_API_VERSION`].
pub const MINIMUM_ORT_RELEASE: &str = "1.17.0";

/// A host `OrtApi` table that lives as long as the process (ONNX Runtime never unloads it while a
/// session that uses this library exists).
#[derive(Clone, Copy)]
pub struct Api(&'static OrtApi);

// SAFETY: the table is immutable function pointers; ONNX Runtime's API functions are callable
// from any thread.
unsafe impl Send for Api {}
// SAFETY: as above, shared references to an immutable table of thread-safe functions.
unsafe impl Sync for Api {}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Api(OrtApi)")
    }
}

static API: OnceLock<Api> = OnceLock::new();

impl Api {
    /// The table registered by `RegisterCustomOps`, if any.
    pub fn get() -> Option<Api> {
        API.get().copied()
    }

    /// Asks the host for API [`REQUIRED_API_VERSION`].
    ///
    /// # Safety
    /// `base` must be the `OrtApiBase` that ONNX Runtime passed to `RegisterCustomOps`.
    pub unsafe fn init(base: *const OrtApiBase) -> Result<Api, *mut OrtStatus> {
        // SAFETY: the caller passes the host's valid OrtApiBase.
        let base = unsafe { &*base };
        // SAFETY: GetApi is safe to call with any version; it returns null when unsupported.
        let api = unsafe { (base.GetApi)(REQUIRED_API_VERSION) };
        if api.is_null() {
            // SAFETY: `base` is the host's valid OrtApiBase.
            return Err(unsafe { too_old_status(base) });
        }
        // SAFETY: non-null GetApi results point to a static table of at least the requested version.
        let api = Api(unsafe { &*api });
        Ok(*API.get_or_init(|| api))
    }

    pub fn raw(&self) -> &'static OrtApi {
        self.0
    }

    /// A new `OrtStatus` carrying `message` (interior NULs are replaced).
    pub fn status(&self, code: OrtErrorCode, message: &str) -> *mut OrtStatus {
        let msg = CString::new(message.replace('\0', "\\0")).expect("NULs replaced");
        // SAFETY: CreateStatus copies the NUL-terminated message.
        unsafe { (self.0.CreateStatus)(code, msg.as_ptr()) }.0
    }

    /// Turns a returned status into a Result, taking ownership of (and releasing) an error status.
    pub fn check(&self, status: ort_sys::OrtStatusPtr) -> Result<(), String> {
        let status = status.0;
        if status.is_null() {
            return Ok(());
        }
        // SAFETY: a non-null status returned by the host is valid until released.
        let message = unsafe { CStr::from_ptr((self.0.GetErrorMessage)(status)) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: we own the returned status and release it once.
        unsafe { (self.0.ReleaseStatus)(status) };
        Err(message)
    }
}

/// An error status from a host that lacks API 17, made with the oldest table that has
/// `CreateStatus` (every version has it, at the same place).
unsafe fn too_old_status(base: &OrtApiBase) -> *mut OrtStatus {
    // SAFETY: GetVersionString returns a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr((base.GetVersionString)()) }
        .to_string_lossy()
        .into_owned();
    let message = CString::new(format!(
        "nonzero_ort needs ONNX Runtime {MINIMUM_ORT_RELEASE} or newer (C API version {REQUIRED_API_VERSION}); \
         this process runs ONNX Runtime {version}"
    ))
    .unwrap_or_default();
    for version in (1..REQUIRED_API_VERSION).rev() {
        // SAFETY: as in `init`.
        let api = unsafe { (base.GetApi)(version) };
        if !api.is_null() {
            // SAFETY: CreateStatus sits at the same offset in every API version's table.
            return unsafe {
                ((*api).CreateStatus)(OrtErrorCode::ORT_FAIL, message.as_ptr() as *const c_char)
            }
            .0;
        }
    }
    std::ptr::null_mut()
}
