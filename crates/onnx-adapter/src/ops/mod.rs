//! The ops this library registers. Adding one is a file here (an [`Operator`](crate::ort::Operator))
//! and one `set.add` line below.

mod argwhere;
mod boolean_mask;
mod boolean_mask_axis;
mod coordinates;
mod input;
mod masked_write;
mod nonzero;

use crate::device;
use crate::opset;
use crate::ort::{Error, Library, OpSet, Session, VersionRange};
use std::ffi::CStr;

/// The ONNX domain: ops registered here replace ONNX Runtime's own.
const ONNX: &CStr = c"";
/// This library's own domain (opset 1): models import it as `nonzero`.
const NONZERO: &CStr = c"nonzero";

/// This library, as `RegisterCustomOps` registers it.
pub(crate) static LIBRARY: Library<Settings> = Library::new(settings, register);

/// What registration reads of a session, and what may differ between the sessions of one
/// process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Settings {
    /// The session asked for the GPU through its config, but this host cannot show kernels the
    /// config (ONNX Runtime < 1.24): NonZero kernels say so and run on the CPU.
    gpu_requested_unreadable: bool,
    /// NonZero replaces ONNX Runtime's own (the default), or only the `nonzero` domain is
    /// registered ([`opset::ONNX_DOMAIN_KEY`] = "0").
    onnx_domain: bool,
}

fn settings(session: &Session<'_>) -> Result<Settings, Error> {
    let readable = session.kernels_read_config();
    // Hosts from ONNX Runtime 1.24 show each kernel its session's config. Older ones do not:
    // peek at the options being registered, so that a session asking for the GPU gets kernels
    // that say it cannot.
    let entry = if readable {
        None
    } else {
        session.config_entry(device::DEVICE_KEY)?
    };
    let onnx_domain = session.config_entry(opset::ONNX_DOMAIN_KEY)?;
    Ok(Settings {
        gpu_requested_unreadable: device::gpu_requested_unreadable(readable, entry.as_deref())?,
        onnx_domain: opset::onnx_domain(onnx_domain.as_deref())?,
    })
}

/// Every op, in its domain and opset range. NonZero's ONNX ranges come from [`opset`], which
/// says why NonZero-13 stays open-ended on every host, and why a session may ask for the
/// `nonzero` domain alone.
fn register(set: &mut OpSet, settings: &Settings) {
    let nonzero = nonzero::NonZero {
        gpu_requested_unreadable: settings.gpu_requested_unreadable,
    };
    if settings.onnx_domain {
        let (start, end) = opset::NONZERO_9;
        set.add(ONNX, nonzero.clone(), VersionRange::between(start, end));
        let (start, end) = opset::NONZERO_13;
        set.add(ONNX, nonzero.clone(), VersionRange::between(start, end));
    }
    set.add(NONZERO, nonzero, VersionRange::between(1, 1));
    set.add(NONZERO, argwhere::ArgWhere, VersionRange::between(1, 1));
    set.add(
        NONZERO,
        boolean_mask::BooleanMask,
        VersionRange::between(1, 1),
    );
    set.add(
        NONZERO,
        boolean_mask_axis::BooleanMaskAxis,
        VersionRange::between(1, 1),
    );
    set.add(
        NONZERO,
        coordinates::NonZeroCoordinates,
        VersionRange::between(1, 1),
    );
    set.add(
        NONZERO,
        masked_write::MaskedFill,
        VersionRange::between(1, 1),
    );
    set.add(
        NONZERO,
        masked_write::MaskedScatter,
        VersionRange::between(1, 1),
    );
}
