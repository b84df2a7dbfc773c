//! `libnonzero_ort.so`: an ONNX Runtime custom-op library whose NonZero replaces the built-in one.
//!
//! Load it with `SessionOptions.register_custom_ops_library(path)` (Python),
//! `Ort::SessionOptions::RegisterCustomOpsLibrary` (C++) or
//! `SessionBuilder::with_operator_library` (Rust `ort`). It registers NonZero in the ONNX domain
//! for opsets 9-12 and 13+, for every element type, backed by `nonzero-core`'s parallel kernel on
//! the session's intra-op thread pool.
//!
//! Layout: [`api`] holds the host's C API table, [`op`] the operator tables, [`kernel`] the
//! compute, [`executor`] the thread-pool bridge, [`guard`] the no-unwind boundary.

pub mod api;
pub mod device;
mod executor;
mod gpu;
mod guard;
pub mod kernel;
mod op;
pub mod opset;

use api::{Api, ConfigApi};
use device::{Device, DEVICE_KEY};
use ort_sys::{OrtApiBase, OrtCustomOpDomain, OrtSessionOptions, OrtStatus};
use std::sync::OnceLock;

/// The ONNX-domain op set, created once and shared by every session that loads the library:
/// it only holds pointers to the static operator tables, so it is never released.
struct Domain(*mut OrtCustomOpDomain);
// SAFETY: the domain is filled once under OnceLock and only read (by ONNX Runtime) afterwards.
unsafe impl Send for Domain {}
// SAFETY: as above.
unsafe impl Sync for Domain {}

/// Index 0: the usual ops; index 1: the ops for sessions that asked for the GPU on a host whose
/// kernels cannot read their session's config (see [`op::NonZeroOp`]).
static DOMAINS: [OnceLock<Result<Domain, String>>; 2] = [OnceLock::new(), OnceLock::new()];

fn domain(api: Api, config_unreadable_gpu: bool) -> Result<*mut OrtCustomOpDomain, String> {
    let ops = if config_unreadable_gpu {
        [
            &op::NONZERO_9_CONFIG_UNREADABLE_GPU,
            &op::NONZERO_13_CONFIG_UNREADABLE_GPU,
        ]
    } else {
        [&op::NONZERO_9, &op::NONZERO_13]
    };
    let domain = DOMAINS[usize::from(config_unreadable_gpu)].get_or_init(|| {
        let raw = api.raw();
        let mut domain = std::ptr::null_mut();
        // SAFETY: "" names the ONNX domain; the out-pointer receives a new domain we keep forever.
        api.check(unsafe { (raw.CreateCustomOpDomain)(c"".as_ptr(), &mut domain) })?;
        for op in ops {
            // SAFETY: the op tables are statics, alive for the life of the process.
            api.check(unsafe { (raw.CustomOpDomain_Add)(domain, op.as_ptr()) })?;
        }
        Ok(Domain(domain))
    });
    domain.as_ref().map(|d| d.0).map_err(Clone::clone)
}

/// The entry point ONNX Runtime looks up after loading the library.
///
/// # Safety
/// Called by ONNX Runtime with live session options and its API base.
#[no_mangle]
pub unsafe extern "C" fn RegisterCustomOps(
    options: *mut OrtSessionOptions,
    api_base: *const OrtApiBase,
) -> *mut OrtStatus {
    if options.is_null() || api_base.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: ONNX Runtime passes its own OrtApiBase.
    let api = match unsafe { Api::init(api_base) } {
        Ok(api) => api,
        Err(status) => return status,
    };
    guard::guarded("registering NonZero", || {
        // Hosts from ONNX Runtime 1.24 show each kernel its session's config. Older ones do not:
        // peek at the options being registered (an entry added before register_custom_ops_library
        // is visible here), so that a session asking for the GPU gets kernels that say it cannot.
        let config_unreadable_gpu = ConfigApi::get().is_none()
            // SAFETY: `options` is the live session options this call is for.
            && match unsafe { session_entry(api, options) }? {
                Some(value) => Device::parse(&value, "session config entry custom_op.NonZero.device")?
                    == Device::Gpu,
                None => false,
            };
        let domain = domain(api, config_unreadable_gpu)?;
        // SAFETY: `options` is the live session options this call is for; the domain outlives it.
        api.check(unsafe { (api.raw().AddCustomOpDomain)(options, domain) })
    })
    .0
}

/// The session config entry [`DEVICE_KEY`] of `options` as it stands now.
///
/// # Safety
/// `options` must be live session options.
unsafe fn session_entry(
    api: Api,
    options: *const OrtSessionOptions,
) -> Result<Option<String>, String> {
    let raw = api.raw();
    let mut has = 0;
    // SAFETY: live options (caller), NUL-terminated key, int out-pointer.
    api.check(unsafe { (raw.HasSessionConfigEntry)(options, DEVICE_KEY.as_ptr(), &mut has) })?;
    if has == 0 {
        return Ok(None);
    }
    let mut size = 0usize;
    // SAFETY: a null buffer asks for the size (NUL included); ORT reports it through an error
    // status on some versions, which we ignore as long as `size` was set.
    let _ = api.check(unsafe {
        (raw.GetSessionConfigEntry)(
            options,
            DEVICE_KEY.as_ptr(),
            std::ptr::null_mut(),
            &mut size,
        )
    });
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: `buf` holds `size` bytes.
    api.check(unsafe {
        (raw.GetSessionConfigEntry)(
            options,
            DEVICE_KEY.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut size,
        )
    })?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(Some(String::from_utf8_lossy(&buf[..end]).into_owned()))
}
