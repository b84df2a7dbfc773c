//! The host's `OrtApi`, obtained once from `RegisterCustomOps`, and the two primitives every other
//! file of this module builds on: [`Api::check`] (status to `Result`) and [`Api::status`].
//!
//! We compile against API 17 (ONNX Runtime 1.17) and call API 17 functions through the host's
//! own table (never a copy of it: a table compiled for a newer API than the host's would read
//! past the host's). The only exception is [`Api24`]: four API 22/24 functions read by their
//! fixed slot in the host's table, and only when the host hands out API 24.

use ort_sys::{
    OrtApi, OrtApiBase, OrtErrorCode, OrtKernelInfo, OrtKeyValuePairs, OrtStatus, OrtStatusPtr,
    OrtValue,
};
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
        API_24.get_or_init(|| unsafe { Api24::load(base) });
        Ok(*API.get_or_init(|| api))
    }

    /// The host's table; only this module (`crate::ort`) calls through it.
    pub(super) fn raw(&self) -> &'static OrtApi {
        self.0
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
pub(crate) struct ComputeApi {
    pub(super) api: Api,
    pub(super) get_input: GetInputFn,
    pub(super) get_output: GetOutputFn,
    pub(super) tensor_data: TensorDataFn,
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
        let raw = api.raw();
        ComputeApi {
            api,
            get_input: raw.KernelContext_GetInput,
            get_output: raw.KernelContext_GetOutput,
            tensor_data: raw.GetTensorMutableData,
            api24: Api24::get(),
        }
    }
}

/// The API version (ONNX Runtime 1.24) that added `KernelInfo_GetConfigEntries` and
/// `GetTensorElementTypeAndShapeDataReference`. API 22 (1.22) added `GetKeyValue` and
/// `ReleaseKeyValuePairs`, so a host with API 24 has all four.
pub(crate) const CONFIG_API_VERSION: u32 = 24;

// Slots (index = byte offset / pointer size) of the functions we read from the host's table.
// ONNX Runtime never moves a function once released (its onnxruntime_c_api.cc static_asserts the
// last slot of every version), so these hold for every host that supports API 24.
//
// Derivation: a throwaway crate outside this workspace depending on ort-sys =2.0.0-rc.15 with
// features ["std", "api-24", "disable-linking"] printed `std::mem::offset_of!(OrtApi, F)` on
// x86_64 (8-byte pointers): KernelInfo_GetConfigEntries 3128 (slot 391), GetKeyValue 2376
// (slot 297), ReleaseKeyValuePairs 2400 (slot 300), GetTensorElementTypeAndShapeDataReference
// 3312 (slot 414, the last of API 24: the api-24 table is 415 slots); the same build gave
// KernelInfo_GetLogger slot 245 and the api-17 table 276 slots, both checked against our api-17
// build below. The workspace cannot enable api-24 itself: Cargo unifies features, and a table
// type longer than the host's would be unsound to hold a reference to on ONNX Runtime 1.17.
const SLOT_KERNEL_INFO_GET_CONFIG_ENTRIES: usize = 391;
const SLOT_GET_KEY_VALUE: usize = 297;
const SLOT_RELEASE_KEY_VALUE_PAIRS: usize = 300;
const SLOT_GET_TENSOR_ELEMENT_TYPE_AND_SHAPE_DATA_REFERENCE: usize = 414;

// The common prefix of the api-17 and api-24 layouts agrees, and every slot we read lies past the
// end of the API 17 table (so none of them aliases a field our api-17 OrtApi type describes).
const _: () = {
    let slot = std::mem::size_of::<*const c_void>();
    assert!(std::mem::offset_of!(OrtApi, KernelInfo_GetLogger) / slot == 245);
    assert!(std::mem::size_of::<OrtApi>() / slot == 276);
    assert!(SLOT_GET_KEY_VALUE >= 276 && SLOT_RELEASE_KEY_VALUE_PAIRS >= 276);
    assert!(SLOT_KERNEL_INFO_GET_CONFIG_ENTRIES >= 276);
    assert!(SLOT_GET_TENSOR_ELEMENT_TYPE_AND_SHAPE_DATA_REFERENCE >= 276);
};

type GetConfigEntriesFn =
    unsafe extern "system" fn(*const OrtKernelInfo, *mut *mut OrtKeyValuePairs) -> OrtStatusPtr;
type GetKeyValueFn =
    unsafe extern "system" fn(*const OrtKeyValuePairs, *const c_char) -> *const c_char;
type ReleaseKeyValuePairsFn = unsafe extern "system" fn(*mut OrtKeyValuePairs);
/// The element type is taken as the C int its enum is, like everywhere in this module.
type GetTensorElementTypeAndShapeDataReferenceFn = unsafe extern "system" fn(
    *const OrtValue,
    *mut i32,
    *mut *const i64,
    *mut usize,
) -> OrtStatusPtr;

/// The API 24 functions we use (ONNX Runtime 1.24+): a kernel's session config entries, and a
/// tensor's element type and shape read in one call, without the type-and-shape info that
/// the API 17 route allocates and frees on every compute.
#[derive(Clone, Copy)]
pub(super) struct Api24 {
    get_config_entries: GetConfigEntriesFn,
    get_key_value: GetKeyValueFn,
    release_key_value_pairs: ReleaseKeyValuePairsFn,
    tensor_type_and_shape: GetTensorElementTypeAndShapeDataReferenceFn,
}

impl std::fmt::Debug for Api24 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Api24(KernelInfo_GetConfigEntries, GetTensorElementTypeAndShapeDataReference)")
    }
}

static API_24: OnceLock<Option<Api24>> = OnceLock::new();

/// `(major, minor)` of an ONNX Runtime version string such as "1.17.3".
fn release(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let major = parts.next()?.trim().parse().ok()?;
    let minor = parts.next()?.trim().parse().ok()?;
    Some((major, minor))
}

impl Api24 {
    /// The host's API 24 functions, when this process has registered the library on a host with
    /// API [`CONFIG_API_VERSION`].
    pub(super) fn get() -> Option<Api24> {
        API_24.get().copied().flatten()
    }

    /// # Safety
    /// `base` must be the host's valid `OrtApiBase`.
    unsafe fn load(base: &OrtApiBase) -> Option<Api24> {
        // Older hosts print "The requested API version [24] is not available" to stderr when
        // asked, so ask only those whose version string says 1.24 or later (or cannot be parsed).
        // SAFETY: GetVersionString returns a static NUL-terminated string.
        let version = unsafe { CStr::from_ptr((base.GetVersionString)()) }.to_string_lossy();
        if release(&version).is_some_and(|v| v < (1, CONFIG_API_VERSION)) {
            return None;
        }
        // SAFETY: GetApi accepts any version and returns null when it does not support it.
        let table = unsafe { (base.GetApi)(CONFIG_API_VERSION) };
        if table.is_null() {
            return None;
        }
        let slots = table as *const *const c_void;
        // SAFETY: a non-null GetApi(24) result is the host's static OrtApi table of at least
        // API 24, i.e. an array of at least 415 function pointers (slot 414 is API 24's last
        // function), and the slots were derived as documented above. Reading them as raw pointers
        // before converting means a null slot (never expected) is caught instead of called.
        let read = |slot: usize| unsafe { *slots.add(slot) };
        let (info, get, release, shape) = (
            read(SLOT_KERNEL_INFO_GET_CONFIG_ENTRIES),
            read(SLOT_GET_KEY_VALUE),
            read(SLOT_RELEASE_KEY_VALUE_PAIRS),
            read(SLOT_GET_TENSOR_ELEMENT_TYPE_AND_SHAPE_DATA_REFERENCE),
        );
        if info.is_null() || get.is_null() || release.is_null() || shape.is_null() {
            return None;
        }
        // SAFETY: each slot holds the function of the documented C signature (see the slot
        // derivation); function and data pointers have the same size on every ORT platform.
        unsafe {
            Some(Api24 {
                get_config_entries: std::mem::transmute::<*const c_void, GetConfigEntriesFn>(info),
                get_key_value: std::mem::transmute::<*const c_void, GetKeyValueFn>(get),
                release_key_value_pairs: std::mem::transmute::<*const c_void, ReleaseKeyValuePairsFn>(
                    release,
                ),
                tensor_type_and_shape: std::mem::transmute::<
                    *const c_void,
                    GetTensorElementTypeAndShapeDataReferenceFn,
                >(shape),
            })
        }
    }

    /// The session config entry `key` as seen by this kernel (`None` when the session lacks it).
    ///
    /// # Safety
    /// `info` must be a live kernel info.
    pub(super) unsafe fn entry(
        &self,
        api: Api,
        info: *const OrtKernelInfo,
        key: &CStr,
    ) -> Result<Option<String>, String> {
        let mut pairs = std::ptr::null_mut();
        // SAFETY: `info` is live (caller); the host allocates the pairs, which we release below.
        api.check(unsafe { (self.get_config_entries)(info, &mut pairs) })?;
        if pairs.is_null() {
            return Ok(None);
        }
        // SAFETY: `pairs` is live until released; GetKeyValue returns null or a NUL-terminated
        // string owned by `pairs`, copied before the release.
        let value = unsafe {
            let value = (self.get_key_value)(pairs, key.as_ptr());
            (!value.is_null()).then(|| CStr::from_ptr(value).to_string_lossy().into_owned())
        };
        // SAFETY: released once, after its last use.
        unsafe { (self.release_key_value_pairs)(pairs) };
        Ok(value)
    }

    /// A tensor's element type code and its dimensions, borrowed from the value itself.
    ///
    /// # Safety
    /// `value` must be a live tensor value that stays unmodified for `'v`.
    pub(super) unsafe fn tensor_type_and_shape<'v>(
        &self,
        api: Api,
        value: *const OrtValue,
    ) -> Result<(i32, &'v [i64]), String> {
        let (mut code, mut dims, mut rank) = (0i32, std::ptr::null::<i64>(), 0usize);
        // SAFETY: `value` is live (caller); the out-pointers are valid for one write each.
        api.check(unsafe { (self.tensor_type_and_shape)(value, &mut code, &mut dims, &mut rank) })?;
        if rank == 0 {
            return Ok((code, &[]));
        }
        if dims.is_null() {
            return Err(format!(
                "ONNX Runtime reported rank {rank} and no dimensions"
            ));
        }
        // SAFETY: the host returned `rank` dimensions owned by the tensor, which is live and
        // unmodified for `'v` (caller).
        Ok((code, unsafe { std::slice::from_raw_parts(dims, rank) }))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn release_parses_version_strings() {
        assert_eq!(super::release("1.17.3"), Some((1, 17)));
        assert_eq!(super::release("1.31.1"), Some((1, 31)));
        assert_eq!(super::release("2.0"), Some((2, 0)));
        assert_eq!(super::release("dev"), None);
    }
}
