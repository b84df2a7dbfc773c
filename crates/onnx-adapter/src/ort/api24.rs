//! The four API 22/24 functions this library uses when the host has them (ONNX Runtime 1.24+),
//! read by their fixed slot in the host's table: our `OrtApi` type is API 17's (see `api.rs`).

use super::api::Api;
use super::call::call;
use super::status::Error;
use ort_sys::{OrtApi, OrtApiBase, OrtKernelInfo, OrtKeyValuePairs, OrtStatusPtr, OrtValue};
use std::ffi::{c_char, c_void, CStr};
use std::sync::OnceLock;

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
/// the API 17 route allocates and frees on every compute. The fields carry the C functions'
/// names, for [`call!`].
#[derive(Clone, Copy)]
#[allow(non_snake_case)]
pub(super) struct Api24 {
    api: Api,
    KernelInfo_GetConfigEntries: GetConfigEntriesFn,
    GetKeyValue: GetKeyValueFn,
    ReleaseKeyValuePairs: ReleaseKeyValuePairsFn,
    GetTensorElementTypeAndShapeDataReference: GetTensorElementTypeAndShapeDataReferenceFn,
}

impl std::fmt::Debug for Api24 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Api24(KernelInfo_GetConfigEntries, GetTensorElementTypeAndShapeDataReference)")
    }
}

pub(super) static API_24: OnceLock<Option<Api24>> = OnceLock::new();

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
    /// `base` must be the host's valid `OrtApiBase`, and `api` its API 17 table.
    pub(super) unsafe fn load(api: Api, base: &OrtApiBase) -> Option<Api24> {
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
                api,
                KernelInfo_GetConfigEntries: std::mem::transmute::<*const c_void, GetConfigEntriesFn>(
                    info,
                ),
                GetKeyValue: std::mem::transmute::<*const c_void, GetKeyValueFn>(get),
                ReleaseKeyValuePairs: std::mem::transmute::<*const c_void, ReleaseKeyValuePairsFn>(
                    release,
                ),
                GetTensorElementTypeAndShapeDataReference: std::mem::transmute::<
                    *const c_void,
                    GetTensorElementTypeAndShapeDataReferenceFn,
                >(shape),
            })
        }
    }

    /// The functions [`call!`] calls: these fields.
    pub(super) fn table(&self) -> &Api24 {
        self
    }

    /// The host's API 17 table, which reads a failed status.
    pub(super) fn api(&self) -> Api {
        self.api
    }

    /// The session config entry `key` as seen by this kernel (`None` when the session lacks it).
    ///
    /// # Safety
    /// `info` must be a live kernel info.
    pub(super) unsafe fn entry(
        &self,
        info: *const OrtKernelInfo,
        key: &CStr,
    ) -> Result<Option<String>, Error> {
        let mut pairs = std::ptr::null_mut();
        // SAFETY: `info` is live (caller); the host allocates the pairs, which we release below.
        unsafe { call!(self, KernelInfo_GetConfigEntries(info, &mut pairs)) }?;
        if pairs.is_null() {
            return Ok(None);
        }
        // SAFETY: `pairs` is live until released; GetKeyValue returns null or a NUL-terminated
        // string owned by `pairs`, copied before the release.
        let value = unsafe {
            let value = (self.GetKeyValue)(pairs, key.as_ptr());
            (!value.is_null()).then(|| CStr::from_ptr(value).to_string_lossy().into_owned())
        };
        // SAFETY: released once, after its last use.
        unsafe { (self.ReleaseKeyValuePairs)(pairs) };
        Ok(value)
    }

    /// A tensor's element type code and its dimensions, borrowed from the value itself.
    ///
    /// # Safety
    /// `value` must be a live tensor value that stays unmodified for `'v`.
    pub(super) unsafe fn tensor_type_and_shape<'v>(
        &self,
        value: *const OrtValue,
    ) -> Result<(i32, &'v [i64]), Error> {
        let (mut code, mut dims, mut rank) = (0i32, std::ptr::null::<i64>(), 0usize);
        // SAFETY: `value` is live (caller); the out-pointers are valid for one write each.
        unsafe {
            call!(
                self,
                GetTensorElementTypeAndShapeDataReference(value, &mut code, &mut dims, &mut rank)
            )
        }?;
        if rank == 0 {
            return Ok((code, &[]));
        }
        if dims.is_null() {
            return Err(format!("ONNX Runtime reported rank {rank} and no dimensions").into());
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
