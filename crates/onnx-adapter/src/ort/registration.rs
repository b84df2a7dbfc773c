//! Registration: what `RegisterCustomOps` does for a [`Library`]. The library reads what it needs
//! of the session being registered ([`Session`]: its config entries, the host), decides its
//! settings, and lists its ops for those settings in an [`OpSet`]; this module turns each op into
//! a table (`op_table.rs`), groups the tables into domains, and adds the domains to the options.
//! Nothing here knows an op: the library is the only link from this layer to them.

use super::api::Api;
use super::api24::Api24;
use super::call::call;
use super::op_table::{op_name, OpTable};
use super::status::{guard, Error};
use super::strings::read_string;
use super::Operator;
use ort_sys::{OrtApiBase, OrtCustomOp, OrtCustomOpDomain, OrtSessionOptions, OrtStatus};
use std::ffi::{c_int, CStr};
use std::fmt::Debug;
use std::sync::Mutex;

/// The opset versions an op registration covers, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VersionRange {
    start: c_int,
    end: c_int,
}

impl VersionRange {
    /// Opsets `start` to `end`.
    pub fn between(start: c_int, end: c_int) -> VersionRange {
        VersionRange { start, end }
    }

    pub(super) fn start(&self) -> c_int {
        self.start
    }

    pub(super) fn end(&self) -> c_int {
        self.end
    }

    #[cfg(test)]
    fn contains(&self, opset: c_int) -> bool {
        (self.start..=self.end).contains(&opset)
    }

    fn check(&self) -> Result<(), String> {
        if self.start < 1 || self.end < self.start {
            return Err(format!(
                "opset range {}..={} is empty or starts below 1",
                self.start, self.end
            ));
        }
        Ok(())
    }
}

/// A custom-op library as registration needs it: what it reads of a session, and the ops it
/// registers for what it read. `S` (the settings) is what may differ between sessions of one
/// process; the ops of each distinct `S` are built once, since ONNX Runtime keeps pointers to
/// them for the life of the process.
#[derive(Debug)]
pub(crate) struct Library<S: 'static> {
    settings: fn(&Session<'_>) -> Result<S, Error>,
    ops: fn(&mut OpSet, &S),
    built: Mutex<Vec<Built<S>>>,
}

/// The domains made for one settings value, or why they could not be.
type Built<S> = (S, Result<Vec<Domain>, String>);

impl<S: Clone + PartialEq + Debug + Send + 'static> Library<S> {
    /// `settings` reads a session being registered; `ops` lists the ops for its settings.
    pub const fn new(
        settings: fn(&Session<'_>) -> Result<S, Error>,
        ops: fn(&mut OpSet, &S),
    ) -> Library<S> {
        Library {
            settings,
            ops,
            built: Mutex::new(Vec::new()),
        }
    }

    /// Adds the domains of `settings` to `options`, building them the first time.
    fn add_domains(
        &self,
        api: Api,
        settings: S,
        options: *mut OrtSessionOptions,
    ) -> Result<(), Error> {
        // A panic while building leaves the list as it was, so a poisoned lock is still sound.
        let mut built = self.built.lock().unwrap_or_else(|p| p.into_inner());
        let index = match built.iter().position(|(s, _)| *s == settings) {
            Some(index) => index,
            None => {
                let mut set = OpSet::default();
                (self.ops)(&mut set, &settings);
                built.push((settings, set.into_domains(api)));
                built.len() - 1
            }
        };
        let domains = built[index]
            .1
            .as_ref()
            .map_err(|e| Error::from(e.as_str()))?;
        for domain in domains {
            // SAFETY: `options` is live (our caller's contract); the domain is never released.
            unsafe { call!(api, AddCustomOpDomain(options, domain.0)) }?;
        }
        Ok(())
    }
}

/// The session options being registered, as a library's settings function reads them.
#[derive(Debug)]
pub(crate) struct Session<'a> {
    api: Api,
    options: &'a OrtSessionOptions,
}

impl Session<'_> {
    /// Whether this host shows kernels their session's config entries (ONNX Runtime 1.24+).
    /// On older hosts, an entry a kernel needs must be read here, at registration.
    pub fn kernels_read_config(&self) -> bool {
        Api24::get().is_some()
    }

    /// The session config entry `key` as it stands now: an entry is visible here when it was
    /// added before the library was registered.
    pub fn config_entry(&self, key: &CStr) -> Result<Option<String>, Error> {
        // SAFETY: `options` is the live session options this registration is for.
        unsafe { session_entry(self.api, self.options, key) }
    }
}

/// The ops of one registration, by domain, as [`OpSet::add`] collects them.
#[derive(Debug, Default)]
pub(crate) struct OpSet {
    domains: Vec<(&'static CStr, Vec<*const OrtCustomOp>)>,
    errors: Vec<String>,
}

impl OpSet {
    /// Registers `op` in `domain` ("" = ONNX) for the opsets `versions`.
    pub fn add<O: Operator>(&mut self, domain: &'static CStr, op: O, versions: VersionRange) {
        if let Err(e) = versions.check() {
            self.errors.push(format!("{}: {e}", op_name::<O>()));
            return;
        }
        let table = OpTable::leak(op, versions);
        match self.domains.iter_mut().find(|(name, _)| *name == domain) {
            Some((_, ops)) => ops.push(table),
            None => self.domains.push((domain, vec![table])),
        }
    }

    /// The domains to add to a session's options, made through the host.
    fn into_domains(self, api: Api) -> Result<Vec<Domain>, String> {
        if !self.errors.is_empty() {
            return Err(self.errors.join("; "));
        }
        let mut made = Vec::new();
        for (name, ops) in &self.domains {
            let mut domain = std::ptr::null_mut();
            // SAFETY: `name` is NUL-terminated; the out-pointer receives a domain kept forever.
            unsafe { call!(api, CreateCustomOpDomain(name.as_ptr(), &mut domain)) }
                .map_err(|e| e.to_string())?;
            for &op in ops {
                // SAFETY: the op tables are leaked, alive for the life of the process.
                unsafe { call!(api, CustomOpDomain_Add(domain, op)) }.map_err(|e| e.to_string())?;
            }
            made.push(Domain(domain));
        }
        Ok(made)
    }
}

/// A domain made once and shared by every session that registers the same settings: it only
/// holds pointers to leaked op tables, so it is never released.
#[derive(Debug)]
struct Domain(*mut OrtCustomOpDomain);
// SAFETY: a domain is filled once, under the library's lock, and only read (by ONNX Runtime)
// afterwards.
unsafe impl Send for Domain {}

/// The body of `RegisterCustomOps`: asks the host for its API, lets `library` read the session
/// and decide its settings, and adds the domains of those settings to `options`.
///
/// # Safety
/// `options` and `api_base` must be the live arguments ONNX Runtime passed to `RegisterCustomOps`.
pub(crate) unsafe fn register_custom_ops<S: Clone + PartialEq + Debug + Send + 'static>(
    options: *mut OrtSessionOptions,
    api_base: *const OrtApiBase,
    library: &Library<S>,
) -> *mut OrtStatus {
    if options.is_null() || api_base.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: ONNX Runtime passes its own OrtApiBase.
    let api = match unsafe { Api::init(api_base) } {
        Ok(api) => api,
        Err(status) => return status,
    };
    let where_ = || "nonzero_ort: registering custom ops".to_string();
    guard(where_, || {
        // SAFETY: `options` is non-null and live for this call (our caller's contract).
        let options_ref = unsafe { &*options };
        let session = Session {
            api,
            options: options_ref,
        };
        let settings = (library.settings)(&session)?;
        library.add_domains(api, settings, options)
    })
    .0
}

/// The session config entry `key` of `options` as it stands now.
///
/// # Safety
/// `options` must be live session options.
unsafe fn session_entry(
    api: Api,
    options: *const OrtSessionOptions,
    key: &CStr,
) -> Result<Option<String>, Error> {
    let mut has = 0;
    // SAFETY: live options (caller), NUL-terminated key, int out-pointer.
    unsafe { call!(api, HasSessionConfigEntry(options, key.as_ptr(), &mut has)) }?;
    if has == 0 {
        return Ok(None);
    }
    let table = api.table();
    // SAFETY: GetSessionConfigEntry writes at most `*size` bytes to a non-null buffer.
    let value = unsafe {
        read_string(api, |buf, size| {
            (table.GetSessionConfigEntry)(options, key.as_ptr(), buf, size)
        })
    }
    .map_err(|e| Error::host("GetSessionConfigEntry", e))?;
    Ok(Some(value.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::VersionRange;

    #[test]
    fn version_ranges_include_both_ends_and_refuse_empty_ones() {
        let nine = VersionRange::between(9, 12);
        assert!(nine.contains(9) && nine.contains(12));
        assert!(!nine.contains(8) && !nine.contains(13));
        let open = VersionRange::between(13, std::ffi::c_int::MAX);
        assert!(open.contains(13) && open.contains(21) && open.contains(std::ffi::c_int::MAX));
        assert_eq!((open.start, open.end), (13, std::ffi::c_int::MAX));
        assert!(nine.check().is_ok() && open.check().is_ok());
        let empty = VersionRange::between(13, 12).check().unwrap_err();
        assert_eq!(empty, "opset range 13..=12 is empty or starts below 1");
        assert!(VersionRange::between(0, 3).check().is_err());
    }
}
