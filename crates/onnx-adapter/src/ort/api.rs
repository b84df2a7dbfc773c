//! The host's `OrtApi`, obtained once from `RegisterCustomOps`, and the two primitives every other
//! file of this module builds on: [`Api::check`] (status to `Result`) and [`Api::status`].
//!
//! We compile against API 17 (ONNX Runtime 1.17) and call API 17 functions through the host's
//! own table (never a copy of it: a table compiled for a newer API than the host's would read
//! past the host's). The only exception is `Api24` (`api24.rs`): four API 22/24 functions read
//! by their fixed slot in the host's table, and only when the host hands out API 24.

use super::api24::{Api24, API_24};
use ort_sys::{OrtApi, OrtApiBase, OrtErrorCode, OrtStatus, OrtStatusPtr, OrtValue};
use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::OnceLock;

/// The API version this library needs: 17 added opset ranges and shape inference for custom ops.
pub(crate) const REQUIRED_API_VERSION: u32 = 17;
/// The ONNX Runtime release that introduced [`REQUIRED_API_VERSION`].
const MINIMUM_ORT_RELEASE: &str = "1.17.0";

/// A host `OrtApi` table that lives as long as the process (ONNX Runtime never unloads it while a
/// session that uses this library exists).
#[derive(Clone, Copy)]
pub(crate) struct Api(&'static OrtApi);

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
static HOST_VERSION: OnceLock<String> = OnceLock::new();

/// The host's ONNX Runtime version string ("1.17.3"); empty before registration.
pub(crate) fn host_version() -> &'static str {
    HOST_VERSION.get().map_or("", String::as_str)
}

impl Api {
    /// The table registered by `RegisterCustomOps`, if any.
    pub(crate) fn get() -> Option<Api> {
        API.get().copied()
    }

    /// Asks the host for API [`REQUIRED_API_VERSION`].
    ///
    /// # Safety
    /// `base` must be the `OrtApiBase` that ONNX Runtime passed to `RegisterCustomOps`.
    pub(crate) unsafe fn init(base: *const OrtApiBase) -> Result<Api, *mut OrtStatus> {
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
        HOST_VERSION.get_or_init(|| {
            // SAFETY: GetVersionString returns a static NUL-terminated string.
            unsafe { CStr::from_ptr((base.GetVersionString)()) }
                .to_string_lossy()
                .into_owned()
        });
        // SAFETY: `base` is the host's valid OrtApiBase.
        API_24.get_or_init(|| unsafe { Api24::load(api, base) });
        Ok(*API.get_or_init(|| api))
    }

    /// The host's table; only this module (`crate::ort`) calls through it, mostly by [`call!`].
    pub(super) fn table(&self) -> &'static OrtApi {
        self.0
    }

    /// Itself: what [`call!`] reads a failed status with.
    pub(super) fn api(&self) -> Api {
        *self
    }

    /// A new `OrtStatus` carrying `message` (interior NULs are replaced).
    pub(super) fn status(&self, code: OrtErrorCode, message: &str) -> *mut OrtStatus {
        let msg = CString::new(message.replace('\0', "\\0")).expect("NULs replaced");
        // SAFETY: CreateStatus copies the NUL-terminated message.
        unsafe { (self.0.CreateStatus)(code, msg.as_ptr()) }.0
    }

    /// Turns a returned status into a Result, taking ownership of (and releasing) an error status.
    pub(super) fn check(&self, status: ort_sys::OrtStatusPtr) -> Result<(), String> {
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

/// What a compute call uses of the host's API, copied into each kernel object when the kernel
/// is created. A compute then reads these function pointers from the kernel object, which it
/// touches anyway, instead of from this module's statics and the host's `OrtApi` table: inside
/// a large model, each of those is one more page that the nodes before have evicted
/// (docs/performance.md, "Cold calls"). Error paths and rarer calls still go through `api`.
#[derive(Clone, Copy, Debug)]
// The fields carry the C functions' names, so that `call!(calls, F(..))` reads like a call
// through the host's table and names `F` in its error.
#[allow(non_snake_case)]
pub(crate) struct ComputeApi {
    api: Api,
    pub(super) KernelContext_GetInput: GetInputFn,
    pub(super) KernelContext_GetOutput: GetOutputFn,
    pub(super) GetTensorMutableData: TensorDataFn,
    /// The one-call type and shape read (ONNX Runtime 1.24+).
    pub(super) api24: Option<Api24>,
}

type GetInputFn = unsafe extern "system" fn(
    *const ort_sys::OrtKernelContext,
    usize,
    *mut *const OrtValue,
) -> OrtStatusPtr;
type GetOutputFn = unsafe extern "system" fn(
    *mut ort_sys::OrtKernelContext,
    usize,
    *const i64,
    usize,
    *mut *mut OrtValue,
) -> OrtStatusPtr;
type TensorDataFn = unsafe extern "system" fn(*mut OrtValue, *mut *mut c_void) -> OrtStatusPtr;

impl ComputeApi {
    /// The functions of `api`, the host's table, and its API 24 functions when it has them.
    pub(crate) fn new(api: Api) -> ComputeApi {
        let table = api.table();
        ComputeApi {
            api,
            KernelContext_GetInput: table.KernelContext_GetInput,
            KernelContext_GetOutput: table.KernelContext_GetOutput,
            GetTensorMutableData: table.GetTensorMutableData,
            api24: Api24::get(),
        }
    }

    /// The functions [`call!`] calls: these fields.
    pub(super) fn table(&self) -> &ComputeApi {
        self
    }

    /// The host's whole table, for what a compute calls rarely (and for statuses).
    pub(super) fn api(&self) -> Api {
        self.api
    }
}
