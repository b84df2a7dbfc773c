//! The host convenience API: NonZero of host data, uploaded, computed on the device and read
//! back, in the ONNX ([`OnnxCoordinates`]) and DirectML ([`DmlCoordinates`]) forms.

use crate::kept::HostBuffers;
use crate::kind::type_info;
use crate::{GpuError, GpuNonZero};
use nonzero_core::{DataType, Element, OnnxCoordinates};

/// DirectML NonZeroCoordinates read back to the host: `count` rows of `columns` u32 each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DmlCoordinates {
    pub count: u32,
    pub columns: usize,
    /// Row-major `count x columns`.
    pub coords: Vec<u32>,
}

impl GpuNonZero {
    /// ONNX NonZero of host bytes (native order) of `dtype` elements.
    pub fn nonzero_bytes(
        &self,
        dtype: DataType,
        bytes: &[u8],
        shape: &[usize],
    ) -> Result<OnnxCoordinates, GpuError> {
        let mut result = OnnxCoordinates {
            rank: shape.len(),
            nnz: 0,
            data: Vec::new(),
        };
        self.nonzero_bytes_into(dtype, bytes, shape, |[rank, nnz]| {
            result.nnz = nnz;
            result.data = vec![0; rank * nnz];
            Ok::<_, GpuError>(&mut result.data[..])
        })?;
        Ok(result)
    }

    /// ONNX NonZero of host bytes (native order) of `dtype` elements, read back straight into
    /// memory the caller hands over once the count is known: `output([rank, nnz])` returns
    /// exactly `rank * nnz` int64 (an ONNX Runtime output, say), row-major `[rank, nnz]`.
    ///
    /// The input and the read-back go through buffers the context keeps from call to call
    /// ([`GpuNonZero::release_kept`] frees them); a call that finds them in use by another
    /// thread makes its own. `output`'s error comes back as it is.
    pub fn nonzero_bytes_into<'o, E: From<GpuError>>(
        &self,
        dtype: DataType,
        bytes: &[u8],
        shape: &[usize],
        output: impl FnOnce([usize; 2]) -> Result<&'o mut [i64], E>,
    ) -> Result<(), E> {
        let plan = self.plan(dtype, shape)?;
        check_bytes(dtype, plan.info.kind.size(), bytes, plan.numel)?;
        let mut buffers = HostBuffers::take(self);
        let input = buffers.input(dtype, bytes)?;
        let out = self.onnx_device(&input, dtype, shape)?;
        let dst = output([out.rank, out.nnz])?;
        if dst.len() != out.rank * out.nnz {
            return Err(GpuError::OutputLength {
                expected: out.rank * out.nnz,
                actual: dst.len(),
            }
            .into());
        }
        buffers.read(&out.buffer, bytemuck::cast_slice_mut(dst))?;
        // The device wrote little-endian words: only a big-endian host has a pass to make.
        if cfg!(target_endian = "big") {
            for v in dst.iter_mut() {
                *v = i64::from_le(*v);
            }
        }
        Ok(())
    }

    /// ONNX NonZero of a host slice.
    pub fn nonzero<T: Element>(
        &self,
        data: &[T],
        shape: &[usize],
    ) -> Result<OnnxCoordinates, GpuError> {
        self.nonzero_bytes(T::DTYPE, element_bytes(data)?, shape)
    }

    /// DirectML NonZeroCoordinates of host bytes of `dtype` elements, `n_columns` columns.
    pub fn nonzero_coordinates_bytes(
        &self,
        dtype: DataType,
        bytes: &[u8],
        shape: &[usize],
        n_columns: usize,
    ) -> Result<DmlCoordinates, GpuError> {
        let plan = self.plan(dtype, shape)?;
        check_bytes(dtype, plan.info.kind.size(), bytes, plan.numel)?;
        let mut buffers = HostBuffers::take(self);
        let input = buffers.input(dtype, bytes)?;
        let count = self.storage_buffer("nonzero count", 4, wgpu::BufferUsages::COPY_SRC);
        let coords = self.storage_buffer(
            "nonzero coords",
            plan.numel * n_columns as u64 * 4,
            wgpu::BufferUsages::COPY_SRC,
        );
        self.dml_device(&input, dtype, shape, n_columns, &count, &coords)?;
        let nnz = self.read_u32(&count)?;
        let mut coords_host = vec![0u32; nnz as usize * n_columns];
        buffers.read(&coords, bytemuck::cast_slice_mut(&mut coords_host))?;
        // The device wrote little-endian words: only a big-endian host has a pass to make.
        if cfg!(target_endian = "big") {
            for v in coords_host.iter_mut() {
                *v = u32::from_le(*v);
            }
        }
        Ok(DmlCoordinates {
            count: nnz,
            columns: n_columns,
            coords: coords_host,
        })
    }

    /// DirectML NonZeroCoordinates of a host slice.
    pub fn nonzero_coordinates<T: Element>(
        &self,
        data: &[T],
        shape: &[usize],
        n_columns: usize,
    ) -> Result<DmlCoordinates, GpuError> {
        self.nonzero_coordinates_bytes(T::DTYPE, element_bytes(data)?, shape, n_columns)
    }
}

/// The bytes hold exactly the shape's `numel` elements of `size` bytes.
fn check_bytes(dtype: DataType, size: u64, bytes: &[u8], numel: u64) -> Result<(), GpuError> {
    if !(bytes.len() as u64).is_multiple_of(size) {
        return Err(GpuError::ByteLength {
            dtype,
            bytes: bytes.len(),
        });
    }
    let actual = bytes.len() as u64 / size;
    if actual != numel {
        return Err(GpuError::ShapeMismatch {
            expected: numel as usize,
            actual: actual as usize,
        });
    }
    Ok(())
}

/// The bytes of a slice of one of nonzero_core's element types. `Element` is sealed and requires
/// `bytemuck::NoUninit`, so the view needs no `unsafe`; the size check keeps the shader's element
/// kind and the Rust type in step.
fn element_bytes<T: Element>(data: &[T]) -> Result<&[u8], GpuError> {
    if type_info(T::DTYPE)?.kind.size() as usize != std::mem::size_of::<T>() {
        return Err(GpuError::UnsupportedType(T::DTYPE));
    }
    Ok(bytemuck::cast_slice(data))
}
