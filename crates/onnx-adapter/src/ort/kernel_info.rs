//! A node as ONNX Runtime describes it when creating its kernel: name, logger, session config.

use super::api::Api;
use super::api24::Api24;
use super::logger::Logger;
use super::strings::read_string;
use ort_sys::OrtKernelInfo;
use std::ffi::CStr;
use std::marker::PhantomData;

/// A session config entry as a kernel can see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigEntry {
    /// This host cannot show custom ops their session's config (ONNX Runtime < 1.24).
    Unreadable,
    Absent,
    Value(String),
}

/// A live `OrtKernelInfo`, valid during the kernel creation that received it (`'a`).
pub struct KernelInfo<'a> {
    api: Api,
    info: *const OrtKernelInfo,
    call: PhantomData<&'a ()>,
}

impl<'a> KernelInfo<'a> {
    /// # Safety
    /// `info` must be the live kernel info of the current CreateKernel call, lasting for `'a`.
    pub(super) unsafe fn new(api: Api, info: *const OrtKernelInfo) -> KernelInfo<'a> {
        KernelInfo {
            api,
            info,
            call: PhantomData,
        }
    }

    /// The node's name ("" when the model gives none or the host cannot report it).
    pub fn node_name(&self) -> String {
        let table = self.api.table();
        // SAFETY: the info is live; read_string passes a buffer of the size it passes in.
        unsafe {
            read_string(self.api, |buf, size| {
                (table.KernelInfo_GetNodeName)(self.info, buf, size)
            })
        }
        .ok()
        .flatten()
        .unwrap_or_default()
    }

    /// The session config entry `key` of this node's session.
    pub fn config_entry(&self, key: &CStr) -> Result<ConfigEntry, String> {
        let Some(config) = Api24::get() else {
            return Ok(ConfigEntry::Unreadable);
        };
        // SAFETY: the info is live for this call.
        let value = unsafe { config.entry(self.info, key) }.map_err(|e| {
            format!(
                "reading the session config entry {}: {e}",
                key.to_string_lossy()
            )
        })?;
        Ok(value.map_or(ConfigEntry::Absent, ConfigEntry::Value))
    }

    /// The int attribute `name`, `None` when the node does not set it.
    pub fn attribute_i64(&self, name: &CStr) -> Option<i64> {
        let mut value = 0i64;
        // SAFETY: the info is live; `name` is NUL-terminated; the out-pointer is an i64.
        let status = unsafe {
            (self.api.table().KernelInfoGetAttribute_int64)(self.info, name.as_ptr(), &mut value)
        };
        // ONNX Runtime reports a missing attribute as an error status.
        self.api.check(status).ok().map(|()| value)
    }

    /// True when the node sets the attribute `name`, of any type. ONNX Runtime cannot list a
    /// node's attributes to a custom op; it can only be asked for one by name and type, and it
    /// tells a missing name ("No attribute with name") from a type that does not match.
    pub fn has_attribute(&self, name: &CStr) -> bool {
        let mut value = 0i64;
        // SAFETY: the info is live; `name` is NUL-terminated; the out-pointer is an i64.
        let status = unsafe {
            (self.api.table().KernelInfoGetAttribute_int64)(self.info, name.as_ptr(), &mut value)
        };
        match self.api.check(status) {
            Ok(()) => true,
            Err(message) => !message.contains("No attribute with name"),
        }
    }

    /// The node's logger, if ONNX Runtime hands one out.
    pub fn logger(&self) -> Option<Logger<'a>> {
        let mut logger = std::ptr::null();
        // SAFETY: the info is live; the logger it returns lives as long as the kernel info.
        let status = unsafe { (self.api.table().KernelInfo_GetLogger)(self.info, &mut logger) };
        if self.api.check(status).is_err() || logger.is_null() {
            return None;
        }
        // SAFETY: non-null, live as long as the info (`'a`).
        Some(unsafe { Logger::new(self.api, logger) })
    }
}
