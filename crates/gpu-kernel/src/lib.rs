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
//! [`GpuNonZero::request`] which finds an adapter itself). It compiles one set of compute
//! pipelines per [`ElementKind`] on first use and reuses it across calls.
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
//!   [`nonzero_core::OnnxCoordinates`]; [`GpuNonZero::nonzero_coordinates`] /
//!   [`GpuNonZero::nonzero_coordinates_bytes`] return [`DmlCoordinates`].
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
//! Inputs are bound as `array<u32>` and tested by bit patterns, never by float compares:
//! 1-byte types are packed 4 per word, 2-byte types 2 per word (mask `0x7FFF` for f16/bf16,
//! `0xFFFF` for integers), 4-byte types with mask `0x7FFF_FFFF` for f32, 8-byte types as word
//! pairs (the f64 high word masked with `0x7FFF_FFFF`), complex numbers as 2 or 4 words. So
//! `-0.0` is zero, NaN and subnormals are not. Host data is uploaded padded to a multiple of
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

mod error;
mod kind;

pub use error::GpuError;
pub use kind::ElementKind;

use kind::{type_info, TypeInfo};
use nonzero_core::{effective_rank, DataType, Element, OnnxCoordinates};
use std::any::TypeId;
use std::sync::{mpsc, OnceLock};
use wgpu::util::DeviceExt;

/// Most dimensions a shape may have.
pub const MAX_RANK: usize = 16;
const ITEMS: u64 = 4;
const PARAM_WORDS: usize = 12 + MAX_RANK;
const PARAM_BYTES: u64 = (PARAM_WORDS * 4) as u64;
const SHADER: &str = include_str!("shader.wgsl");
const SCAN_WORKGROUP: &str = include_str!("scan_workgroup.wgsl");
const SCAN_SUBGROUP: &str = include_str!("scan_subgroup.wgsl");
const SUBGROUP_IDS: &str = "    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,";

/// Tuning and test knobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuConfig {
    /// Threads per workgroup: a power of two from 4 to 256 (and within the device's limit).
    /// A tile is `4 * workgroup_size` elements.
    pub workgroup_size: u32,
    /// Upper bound on the elements bound at once; the device's
    /// `max_storage_buffer_binding_size` bounds it too. Rounded down to a whole number of tiles
    /// (and of the storage offset alignment), at least one such unit.
    pub max_elements_per_chunk: u64,
    /// Upper bound on workgroups along x of one dispatch (the device's limit bounds it too);
    /// beyond it the dispatch becomes 2-D.
    pub max_workgroups_per_dim: u32,
    /// Use subgroup operations when the device has [`wgpu::Features::SUBGROUP`] (default
    /// `true`); `false` forces the workgroup-memory path everywhere.
    /// [`GpuNonZero::uses_subgroups`] tells which path a context runs.
    pub use_subgroups: bool,
}

impl Default for GpuConfig {
    fn default() -> Self {
        GpuConfig {
            workgroup_size: 256,
            max_elements_per_chunk: u64::MAX,
            max_workgroups_per_dim: u32::MAX,
            use_subgroups: true,
        }
    }
}

/// DirectML NonZeroCoordinates read back to the host: `count` rows of `columns` u32 each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DmlCoordinates {
    pub count: u32,
    pub columns: usize,
    /// Row-major `count x columns`.
    pub coords: Vec<u32>,
}

/// How a call is split: see [`GpuNonZero::chunking`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunking {
    /// Bindings of the input (at least 1, even for an empty tensor).
    pub chunks: usize,
    /// Tiles of all chunks (`workgroup_size * 4` elements each).
    pub tiles: u64,
    /// The largest number of workgroups one dispatch needs along y (1 = 1-D dispatch).
    pub max_dispatch_rows: u64,
}

/// The ONNX output left on the device.
#[derive(Debug)]
pub struct GpuOnnxOutput {
    /// `[rank, nnz]` int64 as (lo, hi) u32 pairs in its first `rank * nnz * 8` bytes
    /// (`STORAGE | COPY_SRC`; at least 8 bytes long).
    pub buffer: wgpu::Buffer,
    pub rank: usize,
    pub nnz: usize,
}

struct Pipelines {
    count: wgpu::ComputePipeline,
    blocks: wgpu::ComputePipeline,
    scan: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
}

/// A NonZero context for one device: bind group layout, pipelines per element kind, limits.
pub struct GpuNonZero {
    device: wgpu::Device,
    queue: wgpu::Queue,
    config: GpuConfig,
    layout: wgpu::BindGroupLayout,
    pipeline_layout: wgpu::PipelineLayout,
    pipelines: [OnceLock<Pipelines>; 6],
    dummy: wgpu::Buffer,
    dummy_input: wgpu::Buffer,
    limits: wgpu::Limits,
    subgroups: bool,
}

impl std::fmt::Debug for GpuNonZero {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuNonZero")
            .field("config", &self.config)
            .field("subgroups", &self.subgroups)
            .finish_non_exhaustive()
    }
}

/// Finds an adapter (high performance first) and opens a device with the adapter's real limits
/// and the features of `wanted` it supports.
pub fn request_device(
    wanted: wgpu::Features,
) -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), GpuError> {
    // Vulkan/Metal/DX12 first (quiet on headless Linux), then every backend; WGPU_BACKEND
    // overrides both.
    let find = |backends: wgpu::Backends| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wgpu::Backends::from_env().unwrap_or(backends);
        let instance = wgpu::Instance::new(desc);
        pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
    };
    let adapter = find(wgpu::Backends::PRIMARY)
        .or_else(|_| find(wgpu::Backends::all()))
        .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
    let desc = wgpu::DeviceDescriptor {
        label: Some("nonzero-gpu"),
        required_features: adapter.features() & wanted,
        required_limits: adapter.limits(),
        ..Default::default()
    };
    let (device, queue) = pollster::block_on(adapter.request_device(&desc))
        .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
    Ok((adapter, device, queue))
}

fn pad4(n: u64) -> u64 {
    n.div_ceil(4) * 4
}

struct Chunk {
    start: u64,
    n: u64,
    tile_base: u64,
    tiles: u64,
}

struct Plan {
    info: TypeInfo,
    numel: u64,
    dims: Vec<u32>,
    chunks: Vec<Chunk>,
    total_tiles: u64,
    /// Blocks of pass 2 (`workgroup_size * 4` tiles each).
    blocks: u64,
}

/// Pass 2's scratch: tile counts (then offsets within their block) and block sums (then block
/// offsets).
struct Scratch {
    tiles: wgpu::Buffer,
    blocks: wgpu::Buffer,
}

/// What pass 3 writes.
#[derive(Clone, Copy)]
enum Output {
    /// DirectML rows: N columns, the first `skip` dimensions left out.
    Dml { ncols: u32, skip: u32 },
    /// ONNX `[rank, stride]` int64 rows.
    Onnx { stride: u32 },
}

impl GpuNonZero {
    /// A context for an existing device. Pipelines are compiled on first use of each kind.
    pub fn new(
        device: wgpu::Device,
        queue: wgpu::Queue,
        config: GpuConfig,
    ) -> Result<Self, GpuError> {
        let limits = device.limits();
        let wg = config.workgroup_size;
        if !wg.is_power_of_two()
            || !(4..=256).contains(&wg)
            || wg > limits.max_compute_invocations_per_workgroup
        {
            return Err(GpuError::InvalidConfig(format!(
                "workgroup_size {wg} must be a power of two in 4..=256 within the device limit {}",
                limits.max_compute_invocations_per_workgroup
            )));
        }
        if config.max_workgroups_per_dim == 0 || config.max_elements_per_chunk == 0 {
            return Err(GpuError::InvalidConfig("limits must be positive".into()));
        }
        let storage = |binding, read_only| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("nonzero"),
            entries: &[
                storage(0, true),
                storage(1, true),
                storage(2, false),
                storage(3, false),
                storage(4, false),
                storage(5, false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("nonzero"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let dummy = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("nonzero dummy"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let dummy_input = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("nonzero dummy input"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let subgroups =
            config.use_subgroups && device.features().contains(wgpu::Features::SUBGROUP);
        Ok(GpuNonZero {
            subgroups,
            device,
            queue,
            config,
            layout,
            pipeline_layout,
            pipelines: Default::default(),
            dummy,
            dummy_input,
            limits,
        })
    }

    /// Finds an adapter, opens a device (see [`request_device`]) with
    /// [`wgpu::Features::SUBGROUP`] when the adapter has it, and makes a context.
    pub fn request(config: GpuConfig) -> Result<Self, GpuError> {
        let (_, device, queue) = request_device(wgpu::Features::SUBGROUP)?;
        GpuNonZero::new(device, queue, config)
    }

    /// The device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The configuration.
    pub fn config(&self) -> &GpuConfig {
        &self.config
    }

    /// Whether the kernels use subgroup operations: [`GpuConfig::use_subgroups`] and the
    /// device was opened with [`wgpu::Features::SUBGROUP`]. Otherwise they use the
    /// workgroup-memory scan.
    pub fn uses_subgroups(&self) -> bool {
        self.subgroups
    }

    /// Compiles (once) and returns the pipelines of a kind.
    fn pipelines(&self, kind: ElementKind) -> &Pipelines {
        self.pipelines[kind.index()].get_or_init(|| {
            let (ids, scan) = if self.subgroups {
                (SUBGROUP_IDS, SCAN_SUBGROUP)
            } else {
                ("", SCAN_WORKGROUP)
            };
            let src = SHADER
                .replace("{SUBGROUP_IDS}", ids)
                .replace("{SCAN}", scan)
                .replace("{WG}", &self.config.workgroup_size.to_string())
                .replace("{MAX_RANK}", &MAX_RANK.to_string())
                .replace("{LOAD_BODY}", kind.load_body());
            let module = self
                .device
                .create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some("nonzero"),
                    source: wgpu::ShaderSource::Wgsl(src.into()),
                });
            let make = |entry: &str| {
                self.device
                    .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                        label: Some(entry),
                        layout: Some(&self.pipeline_layout),
                        module: &module,
                        entry_point: Some(entry),
                        compilation_options: Default::default(),
                        cache: None,
                    })
            };
            Pipelines {
                count: make("count_tiles"),
                blocks: make("scan_blocks"),
                scan: make("scan_block_sums"),
                scatter: make("scatter"),
            }
        })
    }

    /// Compiles the pipelines of every kind now rather than on first use.
    pub fn warm_up(&self) {
        for kind in ElementKind::ALL {
            self.pipelines(kind);
        }
    }

    fn plan(&self, dtype: DataType, shape: &[usize]) -> Result<Plan, GpuError> {
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
        let size = info.kind.size();
        let tile = u64::from(self.config.workgroup_size) * ITEMS;
        let align = u64::from(self.limits.min_storage_buffer_offset_alignment).max(4);
        let mut unit = tile;
        while !(unit * size).is_multiple_of(align) {
            unit *= 2;
        }
        let max_bind = self.limits.max_storage_buffer_binding_size;
        let limit = self.config.max_elements_per_chunk.min(max_bind / size);
        if unit > limit && unit * size > max_bind {
            return Err(GpuError::InvalidConfig(format!(
                "a chunk unit of {unit} elements exceeds the binding limit of {max_bind} bytes"
            )));
        }
        let per_chunk = (limit / unit).max(1) * unit;
        let mut chunks = Vec::new();
        let (mut start, mut tile_base) = (0u64, 0u64);
        while start < numel {
            let n = per_chunk.min(numel - start);
            let tiles = n.div_ceil(tile);
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
            // An empty tensor still runs the scan pass, which writes the count (0).
            chunks.push(Chunk {
                start: 0,
                n: 0,
                tile_base: 0,
                tiles: 0,
            });
        }
        let max_dim = u64::from(
            self.limits
                .max_compute_workgroups_per_dimension
                .min(self.config.max_workgroups_per_dim),
        );
        for c in &chunks {
            if c.tiles.div_ceil(max_dim) > max_dim {
                return Err(GpuError::TooLarge {
                    what: "workgroups per chunk",
                    needed: c.tiles,
                    limit: max_dim * max_dim,
                });
            }
        }
        // Pass 2a dispatches one workgroup per block of tiles.
        let blocks = tile_base.div_ceil(tile);
        let max_y = u64::from(self.limits.max_compute_workgroups_per_dimension);
        if blocks.div_ceil(max_dim) > max_y {
            return Err(GpuError::TooLarge {
                what: "tile blocks",
                needed: blocks,
                limit: max_dim * max_y,
            });
        }
        self.check_binding("tile counts", tile_base * 4)?;
        Ok(Plan {
            info,
            numel,
            dims,
            chunks,
            total_tiles: tile_base,
            blocks,
        })
    }

    /// How an input of this type and shape is split into chunks, tiles and dispatches.
    pub fn chunking(&self, dtype: DataType, shape: &[usize]) -> Result<Chunking, GpuError> {
        let plan = self.plan(dtype, shape)?;
        let max_dim = u64::from(
            self.limits
                .max_compute_workgroups_per_dimension
                .min(self.config.max_workgroups_per_dim),
        );
        let rows = plan
            .chunks
            .iter()
            .map(|c| c.tiles.div_ceil(max_dim))
            .max()
            .unwrap_or(0)
            .max(plan.blocks.div_ceil(max_dim))
            .max(1);
        Ok(Chunking {
            chunks: plan.chunks.len(),
            tiles: plan.total_tiles,
            max_dispatch_rows: rows,
        })
    }

    fn check_binding(&self, what: &'static str, bytes: u64) -> Result<(), GpuError> {
        let limit = self
            .limits
            .max_storage_buffer_binding_size
            .min(self.limits.max_buffer_size);
        if bytes > limit {
            return Err(GpuError::TooLarge {
                what,
                needed: bytes,
                limit,
            });
        }
        Ok(())
    }

    fn check_input(&self, plan: &Plan, input: &wgpu::Buffer) -> Result<(), GpuError> {
        let needed = pad4(plan.numel * plan.info.kind.size());
        if input.size() < needed {
            return Err(GpuError::BufferTooSmall {
                what: "input",
                needed,
                actual: input.size(),
            });
        }
        check_usage("input", input, wgpu::BufferUsages::STORAGE)
    }

    fn params_bytes(&self, plan: &Plan, out: Output) -> (Vec<u8>, u64) {
        let align = u64::from(self.limits.min_storage_buffer_offset_alignment).max(4);
        let stride = PARAM_BYTES.div_ceil(align) * align;
        let mut bytes = vec![0u8; (stride * plan.chunks.len().max(1) as u64) as usize];
        let (mode, ncols, skip, nnz) = match out {
            Output::Dml { ncols, skip } => (0, ncols, skip, 0),
            Output::Onnx { stride } => (1, 0, 0, stride),
        };
        for (i, c) in plan.chunks.iter().enumerate() {
            let mut w = [0u32; PARAM_WORDS];
            w[..12].copy_from_slice(&[
                c.n as u32,
                c.start as u32,
                c.tile_base as u32,
                c.tiles as u32,
                plan.total_tiles as u32,
                plan.dims.len() as u32,
                skip,
                ncols,
                mode,
                nnz,
                plan.info.mask_lo,
                plan.info.mask_hi,
            ]);
            w[12..12 + plan.dims.len()].copy_from_slice(&plan.dims);
            let at = i * stride as usize;
            bytes[at..at + PARAM_BYTES as usize].copy_from_slice(bytemuck::cast_slice(&w));
        }
        (bytes, stride)
    }

    #[allow(clippy::too_many_arguments)]
    fn bind_groups(
        &self,
        plan: &Plan,
        input: &wgpu::Buffer,
        params: &wgpu::Buffer,
        stride: u64,
        tiles: &Scratch,
        count: &wgpu::Buffer,
        out: Option<(&wgpu::Buffer, u64)>,
    ) -> Vec<wgpu::BindGroup> {
        let size = plan.info.kind.size();
        let input_len = input.size();
        plan.chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let offset = c.start * size;
                let len = pad4(c.n * size).min(input_len - offset);
                let (input, offset, len) = if len == 0 {
                    (&self.dummy_input, 0, 16)
                } else {
                    (input, offset, len)
                };
                let (out_buf, out_len) = match out {
                    Some((b, len)) => (b, len),
                    None => (&self.dummy, 16),
                };
                let entry = |binding, buffer, offset, len| wgpu::BindGroupEntry {
                    binding,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer,
                        offset,
                        size: wgpu::BufferSize::new(len),
                    }),
                };
                self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("nonzero chunk"),
                    layout: &self.layout,
                    entries: &[
                        entry(0, input, offset, len),
                        entry(1, params, i as u64 * stride, PARAM_BYTES),
                        entry(2, &tiles.tiles, 0, (plan.total_tiles * 4).max(4)),
                        entry(3, count, 0, 4),
                        entry(4, out_buf, 0, out_len),
                        entry(5, &tiles.blocks, 0, (plan.blocks * 4).max(4)),
                    ],
                })
            })
            .collect()
    }

    fn dispatch(&self, pass: &mut wgpu::ComputePass<'_>, tiles: u64) {
        if tiles == 0 {
            return;
        }
        let max_dim = u64::from(
            self.limits
                .max_compute_workgroups_per_dimension
                .min(self.config.max_workgroups_per_dim),
        );
        let x = tiles.min(max_dim);
        let y = tiles.div_ceil(x);
        pass.dispatch_workgroups(x as u32, y as u32, 1);
    }

    fn encode_count(
        &self,
        enc: &mut wgpu::CommandEncoder,
        plan: &Plan,
        groups: &[wgpu::BindGroup],
    ) {
        let p = self.pipelines(plan.info.kind);
        self.encode_per_chunk(enc, "nonzero count", &p.count, plan, groups);
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("nonzero scan blocks"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&p.blocks);
        pass.set_bind_group(0, &groups[0], &[]);
        self.dispatch(&mut pass, plan.blocks);
        drop(pass);
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("nonzero scan block sums"),
            timestamp_writes: None,
        });
        pass.set_pipeline(&p.scan);
        pass.set_bind_group(0, &groups[0], &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    fn encode_scatter(
        &self,
        enc: &mut wgpu::CommandEncoder,
        plan: &Plan,
        groups: &[wgpu::BindGroup],
    ) {
        let p = self.pipelines(plan.info.kind);
        self.encode_per_chunk(enc, "nonzero scatter", &p.scatter, plan, groups);
    }

    /// One compute pass running `pipeline` over every chunk's tiles, each with its bind group.
    fn encode_per_chunk(
        &self,
        enc: &mut wgpu::CommandEncoder,
        label: &str,
        pipeline: &wgpu::ComputePipeline,
        plan: &Plan,
        groups: &[wgpu::BindGroup],
    ) {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(label),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        for (c, g) in plan.chunks.iter().zip(groups) {
            pass.set_bind_group(0, g, &[]);
            self.dispatch(&mut pass, c.tiles);
        }
    }

    fn scratch(&self, plan: &Plan) -> Scratch {
        let none = wgpu::BufferUsages::empty();
        Scratch {
            tiles: self.storage_buffer("nonzero tiles", plan.total_tiles * 4, none),
            blocks: self.storage_buffer("nonzero blocks", plan.blocks * 4, none),
        }
    }

    fn storage_buffer(&self, label: &str, size: u64, extra: wgpu::BufferUsages) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(4),
            usage: wgpu::BufferUsages::STORAGE | extra,
            mapped_at_creation: false,
        })
    }

    fn params_buffer(&self, plan: &Plan, out: Output) -> (wgpu::Buffer, u64) {
        let (bytes, stride) = self.params_bytes(plan, out);
        let buf = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("nonzero params"),
                contents: &bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            });
        (buf, stride)
    }

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
        self.check_input(&plan, input)?;
        check_usage("count", count, wgpu::BufferUsages::STORAGE)?;
        check_usage("coordinates", coords, wgpu::BufferUsages::STORAGE)?;
        if count.size() < 4 {
            return Err(GpuError::BufferTooSmall {
                what: "count",
                needed: 4,
                actual: count.size(),
            });
        }
        let coord_bytes = plan.numel * n_columns as u64 * 4;
        if coords.size() < coord_bytes {
            return Err(GpuError::BufferTooSmall {
                what: "coordinates",
                needed: coord_bytes,
                actual: coords.size(),
            });
        }
        self.check_binding("coordinates", coord_bytes)?;
        let out = Output::Dml {
            ncols: n_columns as u32,
            skip: (rank - n_columns) as u32,
        };
        let (params, stride) = self.params_buffer(&plan, out);
        let tiles = self.scratch(&plan);
        let groups = self.bind_groups(&plan, input, &params, stride, &tiles, count, None);
        self.encode_count(enc, &plan, &groups);
        if coord_bytes > 0 {
            let groups = self.bind_groups(
                &plan,
                input,
                &params,
                stride,
                &tiles,
                count,
                Some((coords, coord_bytes)),
            );
            self.encode_scatter(enc, &plan, &groups);
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
        self.check_input(&plan, input)?;
        check_usage("count", count, wgpu::BufferUsages::STORAGE)?;
        check_usage("output", out, wgpu::BufferUsages::STORAGE)?;
        if count.size() < 4 {
            return Err(GpuError::BufferTooSmall {
                what: "count",
                needed: 4,
                actual: count.size(),
            });
        }
        let out_bytes = plan.numel * shape.len() as u64 * 8;
        if out.size() < out_bytes {
            return Err(GpuError::BufferTooSmall {
                what: "output",
                needed: out_bytes,
                actual: out.size(),
            });
        }
        self.check_binding("output", out_bytes)?;
        let (params, stride) = self.params_buffer(
            &plan,
            Output::Onnx {
                stride: plan.numel as u32,
            },
        );
        let tiles = self.scratch(&plan);
        let mut enc = self.device.create_command_encoder(&Default::default());
        let groups = self.bind_groups(&plan, input, &params, stride, &tiles, count, None);
        self.encode_count(&mut enc, &plan, &groups);
        if out_bytes > 0 {
            let groups = self.bind_groups(
                &plan,
                input,
                &params,
                stride,
                &tiles,
                count,
                Some((out, out_bytes)),
            );
            self.encode_scatter(&mut enc, &plan, &groups);
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
        self.check_input(&plan, input)?;
        let rank = shape.len();
        let empty = |nnz| GpuOnnxOutput {
            buffer: self.storage_buffer("nonzero onnx", 8, wgpu::BufferUsages::COPY_SRC),
            rank,
            nnz,
        };
        if plan.numel == 0 {
            return Ok(empty(0));
        }
        // The row stride (nnz) is not known yet: passes 1 and 2 do not read it.
        let (params, stride) = self.params_buffer(&plan, Output::Onnx { stride: 0 });
        let tiles = self.scratch(&plan);
        let count = self.storage_buffer("nonzero count", 4, wgpu::BufferUsages::COPY_SRC);
        let mut enc = self.device.create_command_encoder(&Default::default());
        let groups = self.bind_groups(&plan, input, &params, stride, &tiles, &count, None);
        self.encode_count(&mut enc, &plan, &groups);
        self.queue.submit([enc.finish()]);
        let bytes = self.read_buffer(&count, 4)?;
        let nnz = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        let out_bytes = (rank * nnz) as u64 * 8;
        if out_bytes == 0 {
            return Ok(empty(nnz));
        }
        self.check_binding("output", out_bytes)?;
        let (params_bytes, _) = self.params_bytes(&plan, Output::Onnx { stride: nnz as u32 });
        self.queue.write_buffer(&params, 0, &params_bytes);
        let out = self.storage_buffer("nonzero onnx", out_bytes, wgpu::BufferUsages::COPY_SRC);
        let mut enc = self.device.create_command_encoder(&Default::default());
        let groups = self.bind_groups(
            &plan,
            input,
            &params,
            stride,
            &tiles,
            &count,
            Some((&out, out_bytes)),
        );
        self.encode_scatter(&mut enc, &plan, &groups);
        self.queue.submit([enc.finish()]);
        Ok(GpuOnnxOutput {
            buffer: out,
            rank,
            nnz,
        })
    }

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
        let padded = pad4(bytes.len() as u64).max(4);
        if padded > self.limits.max_buffer_size {
            return Err(GpuError::TooLarge {
                what: "input buffer",
                needed: padded,
                limit: self.limits.max_buffer_size,
            });
        }
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

    /// Copies the first `size` bytes of `src` (which needs `COPY_SRC`) to the host; waits.
    pub fn read_buffer(&self, src: &wgpu::Buffer, size: u64) -> Result<Vec<u8>, GpuError> {
        if size == 0 {
            return Ok(Vec::new());
        }
        check_usage("read-back source", src, wgpu::BufferUsages::COPY_SRC)?;
        let padded = pad4(size);
        if src.size() < padded {
            return Err(GpuError::BufferTooSmall {
                what: "read-back source",
                needed: padded,
                actual: src.size(),
            });
        }
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("nonzero read-back"),
            size: padded,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(src, 0, &staging, 0, padded);
        self.queue.submit([enc.finish()]);
        let (tx, rx) = mpsc::channel();
        staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        rx.recv()
            .map_err(|e| GpuError::Readback(e.to_string()))?
            .map_err(|e| GpuError::Readback(e.to_string()))?;
        let data = {
            let view = staging
                .slice(..)
                .get_mapped_range()
                .map_err(|e| GpuError::Readback(format!("{e:?}")))?;
            view[..size as usize].to_vec()
        };
        staging.unmap();
        Ok(data)
    }

    /// ONNX NonZero of host bytes (native order) of `dtype` elements.
    pub fn nonzero_bytes(
        &self,
        dtype: DataType,
        bytes: &[u8],
        shape: &[usize],
    ) -> Result<OnnxCoordinates, GpuError> {
        let plan = self.plan(dtype, shape)?;
        check_bytes(dtype, plan.info.kind.size(), bytes, plan.numel)?;
        let input = self.upload(dtype, bytes)?;
        let out = self.onnx_device(&input, dtype, shape)?;
        let words = self.read_buffer(&out.buffer, (out.rank * out.nnz * 8) as u64)?;
        let data = words
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
            .collect();
        Ok(OnnxCoordinates {
            rank: out.rank,
            nnz: out.nnz,
            data,
        })
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
        let input = self.upload(dtype, bytes)?;
        let count = self.storage_buffer("nonzero count", 4, wgpu::BufferUsages::COPY_SRC);
        let coords = self.storage_buffer(
            "nonzero coords",
            plan.numel * n_columns as u64 * 4,
            wgpu::BufferUsages::COPY_SRC,
        );
        self.dml_device(&input, dtype, shape, n_columns, &count, &coords)?;
        let c = self.read_buffer(&count, 4)?;
        let nnz = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let bytes = self.read_buffer(&coords, u64::from(nnz) * n_columns as u64 * 4)?;
        let coords = bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(DmlCoordinates {
            count: nnz,
            columns: n_columns,
            coords,
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

fn check_usage(
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

/// The bytes of a slice of one of nonzero_core's element types.
fn element_bytes<T: Element>(data: &[T]) -> Result<&[u8], GpuError> {
    let id = TypeId::of::<T>();
    let known = [
        TypeId::of::<bool>(),
        TypeId::of::<u8>(),
        TypeId::of::<i8>(),
        TypeId::of::<u16>(),
        TypeId::of::<i16>(),
        TypeId::of::<u32>(),
        TypeId::of::<i32>(),
        TypeId::of::<u64>(),
        TypeId::of::<i64>(),
        TypeId::of::<nonzero_core::f16>(),
        TypeId::of::<nonzero_core::bf16>(),
        TypeId::of::<f32>(),
        TypeId::of::<f64>(),
        TypeId::of::<nonzero_core::Complex32>(),
        TypeId::of::<nonzero_core::Complex64>(),
    ];
    if !known.contains(&id) || type_info(T::DTYPE)?.kind.size() as usize != std::mem::size_of::<T>()
    {
        return Err(GpuError::UnsupportedType(T::DTYPE));
    }
    // SAFETY: `T` is one of the types above (checked by TypeId): primitive numbers, `bool`, the
    // `half` types and `num_complex::Complex<f32/f64>` (`repr(C)` of two floats). None has
    // padding or uninitialised bytes, so every byte of the slice is initialised and may be read
    // as `u8`; the length is the slice's size in bytes and `u8` has alignment 1.
    Ok(unsafe {
        std::slice::from_raw_parts(data.as_ptr().cast::<u8>(), std::mem::size_of_val(data))
    })
}
