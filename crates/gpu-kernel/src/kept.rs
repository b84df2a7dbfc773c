//! The buffers the host path keeps from call to call: one input buffer on the device and one
//! read-back staging buffer, each grown to the largest call so far.
//!
//! Measured on an NVIDIA H200 (docs/gpu.md, "Figures"), a new 537 MB staging buffer per call
//! and the copies out of it took 878 ms of a 956 ms call; kept, the read-back took 69 ms.
//! A call takes them with `try_lock`: a call that finds them in use by another thread makes
//! fresh ones rather than waiting. [`GpuNonZero::release_kept`] frees them.

use crate::transfer::pad4;
use crate::{GpuError, GpuNonZero};
use nonzero_core::DataType;
use std::sync::MutexGuard;

/// The buffers of one host call: the kept ones when this call got them, else new ones.
pub(crate) struct HostBuffers<'a> {
    ctx: &'a GpuNonZero,
    kept: Option<MutexGuard<'a, Kept>>,
}

impl<'a> HostBuffers<'a> {
    pub(crate) fn take(ctx: &'a GpuNonZero) -> Self {
        HostBuffers {
            ctx,
            kept: ctx.kept.try_lock().ok(),
        }
    }

    /// A device buffer holding `bytes` of `dtype` elements.
    pub(crate) fn input(
        &mut self,
        dtype: DataType,
        bytes: &[u8],
    ) -> Result<wgpu::Buffer, GpuError> {
        match self.kept.as_deref_mut() {
            Some(kept) => kept.input(self.ctx, bytes).cloned(),
            None => self.ctx.upload(dtype, bytes),
        }
    }

    /// The first `dst.len()` bytes of `src`, copied into `dst`; waits.
    pub(crate) fn read(&mut self, src: &wgpu::Buffer, dst: &mut [u8]) -> Result<(), GpuError> {
        if dst.is_empty() {
            return Ok(()); // nothing to stage: no buffer made or grown
        }
        let size = pad4(dst.len() as u64);
        match self.kept.as_deref_mut() {
            Some(kept) => {
                let read = self.ctx.read_into(src, dst, kept.staging(self.ctx, size));
                if read.is_err() {
                    // A failed read can leave the staging buffer mapped: never reuse it.
                    kept.discard();
                }
                read
            }
            None => self.ctx.read_into(src, dst, &self.ctx.staging_buffer(size)),
        }
    }
}

#[derive(Default)]
pub(crate) struct Kept {
    input: Option<wgpu::Buffer>,
    staging: Option<wgpu::Buffer>,
}

impl Kept {
    /// The kept input buffer, holding `bytes` zero-padded to a whole word; replaced by a larger
    /// one when too small. Its bytes past the input are stale, and the shaders never read them
    /// (every element read checks the element count).
    pub(crate) fn input(
        &mut self,
        ctx: &GpuNonZero,
        bytes: &[u8],
    ) -> Result<&wgpu::Buffer, GpuError> {
        let padded = ctx.input_buffer_size(bytes.len())?;
        let input = grown(&mut self.input, padded, || {
            ctx.storage_buffer(
                "nonzero kept input",
                padded,
                wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            )
        });
        // write_buffer takes whole words: the aligned part, then the last word zero-padded.
        let whole = bytes.len() / 4 * 4;
        if whole > 0 {
            ctx.queue.write_buffer(input, 0, &bytes[..whole]);
        }
        if whole < bytes.len() {
            let mut tail = [0u8; 4];
            tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
            ctx.queue.write_buffer(input, whole as u64, &tail);
        }
        Ok(input)
    }

    /// Drops both buffers (after a failed read-back, say).
    pub(crate) fn discard(&mut self) {
        *self = Kept::default();
    }

    /// The kept staging buffer, at least `size` bytes; replaced by a larger one when too small.
    pub(crate) fn staging(&mut self, ctx: &GpuNonZero, size: u64) -> &wgpu::Buffer {
        grown(&mut self.staging, size, || ctx.staging_buffer(size))
    }
}

/// The buffer in `slot`, made anew by `make` when there is none or it is smaller than `size`.
fn grown(
    slot: &mut Option<wgpu::Buffer>,
    size: u64,
    make: impl FnOnce() -> wgpu::Buffer,
) -> &wgpu::Buffer {
    if slot.as_ref().is_none_or(|b| b.size() < size) {
        *slot = Some(make());
    }
    slot.as_ref().expect("filled above")
}

impl GpuNonZero {
    /// Frees the input and staging buffers the host entry points keep from call to call
    /// (device memory and mapped host memory as large as the largest call so far). The next
    /// host call makes them anew.
    pub fn release_kept(&self) {
        if let Ok(mut kept) = self.kept.lock() {
            *kept = Kept::default();
        }
    }
}
