//! NonZero for ONNX and DirectML: semantics, validation and a parallel CPU kernel.
//!
//! Every public item has one path, the crate root, except DirectML's operator ([`dml`]),
//! BooleanMask ([`mask`]), masked writes ([`write`]) and the kernel's tuning constants and one-pass shape test ([`kernel`]).
//!
//! - What "zero" means per type: [`Element`] (sealed), [`DataType::magnitude_mask`],
//!   [`str_is_nonzero`]; [`dispatch_element!`] goes from a [`DataType`] to its element type.
//! - Shapes, strides, effective rank: [`Layout`], [`effective_rank`].
//! - The ONNX operator (`[rank, nnz]` int64): [`nonzero`], [`nonzero_with`], `nonzero_array`
//!   (feature `ndarray`, on by default), or the two passes [`Counted::count`] and
//!   [`Counted::write_onnx`].
//! - Element sources: typed slices, [`NumericSlice`] (type known at run time), [`FnSource`].
//! - Where the kernel's tasks run: [`Executor`], [`Sequential`], [`Rayon`].
//! - ArgWhere (`[nnz, rank]`, NonZero transposed): [`argwhere`], [`argwhere_with`],
//!   [`Counted::write_argwhere`].
//! - Both outputs are a [`Coordinates`] matrix: [`OnnxCoordinates`] and [`ArgWhereCoordinates`].
//! - BooleanMask (`tf.boolean_mask`, `x[mask]`): [`mask`].
//! - Masked writes (`x[m] = v`, `masked_scatter`): [`write`].
//! - DirectML's NonZeroCoordinates, its validation rules, and its ONNX Runtime form: [`dml`].
//!
//! Feature `test-support` adds the naive oracle (`reference`) used by tests, fuzzers and the
//! conformance pack; it is not part of the supported API.
//!
//! ```
//! // A 2 x 2 input: the non-zeros are at (0, 0), (1, 0) and (1, 1).
//! let y = nonzero_core::nonzero(&[1u8, 0, 1, 1], &[2, 2])?;
//! assert_eq!(y.shape(), [2, 3]);
//! assert_eq!(y.data, [0, 1, 1, 0, 0, 1]); // row-major [rank, nnz]: rows, then columns
//! # Ok::<(), nonzero_core::Error>(())
//! ```

mod argwhere;
mod coordinates;
mod data;
pub mod dml;
mod dtype;
mod element;
mod error;
pub mod kernel;
mod layout;
pub mod mask;
mod onnx;
#[cfg(feature = "test-support")]
#[doc(hidden)]
pub mod reference;
mod source;
pub mod write;

pub use argwhere::{argwhere, argwhere_with};
pub use coordinates::{ArgWhereCoordinates, Coordinates, OnnxCoordinates};
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
pub use onnx::{nonzero, nonzero_with};
pub use source::{string_source, FnSource, ZeroTest};

/// Re-exported element types, so users need not depend on `half` and `num-complex` themselves.
pub use half::{bf16, f16};
pub use num_complex::{Complex32, Complex64};
