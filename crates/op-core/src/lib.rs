//! NonZero for ONNX and DirectML: semantics, validation and a parallel CPU kernel.
//!
//! Every public item has one path, the crate root, except DirectML's operator ([`dml`]) and the
//! kernel's tuning constant ([`kernel::PARALLEL_THRESHOLD`]).
//!
//! - What "zero" means per type: [`Element`] (sealed), [`DataType::magnitude_mask`],
//!   [`str_is_nonzero`]; [`dispatch_element!`] goes from a [`DataType`] to its element type.
//! - Shapes, strides, effective rank: [`Layout`], [`effective_rank`].
//! - The ONNX operator (`[rank, nnz]` int64): [`nonzero`], [`nonzero_with`], `nonzero_array`
//!   (feature `ndarray`, on by default), or the two passes [`Counted::count`] and
//!   [`Counted::write_onnx`].
//! - Element sources: typed slices, [`NumericSlice`] (type known at run time), [`FnSource`].
//! - Where the kernel's tasks run: [`Executor`], [`Sequential`], [`Rayon`].
//! - DirectML's NonZeroCoordinates and its validation rules: [`dml`].
//!
//! Feature `test-support` adds the naive oracle (`reference`) used by tests, fuzzers and the
//! conformance pack; it is not part of the supported API.

mod data;
pub mod dml;
mod dtype;
mod element;
mod error;
pub mod kernel;
mod layout;
mod onnx;
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub mod reference;
mod source;

pub use data::{BytesError, NumericSlice};
pub use dtype::DataType;
pub use element::{str_is_nonzero, Element};
pub use error::Error;
pub use kernel::counted::Counted;
pub use kernel::executor::{Executor, Rayon, Sequential};
pub use kernel::simd::instruction_set;
pub use layout::{effective_rank, row_major_strides, Layout};
#[cfg(feature = "ndarray")]
pub use onnx::nonzero_array;
pub use onnx::{nonzero, nonzero_with, OnnxCoordinates};
pub use source::{string_source, FnSource, ZeroTest};

/// Re-exported element types, so users need not depend on `half` and `num-complex` themselves.
pub use half::{bf16, f16};
pub use num_complex::{Complex32, Complex64};
