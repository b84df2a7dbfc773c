//! The errors of the GPU kernel.

use nonzero_core::DataType;
use std::fmt;

/// Why a GPU NonZero call was refused or failed. Bad input never panics: it is one of these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuError {
    /// No wgpu adapter was found (no GPU and no software Vulkan such as lavapipe).
    NoAdapter(String),
    /// The adapter refused to create a device.
    RequestDevice(String),
    /// The element type has no fixed size (strings) or is otherwise not supported on the GPU.
    UnsupportedType(DataType),
    /// The tensor or one of the buffers it needs exceeds a limit (`what` says which).
    TooLarge {
        what: &'static str,
        needed: u64,
        limit: u64,
    },
    /// The product of the shape does not fit in `u64`.
    ShapeOverflow { shape: Vec<usize> },
    /// The host data holds a different number of elements (or bytes) than the shape needs.
    ShapeMismatch { expected: usize, actual: usize },
    /// A byte buffer is not a whole number of elements.
    ByteLength { dtype: DataType, bytes: usize },
    /// A device buffer is smaller than the call needs.
    BufferTooSmall {
        what: &'static str,
        needed: u64,
        actual: u64,
    },
    /// A device buffer lacks a usage flag the call needs.
    BufferUsage { what: &'static str, needed: String },
    /// DirectML needs `effective_rank <= n_columns <= rank`.
    Columns {
        n_columns: usize,
        effective_rank: usize,
        rank: usize,
    },
    /// The configuration is unusable (`GpuConfig`).
    InvalidConfig(String),
    /// Reading a buffer back failed.
    Readback(String),
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::NoAdapter(why) => write!(
                f,
                "no wgpu adapter found ({why}); on a machine without a GPU install lavapipe \
                 (crates/gpu-kernel/setup-lavapipe.sh)"
            ),
            GpuError::RequestDevice(why) => write!(f, "the adapter refused to create a device: {why}"),
            GpuError::UnsupportedType(t) => write!(f, "NonZero on the GPU does not support {t} elements"),
            GpuError::TooLarge { what, needed, limit } => {
                write!(f, "{what} is too large: {needed} exceeds the limit of {limit}")
            }
            GpuError::ShapeOverflow { shape } => write!(f, "the element count of shape {shape:?} overflows"),
            GpuError::ShapeMismatch { expected, actual } => write!(
                f,
                "the shape has {expected} elements but the data holds {actual}"
            ),
            GpuError::ByteLength { dtype, bytes } => {
                write!(f, "{bytes} bytes is not a whole number of {dtype} elements")
            }
            GpuError::BufferTooSmall { what, needed, actual } => {
                write!(f, "the {what} buffer needs {needed} bytes but holds {actual}")
            }
            GpuError::BufferUsage { what, needed } => write!(f, "the {what} buffer needs usage {needed}"),
            GpuError::Columns { n_columns, effective_rank, rank } => write!(
                f,
                "DirectML needs effective rank ({effective_rank}) <= N ({n_columns}) <= rank ({rank})"
            ),
            GpuError::InvalidConfig(why) => write!(f, "invalid GpuConfig: {why}"),
            GpuError::Readback(why) => write!(f, "reading a buffer back failed: {why}"),
        }
    }
}

impl std::error::Error for GpuError {}
