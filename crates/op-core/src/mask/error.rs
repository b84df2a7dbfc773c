//! Why a BooleanMask call was refused; each variant names the rule it broke.

use std::fmt;

/// A BooleanMask rule a call broke. Nothing is written to the output when one is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MaskError {
    /// The mask must be bool.
    MaskType { found: &'static str },
    /// The mask must have rank 1 or more.
    ScalarMask { x_shape: Vec<usize> },
    /// The mask's shape must equal the leading dimensions of X's shape.
    ShapeMismatch {
        mask_shape: Vec<usize>,
        x_shape: Vec<usize>,
    },
    /// The element count of a shape overflows usize.
    ElementCountOverflow { sizes: Vec<usize> },
    /// The mask's data holds a different number of entries than its shape.
    MaskLength { expected: usize, actual: usize },
    /// X's data must hold one slice per mask entry.
    InputLength {
        mask_len: usize,
        slice_bytes: usize,
        actual: usize,
    },
    /// The output buffer must hold exactly the selected slices.
    OutputLength { expected: usize, actual: usize },
    /// BooleanMaskAxis's axis must be one of X's (`-rank..rank`).
    Axis { axis: i64, x_shape: Vec<usize> },
    /// BooleanMaskAxis's mask selects a position past the end of the axis.
    PastAxisEnd {
        position: usize,
        axis: usize,
        axis_len: usize,
    },
}

impl fmt::Display for MaskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaskError::MaskType { found } => {
                write!(f, "BooleanMask's mask must be a bool tensor, not {found}")
            }
            MaskError::ScalarMask { x_shape } => write!(
                f,
                "BooleanMask's mask must have rank 1 or more (its shape is the leading dimensions of \
                 X's shape {x_shape:?}); got a scalar mask"
            ),
            MaskError::ShapeMismatch {
                mask_shape,
                x_shape,
            } => write!(
                f,
                "mask shape {mask_shape:?} must equal the leading dimensions of X's shape {x_shape:?}"
            ),
            MaskError::ElementCountOverflow { sizes } => {
                write!(f, "the element count of shape {sizes:?} overflows usize")
            }
            MaskError::MaskLength { expected, actual } => write!(
                f,
                "the mask's shape has {expected} elements, but its data holds {actual}"
            ),
            MaskError::InputLength {
                mask_len,
                slice_bytes,
                actual,
            } => write!(
                f,
                "X must hold one {slice_bytes}-byte slice per mask entry ({mask_len} entries), \
                 its data holds {actual} bytes"
            ),
            MaskError::OutputLength { expected, actual } => write!(
                f,
                "the output buffer must hold exactly {expected} bytes, it holds {actual}"
            ),
            MaskError::Axis { axis, x_shape } => write!(
                f,
                "BooleanMaskAxis's axis {axis} is not an axis of X's shape {x_shape:?} (it must be \
                 in -rank..rank, and X must have rank 1 or more)"
            ),
            MaskError::PastAxisEnd {
                position,
                axis,
                axis_len,
            } => write!(
                f,
                "BooleanMaskAxis's mask selects position {position}, past the end of X's axis \
                 {axis} (size {axis_len}), as the Gather it stands for would refuse"
            ),
        }
    }
}

impl std::error::Error for MaskError {}
