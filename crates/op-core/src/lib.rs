//! NonZero for ONNX and DirectML: semantics, validation and a parallel CPU kernel.
//!
//! - What "zero" means per type: [`element`].
//! - Shapes, strides, effective rank: [`layout`].
//! - The ONNX operator (`[rank, nnz]` int64): [`onnx`], with [`nonzero`] and [`nonzero_array`].
//! - ArgWhere (`[nnz, rank]`, NonZero transposed): [`mod@argwhere`].
//! - BooleanMask (`tf.boolean_mask`, `x[mask]`): [`mask`].
//! - DirectML's NonZeroCoordinates, its validation rules, and its ONNX Runtime form: [`dml`].
//! - The two-pass kernel and where it runs: [`kernel`].
//! - The naive oracle used by tests and the conformance pack: [`reference`].

pub mod argwhere;
pub mod data;
pub mod dml;
pub mod dtype;
pub mod element;
mod error;
pub mod kernel;
pub mod layout;
pub mod mask;
pub mod onnx;
pub mod reference;
pub mod source;

pub use argwhere::{argwhere, argwhere_with, ArgWhereCoordinates};
pub use data::NumericSlice;
pub use dtype::DataType;
pub use element::Element;
pub use error::Error;
pub use kernel::{Counted, Executor, Rayon, Sequential};
pub use layout::{effective_rank, Layout};
pub use onnx::{nonzero, nonzero_array, nonzero_with, OnnxCoordinates};
pub use source::{instruction_set, FnSource, ZeroTest};

/// Re-exported element types, so users need not depend on `half` and `num-complex` themselves.
pub use half::{bf16, f16};
pub use num_complex::{Complex32, Complex64};
