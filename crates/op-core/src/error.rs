//! Errors of the shape and kernel layer. DirectML validation has its own typed errors in
//! [`crate::dml::DmlError`].

use std::fmt;

/// Why a NonZero call was refused. Nothing is written to the output when one is returned, but for
/// [`Error::SourceChanged`], which the second pass finds while writing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The product of the sizes does not fit in `usize`.
    ElementCountOverflow { sizes: Vec<usize> },
    /// `strides` and `sizes` have different lengths.
    StrideRankMismatch { sizes: usize, strides: usize },
    /// The data holds fewer elements than the layout addresses.
    DataTooShort { needed: usize, actual: usize },
    /// A packed input's data length differs from the product of its sizes.
    DataLengthMismatch { expected: usize, actual: usize },
    /// The output buffer has the wrong number of elements.
    OutputLengthMismatch { expected: usize, actual: usize },
    /// The second pass found another number of non-zeros than the first counted: the source
    /// changed between them (a source whose zero test is not a pure function of its data).
    SourceChanged { counted: usize, found: usize },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ElementCountOverflow { sizes } => {
                write!(f, "the element count of shape {sizes:?} overflows usize")
            }
            Error::StrideRankMismatch { sizes, strides } => write!(
                f,
                "a strided view needs one stride per dimension: {sizes} sizes but {strides} strides"
            ),
            Error::DataTooShort { needed, actual } => write!(
                f,
                "the view addresses {needed} elements but the data holds only {actual}"
            ),
            Error::DataLengthMismatch { expected, actual } => write!(
                f,
                "a packed tensor of this shape has {expected} elements, but the data holds {actual}"
            ),
            Error::OutputLengthMismatch { expected, actual } => write!(
                f,
                "the output buffer must hold exactly {expected} elements, it holds {actual}"
            ),
            Error::SourceChanged { counted, found } => write!(
                f,
                "the input changed while it was read: {counted} non-zeros counted, then {found} found"
            ),
        }
    }
}

impl std::error::Error for Error {}
