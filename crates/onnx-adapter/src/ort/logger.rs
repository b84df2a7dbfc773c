//! ONNX Runtime's logger, borrowed from a kernel info or a kernel context.

use super::api::Api;
use ort_sys::{OrtLogger, OrtLoggingLevel};
use std::ffi::CString;
use std::marker::PhantomData;

/// A logger that lives as long as the kernel info or context it came from (`'a`).
pub struct Logger<'a> {
    api: Api,
    logger: *const OrtLogger,
    owner: PhantomData<&'a ()>,
}

impl Logger<'_> {
    /// # Safety
    /// `logger` must be non-null and live for `'a`.
    pub(super) unsafe fn new<'a>(api: Api, logger: *const OrtLogger) -> Logger<'a> {
        Logger {
            api,
            logger,
            owner: PhantomData,
        }
    }

    /// Logs `message` at WARNING level. Failures are ignored: logging must never turn a working
    /// call into a failing one.
    pub fn warn(&self, message: &str) {
        let msg = CString::new(message.replace('\0', "\\0")).expect("NULs replaced");
        // SAFETY: the logger is live for this value's lifetime (constructor); the strings are
        // NUL-terminated and outlive the call, which copies them.
        let status = unsafe {
            (self.api.table().Logger_LogMessage)(
                self.logger,
                OrtLoggingLevel::ORT_LOGGING_LEVEL_WARNING,
                msg.as_ptr(),
                LOG_FILE.as_ptr(),
                0,
                c"nonzero_ort".as_ptr(),
            )
        };
        let _ = self.api.check(status);
    }
}

/// The "file" our log lines name (ORT prints it only at verbose levels). `os_char` is UTF-16 on
/// Windows and `char` elsewhere.
#[cfg(windows)]
static LOG_FILE: [ort_sys::os_char; 12] = {
    let ascii = *b"nonzero_ort\0";
    let mut wide = [0u16; 12];
    let mut i = 0;
    while i < ascii.len() {
        wide[i] = ascii[i] as u16;
        i += 1;
    }
    wide
};
#[cfg(not(windows))]
static LOG_FILE: &std::ffi::CStr = c"nonzero_ort";
