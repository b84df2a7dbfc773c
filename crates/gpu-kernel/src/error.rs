//! The errors of the GPU kernel.
//!
//! Failures that come from wgpu keep the wgpu error as their [`std::error::Error::source`]. The
//! message of each variant also includes the source's message, so `to_string()` alone says
//! everything (the ONNX Runtime adapter logs only that).

use nonzero_core::DataType;
use std::sync::{mpsc, Arc};

/// Why a GPU NonZero call was refused or failed. Bad input never panics: it is one of these.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GpuError {
    /// No wgpu adapter was found (no GPU and no software Vulkan such as lavapipe).
    #[error(
        "no wgpu adapter found ({0}); on a machine without a GPU install lavapipe \
         (crates/gpu-kernel/setup-lavapipe.sh)"
    )]
    NoAdapter(#[source] wgpu::RequestAdapterError),
    /// The adapter refused to create a device.
    #[error("the adapter refused to create a device: {0}")]
    RequestDevice(#[source] wgpu::RequestDeviceError),
    /// The element type has no fixed size (strings) or is otherwise not supported on the GPU.
    #[error("NonZero on the GPU does not support {0} elements")]
    UnsupportedType(DataType),
    /// The tensor or one of the buffers it needs exceeds a limit (`what` says which).
    #[error("{what} is too large: {needed} exceeds the limit of {limit}")]
    TooLarge {
        what: &'static str,
        needed: u64,
        limit: u64,
    },
    /// The product of the shape does not fit in `u64`.
    #[error("the element count of shape {shape:?} overflows")]
    ShapeOverflow { shape: Vec<usize> },
    /// The host data holds a different number of elements (or bytes) than the shape needs.
    #[error("the shape has {expected} elements but the data holds {actual}")]
    ShapeMismatch { expected: usize, actual: usize },
    /// A byte buffer is not a whole number of elements.
    #[error("{bytes} bytes is not a whole number of {dtype} elements")]
    ByteLength { dtype: DataType, bytes: usize },
    /// A device buffer is smaller than the call needs.
    #[error("the {what} buffer needs {needed} bytes but holds {actual}")]
    BufferTooSmall {
        what: &'static str,
        needed: u64,
        actual: u64,
    },
    /// The host memory handed over for the result holds a different number of int64.
    #[error("the result needs {expected} int64 but the output holds {actual}")]
    OutputLength { expected: usize, actual: usize },
    /// A device buffer lacks a usage flag the call needs.
    #[error("the {what} buffer needs usage {needed}")]
    BufferUsage { what: &'static str, needed: String },
    /// DirectML needs `effective_rank <= n_columns <= rank`.
    #[error(
        "DirectML needs effective rank ({effective_rank}) <= N ({n_columns}) <= rank ({rank})"
    )]
    Columns {
        n_columns: usize,
        effective_rank: usize,
        rank: usize,
    },
    /// The configuration is unusable (`GpuConfig`).
    #[error("invalid GpuConfig: {0}")]
    InvalidConfig(String),
    /// Reading a buffer back failed.
    #[error("reading a buffer back failed: {0}")]
    Readback(#[source] ReadbackError),
}

/// Which step of a read-back failed, with wgpu's error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ReadbackError {
    /// Waiting for the device to finish the copy. (`Arc`: wgpu's error is not `Clone`.)
    #[error("waiting for the device: {0}")]
    Poll(#[source] Arc<wgpu::PollError>),
    /// The map callback was dropped without being called.
    #[error("the map callback never ran: {0}")]
    Callback(#[source] mpsc::RecvError),
    /// Mapping the staging buffer.
    #[error("mapping the staging buffer: {0}")]
    Map(#[source] wgpu::BufferAsyncError),
    /// Viewing the mapped range.
    #[error("viewing the mapped range: {0}")]
    MappedRange(#[source] wgpu::MapRangeError),
}

impl From<ReadbackError> for GpuError {
    fn from(e: ReadbackError) -> Self {
        GpuError::Readback(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// The wgpu error stays reachable through `source()`, and the message still names it.
    #[test]
    fn wgpu_errors_are_sources() {
        let e = GpuError::NoAdapter(wgpu::RequestAdapterError::EnvNotSet);
        let source = e.source().expect("NoAdapter has a source");
        assert!(source.is::<wgpu::RequestAdapterError>());
        assert!(e.to_string().contains(&source.to_string()), "{e}");

        let e = GpuError::from(ReadbackError::Map(wgpu::BufferAsyncError));
        let readback = e.source().expect("Readback has a source");
        assert!(readback.is::<ReadbackError>());
        let map = readback.source().expect("ReadbackError::Map has a source");
        assert!(map.is::<wgpu::BufferAsyncError>());
        assert!(e.to_string().contains(&map.to_string()), "{e}");

        let e = GpuError::from(ReadbackError::Poll(Arc::new(wgpu::PollError::Timeout)));
        assert!(e.to_string().contains("timed out"), "{e}");
        assert!(GpuError::UnsupportedType(DataType::String)
            .source()
            .is_none());
    }
}
