//! Errors on their way to ONNX Runtime, and the one place a panic is caught.
//!
//! Every entry point ONNX Runtime calls (registration, the op tables' trampolines, pool tasks)
//! runs its body through [`guard`] or [`catch_panic`]: nothing unwinds into C++, and every failure
//! becomes an `OrtStatus` whose message says where it happened.

use super::api::Api;
use ort_sys::{OrtErrorCode, OrtStatusPtr};
use std::any::Any;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The kind of failure, as ONNX Runtime reports it to its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ErrorKind {
    /// ONNX Runtime refused a call, or something outside the input failed.
    Fail,
    /// The input's shape, values or attributes break an operator's rule.
    InvalidArgument,
    /// The input's element type is one the operator does not implement.
    NotImplemented,
}

/// An operator's error: a kind and a message that names the rule that was broken. The layer
/// prefixes the operator and node (`NonZero node 'x': ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub(super) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
        }
    }

    pub fn invalid_argument(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    pub fn not_implemented(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::NotImplemented, message)
    }

    /// ONNX Runtime's own function `call` failed with `message`.
    pub(super) fn host(call: &str, message: String) -> Error {
        Error::new(
            ErrorKind::Fail,
            format!("ONNX Runtime's {call} failed: {message}"),
        )
    }

    fn code(&self) -> OrtErrorCode {
        match self.kind {
            ErrorKind::Fail => OrtErrorCode::ORT_FAIL,
            ErrorKind::InvalidArgument => OrtErrorCode::ORT_INVALID_ARGUMENT,
            ErrorKind::NotImplemented => OrtErrorCode::ORT_NOT_IMPLEMENTED,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::new(ErrorKind::Fail, message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Error {
        Error::new(ErrorKind::Fail, message)
    }
}

/// Runs `body`, turning a panic into `Err(its message)`. The crate's only `catch_unwind`.
pub(crate) fn catch_panic<T>(body: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(body)).map_err(|panic| panic_message(&panic))
}

fn panic_message(panic: &Box<dyn Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown payload".to_string()
    }
}

/// The message of a failed entry point: `"{where_}: {error}"`, or for a panic
/// `"{where_}: internal error (panic: ...)"`, with the status code ONNX Runtime shows.
pub(super) fn failure_message(
    where_: &str,
    outcome: Result<Error, String>,
) -> (OrtErrorCode, String) {
    match outcome {
        Ok(error) => (error.code(), format!("{where_}: {error}")),
        Err(panic) => (
            OrtErrorCode::ORT_RUNTIME_EXCEPTION,
            format!("{where_}: internal error (panic: {panic})"),
        ),
    }
}

/// Runs an entry point's `body`. Success costs nothing more; a failure or panic becomes an error
/// status whose message starts with `where_()` (only formatted then).
pub(super) fn guard(
    where_: impl FnOnce() -> String,
    body: impl FnOnce() -> Result<(), Error>,
) -> OrtStatusPtr {
    let failure = match catch_panic(body) {
        Ok(Ok(())) => return OrtStatusPtr(std::ptr::null_mut()),
        Ok(Err(error)) => Ok(error),
        Err(panic) => Err(panic),
    };
    let (code, message) = failure_message(&where_(), failure);
    match Api::get() {
        Some(api) => OrtStatusPtr(api.status(code, &message)),
        // Without the host's API there is no way to build a status; this cannot happen after a
        // successful RegisterCustomOps, which every other entry point follows.
        None => OrtStatusPtr(std::ptr::null_mut()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_keep_their_kind_and_name_the_place() {
        let (code, message) = failure_message(
            "NonZero node 'nz'",
            Ok(Error::invalid_argument(
                "input shape [-1] has a negative size",
            )),
        );
        assert_eq!(code, OrtErrorCode::ORT_INVALID_ARGUMENT);
        assert_eq!(
            message,
            "NonZero node 'nz': input shape [-1] has a negative size"
        );
        let (code, _) = failure_message("x", Ok(Error::not_implemented("float8")));
        assert_eq!(code, OrtErrorCode::ORT_NOT_IMPLEMENTED);
        let (code, message) = failure_message("x", Ok("plain".into()));
        assert_eq!(
            (code, message.as_str()),
            (OrtErrorCode::ORT_FAIL, "x: plain")
        );
        let host = Error::host("KernelContext_GetInput", "no such input".into());
        assert_eq!(
            host.to_string(),
            "ONNX Runtime's KernelContext_GetInput failed: no such input"
        );
    }

    #[test]
    fn panics_become_runtime_exceptions_with_their_message() {
        let caught = catch_panic(|| -> u8 { panic!("boom {}", 7) });
        assert_eq!(caught, Err("boom 7".to_string()));
        assert_eq!(catch_panic(|| 3), Ok(3));
        let (code, message) = failure_message("NonZero node 'nz'", caught.map(|_| "".into()));
        assert_eq!(code, OrtErrorCode::ORT_RUNTIME_EXCEPTION);
        assert_eq!(message, "NonZero node 'nz': internal error (panic: boom 7)");
    }
}
