//! The ops this library registers. Adding one is a file here (an [`Operator`](crate::ort::Operator))
//! and one `set.add` line below.

mod argwhere;
mod boolean_mask;
mod coordinates;
mod input;
mod nonzero;

use crate::ort::{OpSet, VersionRange};
use std::ffi::CStr;

/// The ONNX domain: ops registered here replace ONNX Runtime's own.
const ONNX: &CStr = c"";
/// This library's own domain (opset 1): models import it as `nonzero`.
const NONZERO: &CStr = c"nonzero";

/// Every op, in its domain and opset range. The ranges are computed here, at registration, so
/// they may depend on the host (`set.registration().host_version`).
pub(crate) fn register(set: &mut OpSet) {
    set.add(ONNX, nonzero::NonZero, VersionRange::between(9, 12));
    set.add(ONNX, nonzero::NonZero, VersionRange::since(13));
    set.add(NONZERO, argwhere::ArgWhere, VersionRange::between(1, 1));
    set.add(
        NONZERO,
        boolean_mask::BooleanMask,
        VersionRange::between(1, 1),
    );
    set.add(
        NONZERO,
        coordinates::NonZeroCoordinates,
        VersionRange::between(1, 1),
    );
}
