//! The device-resident entry points: NonZero of a device buffer into device buffers, in the
//! DirectML and the ONNX form. Each checks the caller's buffers, plans the call, and encodes
//! the count (passes 1-2) and the scatter (pass 3).

use crate::params::Output;
use crate::plan::Plan;
use crate::transfer::{check_size, check_usage, pad4};
use crate::{GpuError, GpuNonZero};
use nonzero_core::{effective_rank, DataType};

/// The ONNX output left on the device.
#[derive(Debug)]
pub struct GpuOnnxOutput {
    /// `[rank, nnz]` int64 as (lo, hi) u32 pairs in its first `rank * nnz * 8` bytes
    /// (`STORAGE | COPY_SRC`; at least 8 bytes long).
    pub buffer: wgpu::Buffer,
    pub rank: usize,
    pub nnz: usize,
}

impl GpuNonZero {
    /// DirectML NonZeroCoordinates on device data, without any read-back.
    ///
    /// `input` holds the packed row-major elements (padded to a multiple of 4 bytes, `STORAGE`
    /// usage). Writes the count into the first u32 of `count` and the first `count` rows of
    /// `coords` (row-major `M x n_columns` u32, `M = numel`; the columns are the last
    /// `n_columns` dimensions). Both need `STORAGE` usage. Returns the submission.
    pub fn dml_device(
        &self,
        input: &wgpu::Buffer,
        dtype: DataType,
        shape: &[usize],
        n_columns: usize,
        count: &wgpu::Buffer,
        coords: &wgpu::Buffer,
    ) -> Result<wgpu::SubmissionIndex, GpuError> {
        let mut enc = self.device.create_command_encoder(&Default::default());
        self.encode_dml(&mut enc, input, dtype, shape, n_columns, count, coords)?;
        Ok(self.queue.submit([enc.finish()]))
    }

    /// [`GpuNonZero::dml_device`] recorded into the caller's encoder instead of submitted, so it
    /// can sit between other work (or timestamp writes). The passes' scratch buffers live as
    /// long as the command buffer needs them.
    #[allow(clippy::too_many_arguments)]
    pub fn encode_dml(
        &self,
        enc: &mut wgpu::CommandEncoder,
        input: &wgpu::Buffer,
        dtype: DataType,
        shape: &[usize],
        n_columns: usize,
        count: &wgpu::Buffer,
        coords: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        let plan = self.plan(dtype, shape)?;
        let rank = shape.len();
        let eff = effective_rank(shape);
        if n_columns < eff || n_columns > rank {
            return Err(GpuError::Columns {
                n_columns,
                effective_rank: eff,
                rank,
            });
        }
        check_input(&plan, input)?;
        check_count(count)?;
        check_usage("coordinates", coords, wgpu::BufferUsages::STORAGE)?;
        let coord_bytes = plan.numel * n_columns as u64 * 4;
        check_size("coordinates", coords, coord_bytes)?;
        self.limits.check_binding("coordinates", coord_bytes)?;
        let out = Output::Dml {
            ncols: n_columns as u32,
            skip: (rank - n_columns) as u32,
        };
        let call = self.call(&plan, input, count, out);
        self.encode_count(enc, &call);
        if coord_bytes > 0 {
            self.encode_scatter(enc, &call, coords, coord_bytes);
        }
        Ok(())
    }

    /// ONNX NonZero on device data, without read-back, into a caller-sized buffer.
    ///
    /// `out` must hold `rank * numel` int64 (`rank * numel * 8` bytes, `STORAGE`): row `d` of
    /// the result starts at int64 index `d * numel`, and its first `count` entries are valid.
    /// The count goes into the first u32 of `count`.
    pub fn onnx_device_into(
        &self,
        input: &wgpu::Buffer,
        dtype: DataType,
        shape: &[usize],
        count: &wgpu::Buffer,
        out: &wgpu::Buffer,
    ) -> Result<wgpu::SubmissionIndex, GpuError> {
        let plan = self.plan(dtype, shape)?;
        check_input(&plan, input)?;
        check_count(count)?;
        check_usage("output", out, wgpu::BufferUsages::STORAGE)?;
        let out_bytes = plan.numel * shape.len() as u64 * 8;
        check_size("output", out, out_bytes)?;
        self.limits.check_binding("output", out_bytes)?;
        let stride = plan.numel as u32;
        let call = self.call(&plan, input, count, Output::Onnx { stride });
        let mut enc = self.device.create_command_encoder(&Default::default());
        self.encode_count(&mut enc, &call);
        if out_bytes > 0 {
            self.encode_scatter(&mut enc, &call, out, out_bytes);
        }
        Ok(self.queue.submit([enc.finish()]))
    }

    /// ONNX NonZero on device data: counts, reads the count back (4 bytes), then scatters into
    /// a new exactly sized buffer (see [`GpuOnnxOutput`]).
    pub fn onnx_device(
        &self,
        input: &wgpu::Buffer,
        dtype: DataType,
        shape: &[usize],
    ) -> Result<GpuOnnxOutput, GpuError> {
        let plan = self.plan(dtype, shape)?;
        check_input(&plan, input)?;
        let rank = shape.len();
        let empty = |nnz| GpuOnnxOutput {
            buffer: self.storage_buffer("nonzero onnx", 8, wgpu::BufferUsages::COPY_SRC),
            rank,
            nnz,
        };
        if plan.numel == 0 {
            return Ok(empty(0));
        }
        let count = self.storage_buffer("nonzero count", 4, wgpu::BufferUsages::COPY_SRC);
        // The row stride (nnz) is not known yet: passes 1 and 2 do not read it.
        let call = self.call(&plan, input, &count, Output::Onnx { stride: 0 });
        let mut enc = self.device.create_command_encoder(&Default::default());
        self.encode_count(&mut enc, &call);
        self.queue.submit([enc.finish()]);
        let nnz = self.read_u32(&count)? as usize;
        let out_bytes = (rank * nnz) as u64 * 8;
        if out_bytes == 0 {
            return Ok(empty(nnz));
        }
        self.limits.check_binding("output", out_bytes)?;
        self.set_output(&call, Output::Onnx { stride: nnz as u32 });
        let out = self.storage_buffer("nonzero onnx", out_bytes, wgpu::BufferUsages::COPY_SRC);
        let mut enc = self.device.create_command_encoder(&Default::default());
        self.encode_scatter(&mut enc, &call, &out, out_bytes);
        self.queue.submit([enc.finish()]);
        Ok(GpuOnnxOutput {
            buffer: out,
            rank,
            nnz,
        })
    }
}

/// The input holds the plan's elements (padded to 4 bytes) and can be bound as storage.
fn check_input(plan: &Plan, input: &wgpu::Buffer) -> Result<(), GpuError> {
    check_size("input", input, pad4(plan.numel * plan.info.kind.size()))?;
    check_usage("input", input, wgpu::BufferUsages::STORAGE)
}

/// The count buffer holds one u32 and can be bound as storage.
fn check_count(count: &wgpu::Buffer) -> Result<(), GpuError> {
    check_usage("count", count, wgpu::BufferUsages::STORAGE)?;
    check_size("count", count, 4)
}
