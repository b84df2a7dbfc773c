//! Why a masked write (MaskedFill, MaskedScatter) was refused; each variant names the rule.

use std::fmt;

/// A masked-write rule a call broke. Nothing the caller owns is written when one is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteError {
    /// The mask must be bool.
    MaskType {
        op: &'static str,
        found: &'static str,
    },
    /// The mask must have X's shape.
    MaskShape {
        op: &'static str,
        mask_shape: Vec<usize>,
        x_shape: Vec<usize>,
    },
    /// MaskedFill's value must broadcast to X's shape (ONNX's unidirectional broadcasting).
    ValueShape {
        value_shape: Vec<usize>,
        x_shape: Vec<usize>,
    },
    /// MaskedScatter's source must hold a value for every selected element.
    SourceTooShort { selected: usize, available: usize },
    /// The element count of a shape overflows usize.
    ElementCountOverflow { sizes: Vec<usize> },
    /// A buffer holds a different number of bytes than its shape says.
    Length {
        what: &'static str,
        expected: usize,
        actual: usize,
    },
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::MaskType { op, found } => {
                write!(f, "{op}'s mask must be a bool tensor, not {found}")
            }
            WriteError::MaskShape {
                op,
                mask_shape,
                x_shape,
            } => write!(
                f,
                "{op}'s mask shape {mask_shape:?} must equal X's shape {x_shape:?}"
            ),
            WriteError::ValueShape {
                value_shape,
                x_shape,
            } => write!(
                f,
                "MaskedFill's value of shape {value_shape:?} must broadcast to X's shape \
                 {x_shape:?} (each dimension, right-aligned, 1 or equal; no more dimensions than X)"
            ),
            WriteError::SourceTooShort {
                selected,
                available,
            } => write!(
                f,
                "MaskedScatter's source must hold at least one value per selected element: the \
                 mask selects {selected}, the source holds {available}"
            ),
            WriteError::ElementCountOverflow { sizes } => {
                write!(f, "the element count of shape {sizes:?} overflows usize")
            }
            WriteError::Length {
                what,
                expected,
                actual,
            } => write!(
                f,
                "{what} must hold {expected} bytes for its shape, it holds {actual}"
            ),
        }
    }
}

impl std::error::Error for WriteError {}
