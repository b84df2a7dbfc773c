//! NonZero on any GPU through wgpu and WGSL.
//!
//! ```
//! use nonzero_gpu::{GpuConfig, GpuNonZero};
//! // Any adapter wgpu finds: Vulkan, Metal, DX12, or a CPU driver such as Mesa's lavapipe.
//! match GpuNonZero::request(GpuConfig::default()) {
//!     Ok(gpu) => {
//!         let y = gpu.nonzero(&[0.0f32, 2.5, -0.0, 1.0], &[2, 2])?;
//!         assert_eq!(y.shape(), [2, 2]);
//!         assert_eq!(y.data, [0, 1, 1, 1]); // (0, 1) and (1, 1); -0.0 is zero
//!     }
//!     Err(e) => eprintln!("no GPU adapter here: {e}"),
//! }
//! # Ok::<(), nonzero_gpu::GpuError>(())
//! ```
//!
//! # API
//!
//! [`GpuNonZero`] is created once per `wgpu::Device`/`Queue` ([`GpuNonZero::new`], or
//! [`GpuNonZero::request`] which finds an adapter itself). It compiles the pipelines of passes 1
//! and 3 per [`ElementKind`], and of pass 2 once, on first use and reuses them across calls.
//!
//! - Device-resident, DirectML form: [`GpuNonZero::dml_device`] writes `count[0]` (u32) and the
//!   first `count` rows of an `M x N` row-major u32 coordinates buffer; no read-back at all.
//! - Device-resident, ONNX form: [`GpuNonZero::onnx_device`] returns a new storage buffer holding
//!   the `[rank, nnz]` int64 matrix as little-endian (lo, hi) u32 word pairs. Sizing that buffer
//!   needs `nnz`, so this call reads back one u32 (the count) between the counting passes and the
//!   scatter pass. [`GpuNonZero::onnx_device_into`] avoids the read-back: the caller gives a
//!   `[rank, numel]` capacity buffer plus a count buffer, and the coordinates of row `d` start at
//!   element `d * numel` (the first `count` of each row are valid).
//! - [`GpuNonZero::encode_dml`] records the DirectML form into the caller's encoder.
//! - Host convenience: [`GpuNonZero::nonzero`] / [`GpuNonZero::nonzero_bytes`] return
//!   [`nonzero_core::OnnxCoordinates`]; [`GpuNonZero::nonzero_bytes_into`] reads back straight
//!   into memory the caller hands over once the count is known (ONNX Runtime's output);
//!   [`GpuNonZero::nonzero_coordinates`] / [`GpuNonZero::nonzero_coordinates_bytes`] return
//!   [`DmlCoordinates`]. They keep an input and a staging buffer from call to call
//!   ([`GpuNonZero::release_kept`] frees them).
//!
//! # Algorithm (reduce, then scan)
//!
//! No pass relies on forward progress between workgroups:
//!
//! 1. `count_tiles`: each workgroup counts the non-zeros of its tile (`workgroup_size * 4`
//!    elements) and stores the count in a tile array.
//! 2. Hierarchical scan of the tile counts, in two dispatches (no workgroup waits on another):
//!    `scan_blocks` has one workgroup per block of `workgroup_size * 4` tiles replace its counts by
//!    their exclusive prefix sums within the block and store the block's sum; `scan_block_sums`
//!    (one workgroup) replaces the block sums by their exclusive prefix sums and writes the total
//!    into the count buffer. A tile's offset is its block's offset plus its offset in the block,
//!    so the single workgroup does `1 / (workgroup_size * 4)` of the old sequential work.
//! 3. `scatter`: each workgroup recomputes its flags, ranks them with a workgroup-local prefix sum
//!    and writes coordinates at `block_offset + tile_offset + local_rank`, turning the flat index into
//!    coordinates by one division per dimension (the sizes are in the parameter buffer).
//!
//! # Subgroup and workgroup-memory paths
//!
//! The per-tile count (pass 1) and the workgroup scans (passes 2 and 3) come in two versions,
//! chosen once per context ([`GpuNonZero::uses_subgroups`]):
//!
//! - **Subgroup path**, when [`GpuConfig::use_subgroups`] is set (the default) and the device has
//!   [`wgpu::Features::SUBGROUP`] ([`GpuNonZero::request`] asks for it when the adapter has it;
//!   with [`GpuNonZero::new`] the caller opens the device, e.g. with [`request_device`]).
//!   Pass 1 adds counts with `subgroupAdd` and one workgroup atomic per subgroup. The scans rank
//!   in two levels: `subgroupExclusiveAdd` within a subgroup, then subgroup 0 scans the per-subgroup
//!   sums (a workgroup array, in steps of `subgroup_size`, so any number of subgroups), two
//!   barriers instead of `2 log2(workgroup_size)`. Nothing assumes a subgroup size: sizes from 1
//!   up, also larger than the workgroup (one partial subgroup), are handled. The subgroup index is
//!   `local_invocation_index / subgroup_size`; the shader checks that every lane agrees with that
//!   layout (`lid % size == subgroup_invocation_id`, one block per subgroup) and otherwise the
//!   whole workgroup falls back to the workgroup-memory scan, so results never depend on how a
//!   driver lays out subgroups.
//! - **Workgroup-memory path** otherwise: a workgroup atomic per thread with non-zeros, and a
//!   Hillis-Steele scan in workgroup memory. `use_subgroups: false` forces it (tests run both).
//!
//! Inputs are bound as `array<u32>` and tested by bit patterns, never by float compares, under
//! op-core's [`DataType::magnitude_mask`](nonzero_core::DataType::magnitude_mask) split into
//! words: 1-byte types are packed 4 per word, 2-byte types 2 per word (mask `0x7FFF` for
//! f16/bf16, `0xFFFF` for integers), 4-byte types with mask `0x7FFF_FFFF` for f32, 8-byte types
//! as word pairs (the f64 high word masked with `0x7FFF_FFFF`), complex numbers as 2 or 4 words
//! under the mask of their component. So `-0.0` is zero, NaN and subnormals are not. Host data is uploaded padded to a multiple of
//! 4 bytes; device inputs must be padded the same way. Byte order is little-endian.
//!
//! # Limits
//!
//! - At most `u32::MAX` elements (flat indices and counts are u32), at most [`MAX_RANK`] dims;
//!   otherwise [`GpuError::TooLarge`].
//! - Tiles per chunk beyond `max_compute_workgroups_per_dimension` use a 2-D dispatch.
//! - Inputs larger than `max_storage_buffer_binding_size` are bound in chunks: each chunk is a
//!   whole number of tiles and of the offset alignment, carries its own flat base index and its
//!   first tile's index, so counts, offsets and coordinates stay exact across chunks.
//!   [`GpuConfig::max_elements_per_chunk`] forces small chunks (tests use it).
//! - The coordinates output must fit one storage binding.
//! - [`GpuNonZero::chunking`] reports how a call is split.
//! - Strings are refused with [`GpuError::UnsupportedType`].
//!
//! # Modules (one job each)
//!
//! - `device`: finding an adapter and opening a device ([`request_device`],
//!   [`GpuNonZero::request`]).
//! - `context`: [`GpuNonZero`] itself (limits, scan path, pipeline cache), [`GpuNonZero::chunking`].
//! - `config`: [`GpuConfig`] and its check against the device.
//! - `plan`: the chunk planner, pure arithmetic (unit-tested without a GPU).
//! - `kind`: element kinds and their zero masks, derived from
//!   [`DataType::magnitude_mask`](nonzero_core::DataType::magnitude_mask).
//! - `params`: the per-chunk shader parameters, a `bytemuck::Pod` mirror of the WGSL struct.
//! - `shaders`: WGSL assembly from `src/wgsl/` (naga-validated in tests, every variant);
//!   `pipelines`: layouts and the compiled pipelines.
//! - `encode`: bind groups and compute passes; `transfer`: upload and read-back.
//! - `resident`: the device-resident entry points; `host`: the host convenience API.

mod config;
mod context;
mod device;
mod encode;
mod error;
mod host;
mod kept;
mod kind;
mod params;
mod pipelines;
mod plan;
mod resident;
mod shaders;
mod transfer;

pub use config::GpuConfig;
pub use context::GpuNonZero;
pub use device::request_device;
pub use error::{GpuError, ReadbackError};
pub use host::DmlCoordinates;
pub use kind::ElementKind;
pub use plan::Chunking;
pub use resident::GpuOnnxOutput;

/// Most dimensions a shape may have.
pub const MAX_RANK: usize = 16;
