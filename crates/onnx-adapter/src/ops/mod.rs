//! The ops this library registers. Adding one is a file here (an [`Operator`](crate::ort::Operator))
//! and one `set.add` line below.

mod argwhere;
mod boolean_mask;
mod coordinates;
mod input;
mod nonzero;

use crate::opset;
use crate::ort::{OpSet, VersionRange};
use std::ffi::CStr;

/// The ONNX domain: ops registered here replace ONNX Runtime's own.
const ONNX: &CStr = c"";
/// This library's own domain (opset 1): models import it as `nonzero`.
const NONZERO: &CStr = c"nonzero";

/// Every op, in its domain and opset range. NonZero's ranges come from [`opset`], which says
/// why NonZero-13 stays open-ended on every host.
pub(crate) fn register(set: &mut OpSet) {
    let (start, end) = opset::NONZERO_9;
    set.add(ONNX, nonzero::NonZero, VersionRange::between(start, end));
    let (start, end) = opset::NONZERO_13;
    set.add(ONNX, nonzero::NonZero, VersionRange::between(start, end));
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
