//! Library code shared by the `nonzero` command and by tests:
//!
//! - [`tensor`]: `TensorProto` <-> typed data ([`Tensor`], [`TensorData`]) for every NonZero type.
//! - [`model`]: prost-built models: single-node NonZero, masked select, threshold filter, the ONNX
//!   backend example.
//! - [`testcase`]: ONNX test-case directories (`model.onnx`, `test_data_set_N/{input,output}_M.pb`).
//! - [`pack`]: the conformance pack generator (expected outputs from `nonzero_core::reference`).
//! - [`bundled`]: the small models committed under `models/`.
//!
//! Nothing here starts ONNX Runtime or depends on `ort`: the runner is `nonzero-ort-runner`.

pub mod bundled;
pub mod model;
pub mod pack;
pub mod tensor;
pub mod testcase;
mod values;

pub use nonzero_proto::onnx;
pub use tensor::{Tensor, TensorData, TensorElement};
pub use testcase::{DataSet, TestCase};
