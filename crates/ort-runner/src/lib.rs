//! Running models through ONNX Runtime, loaded at run time with `ort`'s `load-dynamic` feature.
//!
//! `ort` is built with `api-17`, so it asks the host for ORT API version 17 and works with ONNX
//! Runtime 1.17 and later. Sessions are made with or without the NonZero custom-op library
//! (`SessionBuilder::with_operator_library`); without it, ORT's built-in NonZero runs.
//!
//! One module per job: `env` loads ONNX Runtime and makes sessions, `value` converts tensors and
//! runs a session, `report` judges outputs, `inputs` makes random inputs for bare models (`indices`
//! keeps those that index a table within it, `npz` reads them from a file instead), and
//! `cases` runs cases, bare models and directories.

mod cases;
mod env;
mod indices;
mod inputs;
mod npz;
mod report;
mod value;

pub use cases::{case_dirs, run_bare_model, run_case, run_path, RunOptions};
pub use env::{default_library, init_ort, ort_dylib_path, session};
pub use indices::index_bounds;
pub use inputs::{file_inputs, random_inputs};
pub use npz::read_npz;
pub use report::{compare, Report, Status};
pub use value::{from_value, run, to_value};
