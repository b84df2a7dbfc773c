//! The chunk planner: how one call is split into bindings of the input (chunks), tiles, blocks
//! of tiles and dispatches. Pure arithmetic on the data type, the shape and the limits, so it is
//! unit-tested here without a GPU.
//!
//! - A tile is `workgroup_size * ITEMS` elements, one workgroup of passes 1 and 3.
//! - A chunk is one binding of the input: at most `max_storage_buffer_binding_size` bytes, a
//!   whole number of tiles, and starting at a multiple of `min_storage_buffer_offset_alignment`.
//!   Each carries its flat base index and the index of its first tile, so the one scan over all
//!   tiles keeps counts, offsets and coordinates exact across chunks.
//! - A block is `workgroup_size * ITEMS` tiles, one workgroup of pass 2a.
//! - A dispatch of more workgroups than fit along x becomes 2-D ([`dispatch_size`]).

use crate::kind::{type_info, TypeInfo};
use crate::{GpuConfig, GpuError, MAX_RANK};
use nonzero_core::DataType;

/// Elements per thread (the WGSL constant `ITEMS`).
pub(crate) const ITEMS: u64 = 4;

/// The device limits and configuration a plan obeys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlanLimits {
    pub workgroup_size: u64,
    /// [`GpuConfig::max_elements_per_chunk`].
    pub max_elements_per_chunk: u64,
    /// Workgroups along x of one dispatch: the device's and the configuration's limit.
    pub max_workgroups_x: u64,
    /// Workgroups along y of one dispatch: the device's limit.
    pub max_workgroups_y: u64,
    /// `min_storage_buffer_offset_alignment`, at least 4.
    pub offset_alignment: u64,
    /// `max_storage_buffer_binding_size`.
    pub max_binding: u64,
    /// `max_buffer_size`.
    pub max_buffer: u64,
}

impl PlanLimits {
    pub fn new(device: &wgpu::Limits, config: &GpuConfig) -> Self {
        let per_dim = u64::from(device.max_compute_workgroups_per_dimension);
        PlanLimits {
            workgroup_size: u64::from(config.workgroup_size),
            max_elements_per_chunk: config.max_elements_per_chunk,
            max_workgroups_x: per_dim.min(u64::from(config.max_workgroups_per_dim)),
            max_workgroups_y: per_dim,
            offset_alignment: u64::from(device.min_storage_buffer_offset_alignment).max(4),
            max_binding: device.max_storage_buffer_binding_size,
            max_buffer: device.max_buffer_size,
        }
    }

    /// Elements per tile (and tiles per block).
    pub fn tile(&self) -> u64 {
        self.workgroup_size * ITEMS
    }

    /// Refuses a buffer of `bytes` that cannot be bound whole.
    pub fn check_binding(&self, what: &'static str, bytes: u64) -> Result<(), GpuError> {
        let limit = self.max_binding.min(self.max_buffer);
        if bytes > limit {
            return Err(GpuError::TooLarge {
                what,
                needed: bytes,
                limit,
            });
        }
        Ok(())
    }
}

/// One binding of the input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Chunk {
    /// Flat index of the first element.
    pub start: u64,
    /// Elements.
    pub n: u64,
    /// Index of the first tile in the tile array of the whole call.
    pub tile_base: u64,
    /// Tiles (`n / tile`, rounded up).
    pub tiles: u64,
}

/// How a call runs. Every count fits `u32` (the shader's word size).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub info: TypeInfo,
    pub numel: u64,
    /// The shape as u32, or empty when the tensor has no elements.
    pub dims: Vec<u32>,
    /// At least one (an empty tensor has one empty chunk: the scan pass still writes the count).
    pub chunks: Vec<Chunk>,
    pub total_tiles: u64,
    /// Blocks of pass 2 (`tile` tiles each).
    pub blocks: u64,
}

/// How a call is split: see [`GpuNonZero::chunking`](crate::GpuNonZero::chunking).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunking {
    /// Bindings of the input (at least 1, even for an empty tensor).
    pub chunks: usize,
    /// Tiles of all chunks (`workgroup_size * 4` elements each).
    pub tiles: u64,
    /// The largest number of workgroups one dispatch needs along y (1 = 1-D dispatch).
    pub max_dispatch_rows: u64,
}

/// Plans NonZero of a `dtype` tensor of `shape` under `limits`.
pub(crate) fn plan(
    dtype: DataType,
    shape: &[usize],
    limits: &PlanLimits,
) -> Result<Plan, GpuError> {
    let info = type_info(dtype)?;
    if shape.len() > MAX_RANK {
        return Err(GpuError::TooLarge {
            what: "rank",
            needed: shape.len() as u64,
            limit: MAX_RANK as u64,
        });
    }
    let numel = shape
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))
        .ok_or_else(|| GpuError::ShapeOverflow {
            shape: shape.to_vec(),
        })?;
    if numel > u64::from(u32::MAX) {
        return Err(GpuError::TooLarge {
            what: "element count",
            needed: numel,
            limit: u64::from(u32::MAX),
        });
    }
    // With numel > 0 every size is at most numel, so it fits u32.
    let dims = if numel == 0 {
        vec![]
    } else {
        shape.iter().map(|&d| d as u32).collect()
    };
    let per_chunk = elements_per_chunk(info.kind.size(), limits)?;
    let tile = limits.tile();
    // Chunks are whole tiles, so the tiles of all chunks are the tiles of the whole tensor;
    // checked before the chunk list is built.
    limits.check_binding("tile counts", numel.div_ceil(tile) * 4)?;
    let mut chunks = Vec::new();
    let (mut start, mut tile_base) = (0u64, 0u64);
    while start < numel {
        let n = per_chunk.min(numel - start);
        let tiles = n.div_ceil(tile);
        if tiles.div_ceil(limits.max_workgroups_x) > limits.max_workgroups_y {
            return Err(GpuError::TooLarge {
                what: "workgroups per chunk",
                needed: tiles,
                limit: limits.max_workgroups_x * limits.max_workgroups_y,
            });
        }
        chunks.push(Chunk {
            start,
            n,
            tile_base,
            tiles,
        });
        start += n;
        tile_base += tiles;
    }
    if chunks.is_empty() {
        chunks.push(Chunk {
            start: 0,
            n: 0,
            tile_base: 0,
            tiles: 0,
        });
    }
    // Pass 2a dispatches one workgroup per block of tiles.
    let blocks = tile_base.div_ceil(tile);
    if blocks.div_ceil(limits.max_workgroups_x) > limits.max_workgroups_y {
        return Err(GpuError::TooLarge {
            what: "tile blocks",
            needed: blocks,
            limit: limits.max_workgroups_x * limits.max_workgroups_y,
        });
    }
    Ok(Plan {
        info,
        numel,
        dims,
        chunks,
        total_tiles: tile_base,
        blocks,
    })
}

/// Elements of a full chunk: the most that fit one binding and the configured bound, rounded
/// down to a whole number of units (a unit is a whole number of tiles whose bytes are a multiple
/// of the offset alignment, so every chunk starts aligned). At least one unit.
fn elements_per_chunk(size: u64, limits: &PlanLimits) -> Result<u64, GpuError> {
    let mut unit = limits.tile();
    while !(unit * size).is_multiple_of(limits.offset_alignment) {
        unit *= 2;
    }
    let limit = limits.max_elements_per_chunk.min(limits.max_binding / size);
    if unit > limit && unit * size > limits.max_binding {
        return Err(GpuError::InvalidConfig(format!(
            "a chunk unit of {unit} elements exceeds the binding limit of {} bytes",
            limits.max_binding
        )));
    }
    Ok((limit / unit).max(1) * unit)
}

/// Workgroups `(x, y)` of a dispatch of `workgroups` (`None` for none): at most `max_x` along x,
/// the rest in rows. The shader numbers them `y * num_workgroups.x + x`; the surplus of the
/// last row exits at once.
pub(crate) fn dispatch_size(workgroups: u64, max_x: u64) -> Option<(u32, u32)> {
    if workgroups == 0 {
        return None;
    }
    let x = workgroups.min(max_x);
    Some((x as u32, workgroups.div_ceil(x) as u32))
}

impl Plan {
    pub fn chunking(&self, limits: &PlanLimits) -> Chunking {
        let rows = |workgroups: u64| workgroups.div_ceil(limits.max_workgroups_x);
        let chunk_rows = self.chunks.iter().map(|c| rows(c.tiles)).max().unwrap_or(0);
        Chunking {
            chunks: self.chunks.len(),
            tiles: self.total_tiles,
            max_dispatch_rows: chunk_rows.max(rows(self.blocks)).max(1),
        }
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
