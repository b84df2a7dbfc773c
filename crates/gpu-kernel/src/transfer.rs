//! Transfers between host and device: uploading an input, reading a buffer back, and the
//! buffer checks every entry point shares.

use crate::error::ReadbackError;
use crate::kind::type_info;
use crate::{GpuError, GpuNonZero};
use nonzero_core::DataType;
use std::sync::{mpsc, Arc};
use wgpu::util::DeviceExt;

/// `n` rounded up to a multiple of 4 (the shader reads whole u32 words).
pub(crate) fn pad4(n: u64) -> u64 {
    n.div_ceil(4) * 4
}

/// Refuses a buffer without the `needed` usage flags.
pub(crate) fn check_usage(
    what: &'static str,
    buffer: &wgpu::Buffer,
    needed: wgpu::BufferUsages,
) -> Result<(), GpuError> {
    if buffer.usage().contains(needed) {
        Ok(())
    } else {
        Err(GpuError::BufferUsage {
            what,
            needed: format!("{needed:?}"),
        })
    }
}

/// Refuses a buffer smaller than `needed` bytes.
pub(crate) fn check_size(
    what: &'static str,
    buffer: &wgpu::Buffer,
    needed: u64,
) -> Result<(), GpuError> {
    if buffer.size() < needed {
        return Err(GpuError::BufferTooSmall {
            what,
            needed,
            actual: buffer.size(),
        });
    }
    Ok(())
}

impl GpuNonZero {
    /// Uploads host bytes of `dtype` elements into a new `STORAGE | COPY_SRC | COPY_DST` buffer,
    /// padded with zeros to a multiple of 4 bytes.
    pub fn upload(&self, dtype: DataType, bytes: &[u8]) -> Result<wgpu::Buffer, GpuError> {
        let size = type_info(dtype)?.kind.size() as usize;
        if !bytes.len().is_multiple_of(size) {
            return Err(GpuError::ByteLength {
                dtype,
                bytes: bytes.len(),
            });
        }
        let padded = self.input_buffer_size(bytes.len())?;
        let padded_copy;
        let contents = if bytes.len() as u64 == padded {
            bytes
        } else {
            let mut v = vec![0u8; padded as usize];
            v[..bytes.len()].copy_from_slice(bytes);
            padded_copy = v;
            &padded_copy
        };
        Ok(self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("nonzero input"),
                contents,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
            }))
    }

    /// The size of an input buffer for `len` bytes: whole words, at least one, within the
    /// device's buffer limit.
    pub(crate) fn input_buffer_size(&self, len: usize) -> Result<u64, GpuError> {
        let padded = pad4(len as u64).max(4);
        if padded > self.limits.max_buffer {
            return Err(GpuError::TooLarge {
                what: "input buffer",
                needed: padded,
                limit: self.limits.max_buffer,
            });
        }
        Ok(padded)
    }

    /// Copies the first `size` bytes of `src` (which needs `COPY_SRC`) to the host; waits.
    pub fn read_buffer(&self, src: &wgpu::Buffer, size: u64) -> Result<Vec<u8>, GpuError> {
        let mut data = vec![0u8; size as usize];
        if size > 0 {
            let staging = self.staging_buffer(pad4(size));
            self.read_into(src, &mut data, &staging)?;
        }
        Ok(data)
    }

    /// A new `MAP_READ | COPY_DST` buffer of `size` bytes.
    pub(crate) fn staging_buffer(&self, size: u64) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("nonzero read-back"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Copies the first `dst.len()` bytes of `src` into `dst` through `staging` (at least that
    /// many bytes rounded up to a word); waits.
    pub(crate) fn read_into(
        &self,
        src: &wgpu::Buffer,
        dst: &mut [u8],
        staging: &wgpu::Buffer,
    ) -> Result<(), GpuError> {
        if dst.is_empty() {
            return Ok(());
        }
        check_usage("read-back source", src, wgpu::BufferUsages::COPY_SRC)?;
        let padded = pad4(dst.len() as u64);
        check_size("read-back source", src, padded)?;
        check_size("read-back staging", staging, padded)?;
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(src, 0, staging, 0, padded);
        self.queue.submit([enc.finish()]);
        let slice = staging.slice(..padded);
        let (tx, rx) = mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| ReadbackError::Poll(Arc::new(e)))?;
        rx.recv()
            .map_err(ReadbackError::Callback)?
            .map_err(ReadbackError::Map)?;
        {
            let view = slice
                .get_mapped_range()
                .map_err(ReadbackError::MappedRange)?;
            dst.copy_from_slice(&view[..dst.len()]);
        }
        staging.unmap();
        Ok(())
    }

    /// The first u32 of `src` (a count buffer), read back.
    pub(crate) fn read_u32(&self, src: &wgpu::Buffer) -> Result<u32, GpuError> {
        let bytes = self.read_buffer(src, 4)?;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// A new storage buffer of at least 4 bytes (a binding cannot be empty).
    pub(crate) fn storage_buffer(
        &self,
        label: &str,
        size: u64,
        extra: wgpu::BufferUsages,
    ) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::STORAGE | extra,
            mapped_at_creation: false,
        })
    }
}
