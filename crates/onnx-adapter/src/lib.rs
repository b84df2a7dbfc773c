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
mod executor;
mod guard;
pub mod kernel;
mod op;

use api::Api;
use ort_sys::{OrtApiBase, OrtCustomOpDomain, OrtSessionOptions, OrtStatus};
use std::sync::OnceLock;

/// The ONNX-domain op set, created once and shared by every session that loads the library:
/// it only holds pointers to the static operator tables, so it is never released.
struct Domain(*mut OrtCustomOpDomain);
// SAFETY: the domain is filled once under OnceLock and only read (by ONNX Runtime) afterwards.
unsafe impl Send for Domain {}
// SAFETY: as above.
unsafe impl Sync for Domain {}

static DOMAIN: OnceLock<Result<Domain, String>> = OnceLock::new();

fn domain(api: Api) -> Result<*mut OrtCustomOpDomain, String> {
    let domain = DOMAIN.get_or_init(|| {
        let raw = api.raw();
        let mut domain = std::ptr::null_mut();
        // SAFETY: "" names the ONNX domain; the out-pointer receives a new domain we keep forever.
        api.check(unsafe { (raw.CreateCustomOpDomain)(c"".as_ptr(), &mut domain) })?;
        for op in [&op::NONZERO_9, &op::NONZERO_13] {
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
        let domain = domain(api)?;
        // SAFETY: `options` is the live session options this call is for; the domain outlives it.
        api.check(unsafe { (api.raw().AddCustomOpDomain)(options, domain) })
    })
    .0
}
