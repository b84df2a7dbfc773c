//! Strings that ONNX Runtime copies into a caller's buffer after reporting their size.

use super::api::Api;
use ort_sys::OrtStatusPtr;
use std::ffi::c_char;

/// Calls `get(buffer, &mut size)` twice, ONNX Runtime's convention: first with a null buffer to
/// learn the size (NUL included; some versions report it through an error status, ignored as long
/// as the size was set), then with a buffer of that size. `Ok(None)` when the size stays 0.
///
/// # Safety
/// `get` must be a host function that writes at most `*size` bytes to a non-null buffer.
pub(super) unsafe fn read_string(
    api: Api,
    mut get: impl FnMut(*mut c_char, *mut usize) -> OrtStatusPtr,
) -> Result<Option<String>, String> {
    let mut size = 0usize;
    let _ = api.check(get(std::ptr::null_mut(), &mut size));
    if size == 0 {
        return Ok(None);
    }
    let mut buf = vec![0u8; size];
    api.check(get(buf.as_mut_ptr().cast(), &mut size))?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(Some(String::from_utf8_lossy(&buf[..end]).into_owned()))
}
