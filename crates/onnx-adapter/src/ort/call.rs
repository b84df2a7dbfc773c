//! [`call!`]: one call of a host C function that returns a status, written once. The function's
//! name is written once too: a failure becomes [`Error::host`](super::Error) naming it.
//!
//! `call!(host, F(args..))` calls `F` from `host`'s table and maps a failed status to
//! `Err(Error::host("F", message))`. `host` is an [`Api`](super::api::Api) (the host's `OrtApi`)
//! or a [`ComputeApi`](super::api::ComputeApi) (the few functions a compute copies into its
//! kernel object, whose fields carry the C functions' names). The call is as unsafe as the C
//! function, so the macro is used inside an `unsafe` block that states why the call is sound:
//!
//! `call!(host, F as T, (args..))` reads `F` as the function type `T` first.
//!
//! ```ignore
//! // SAFETY: `info` is live and `buf` holds `rank` elements.
//! unsafe { call!(api, GetDimensions(info, buf.as_mut_ptr(), rank)) }?;
//! ```

macro_rules! call {
    ($host:expr, $function:ident($($arg:expr),* $(,)?)) => {{
        let host = &$host;
        let status = (host.table().$function)($($arg),*);
        host.api().check(status).map_err(|message| {
            $crate::ort::Error::host(stringify!($function), message)
        })
    }};
    // `F as T(args..)`: `F` read as the function type `T` first (an enum parameter taken as the
    // C int it is, say); the caller's SAFETY comment says why `T` is `F`'s ABI.
    ($host:expr, $function:ident as $signature:ty, ($($arg:expr),* $(,)?)) => {{
        let host = &$host;
        // The source type is the table field's, whatever it is: `$signature` is the one that
        // matters, and the caller vouches for it.
        #[allow(clippy::missing_transmute_annotations)]
        let function = std::mem::transmute::<_, $signature>(host.table().$function);
        let status = function($($arg),*);
        host.api().check(status).map_err(|message| {
            $crate::ort::Error::host(stringify!($function), message)
        })
    }};
}

pub(super) use call;
