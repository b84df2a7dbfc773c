//! The operator layer: the only module that calls ONNX Runtime's C API.
//!
//! It knows no op. A library hands [`register_custom_ops`] a [`Library`]: a function that reads
//! what it needs of the session being registered ([`Session`]) into settings, and one that lists
//! its ops for those settings in an [`OpSet`]. An op is a type implementing [`Operator`] (name,
//! inputs, outputs, shape inference, kernel creation) whose kernel implements [`Kernel`]
//! (compute). [`op_table`] turns each into a private `#[repr(C)]` `OrtCustomOp` table whose
//! `extern "system"` entries are generic trampolines, so ops hold no raw pointer and no `unsafe`.
//! What an op sees of ONNX Runtime is the safe wrappers here: [`KernelInfo`] at creation,
//! [`KernelContext`] (inputs as [`Tensor`], typed outputs, the thread pool, the logger) per
//! compute, [`ShapeInferContext`] for shapes. Every C call goes through [`call!`](call::call),
//! which names the function in its error.
//!
//! Every entry point goes through [`status::guard`]: errors and panics become an `OrtStatus`
//! naming the operator and node, and nothing unwinds into ONNX Runtime. Fault injection for the
//! reliability tests lives in the compute trampoline (`fault`, `fault-injection` builds only).

mod api;
mod api24;
mod call;
#[cfg(feature = "fault-injection")]
mod fault;
mod kernel_context;
mod kernel_info;
mod logger;
mod op_table;
mod pool;
mod registration;
mod shape_infer;
mod status;
mod strings;
mod tensor;

pub(crate) use api24::CONFIG_API_VERSION;
pub(crate) use kernel_context::KernelContext;
pub(crate) use kernel_info::{ConfigEntry, KernelInfo};
pub(crate) use pool::OrtPool;
pub(crate) use registration::{register_custom_ops, Library, OpSet, Session, VersionRange};
pub(crate) use shape_infer::{Dim, ShapeInferContext};
#[cfg(feature = "gpu")] // the GPU context catches wgpu's panics with the same guard
pub(crate) use status::catch_panic;
pub(crate) use status::Error;
pub(crate) use tensor::Tensor;

use ort_sys::ONNXTensorElementDataType;
use std::ffi::CStr;

/// The element type of an op's input or output, as its table declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ElementType {
    /// Any tensor type: the schema then accepts every T, including ones this library does not
    /// know (registering an op replaces ONNX Runtime's schema for it).
    Any,
    Bool,
    Int64,
    UInt32,
}

impl ElementType {
    fn onnx(self) -> ONNXTensorElementDataType {
        use ONNXTensorElementDataType as T;
        match self {
            ElementType::Any => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED,
            ElementType::Bool => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,
            ElementType::Int64 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
            ElementType::UInt32 => T::ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32,
        }
    }
}

/// One input or output of an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Io {
    pub element: ElementType,
    pub optional: bool,
}

impl Io {
    pub const fn required(element: ElementType) -> Io {
        Io {
            element,
            optional: false,
        }
    }

    /// An input or output the model may leave out.
    pub const fn optional(element: ElementType) -> Io {
        Io {
            element,
            optional: true,
        }
    }
}

/// An operator: what ONNX Runtime's schema needs, and how to make a kernel for one node.
pub(crate) trait Operator: Send + Sync + Sized + 'static {
    type Kernel: Kernel;
    /// The op type in the model ("NonZero").
    const NAME: &'static CStr;
    const INPUTS: &'static [Io];
    const OUTPUTS: &'static [Io];

    /// Declares the outputs' types and shapes from the inputs'. The default declares nothing.
    fn infer_shape(&self, _context: &mut ShapeInferContext<'_>) -> Result<(), Error> {
        Ok(())
    }

    /// The kernel of one node; runs once per node when a session is created, so everything that
    /// does not depend on the input is decided here.
    fn create_kernel(
        &self,
        info: &KernelInfo<'_>,
        node: &NodeSetup<'_>,
    ) -> Result<Self::Kernel, Error>;
}

/// One node's kernel. ONNX Runtime may call `compute` from several threads at once.
pub(crate) trait Kernel: Send + Sync + 'static {
    fn compute(&self, context: &KernelContext<'_>) -> Result<(), Error>;
}

/// What kernel creation knows besides the kernel info and the op's own value (which holds what
/// the library decided for the session at registration).
#[derive(Debug)]
pub(crate) struct NodeSetup<'a> {
    pub node_name: &'a str,
    /// The host's ONNX Runtime version ("1.17.3").
    pub host_version: &'static str,
}
