//! The shader parameters: [`Params`] mirrors `struct Params` of `wgsl/common.wgsl` field by
//! field (a test compares both layouts as naga computes the WGSL one), one per chunk, packed at
//! the storage offset alignment so each chunk's bind group points at its own.

use crate::plan::{Chunk, Plan};
use crate::MAX_RANK;
use bytemuck::{Pod, Zeroable};

/// `Params.mode`: what pass 3 writes (the WGSL constants `MODE_DML` and `MODE_ONNX`).
pub(crate) const MODE_DML: u32 = 0;
pub(crate) const MODE_ONNX: u32 = 1;

/// What pass 3 writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    /// DirectML rows: `ncols` columns, the first `skip` dimensions left out.
    Dml { ncols: u32, skip: u32 },
    /// ONNX `[rank, stride]` int64 rows.
    Onnx { stride: u32 },
}

/// The parameters of one chunk, byte for byte the WGSL `Params` (all fields u32, so `repr(C)`
/// has no padding).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct Params {
    /// Elements in this chunk.
    pub n: u32,
    /// Flat index of the chunk's first element.
    pub base: u32,
    /// Index of the chunk's first tile in the tile array.
    pub tile_base: u32,
    /// Tiles in this chunk.
    pub num_tiles: u32,
    /// Tiles of all chunks (pass 2).
    pub total_tiles: u32,
    pub rank: u32,
    /// DirectML: leading dimensions not written (`rank - N`).
    pub skip: u32,
    /// DirectML: `N`.
    pub ncols: u32,
    /// [`MODE_DML`] or [`MODE_ONNX`].
    pub mode: u32,
    /// ONNX: the row length.
    pub nnz: u32,
    /// Magnitude mask of the (low) word.
    pub mask_lo: u32,
    /// Magnitude mask of the high word (8-byte components).
    pub mask_hi: u32,
    /// The shape (first `rank` entries).
    pub dims: [u32; MAX_RANK],
}

impl Params {
    /// The parameters of `chunk` of `plan`. Every count fits u32 (the planner checks it).
    pub fn new(plan: &Plan, chunk: &Chunk, out: Output) -> Params {
        let (mode, ncols, skip, nnz) = match out {
            Output::Dml { ncols, skip } => (MODE_DML, ncols, skip, 0),
            Output::Onnx { stride } => (MODE_ONNX, 0, 0, stride),
        };
        let mut dims = [0u32; MAX_RANK];
        dims[..plan.dims.len()].copy_from_slice(&plan.dims);
        Params {
            n: chunk.n as u32,
            base: chunk.start as u32,
            tile_base: chunk.tile_base as u32,
            num_tiles: chunk.tiles as u32,
            total_tiles: plan.total_tiles as u32,
            rank: plan.dims.len() as u32,
            skip,
            ncols,
            mode,
            nnz,
            mask_lo: plan.info.mask_lo,
            mask_hi: plan.info.mask_hi,
            dims,
        }
    }
}

/// Bytes of one `Params`.
pub(crate) const PARAMS_SIZE: u64 = std::mem::size_of::<Params>() as u64;

/// The distance between two chunks' parameters: `PARAMS_SIZE` rounded up to `alignment`.
pub(crate) fn params_stride(alignment: u64) -> u64 {
    PARAMS_SIZE.div_ceil(alignment) * alignment
}

/// The parameters of every chunk of `plan`, chunk `i` at `i * params_stride(alignment)`.
pub(crate) fn params_bytes(plan: &Plan, out: Output, alignment: u64) -> Vec<u8> {
    let stride = params_stride(alignment) as usize;
    let mut bytes = vec![0u8; stride * plan.chunks.len()];
    for (slot, chunk) in bytes.chunks_exact_mut(stride).zip(&plan.chunks) {
        let params = Params::new(plan, chunk, out);
        slot[..PARAMS_SIZE as usize].copy_from_slice(bytemuck::bytes_of(&params));
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{plan, PlanLimits};
    use crate::shaders::{ModuleKind, ScanPath, ShaderSpec};
    use nonzero_core::DataType;
    use std::mem::offset_of;

    /// The Rust fields in declaration order with their offsets.
    const RUST_FIELDS: [(&str, usize); 13] = [
        ("n", offset_of!(Params, n)),
        ("base", offset_of!(Params, base)),
        ("tile_base", offset_of!(Params, tile_base)),
        ("num_tiles", offset_of!(Params, num_tiles)),
        ("total_tiles", offset_of!(Params, total_tiles)),
        ("rank", offset_of!(Params, rank)),
        ("skip", offset_of!(Params, skip)),
        ("ncols", offset_of!(Params, ncols)),
        ("mode", offset_of!(Params, mode)),
        ("nnz", offset_of!(Params, nnz)),
        ("mask_lo", offset_of!(Params, mask_lo)),
        ("mask_hi", offset_of!(Params, mask_hi)),
        ("dims", offset_of!(Params, dims)),
    ];

    /// naga's layout of the WGSL `Params`: the same names, offsets, types and size as the
    /// Rust struct, so the two cannot drift apart.
    #[test]
    fn params_match_the_wgsl_struct() {
        let spec = ShaderSpec {
            module: ModuleKind::Scatter(crate::ElementKind::Word),
            path: ScanPath::Workgroup,
            workgroup_size: 64,
        };
        let module = naga::front::wgsl::parse_str(&spec.source()).unwrap();
        let (_, ty) = module
            .types
            .iter()
            .find(|(_, t)| t.name.as_deref() == Some("Params"))
            .expect("the WGSL declares Params");
        let naga::TypeInner::Struct { members, span } = &ty.inner else {
            panic!("Params is a struct");
        };
        assert_eq!(*span as usize, std::mem::size_of::<Params>());
        assert_eq!(members.len(), RUST_FIELDS.len(), "field count");
        assert_eq!(
            std::mem::size_of::<Params>(),
            RUST_FIELDS.len() * 4 - 4 + MAX_RANK * 4,
            "the Rust fields listed here are all of Params's fields"
        );
        let u32_ty = naga::TypeInner::Scalar(naga::Scalar::U32);
        for (member, (name, offset)) in members.iter().zip(RUST_FIELDS) {
            assert_eq!(member.name.as_deref(), Some(name));
            assert_eq!(member.offset as usize, offset, "offset of {name}");
            let inner = &module.types[member.ty].inner;
            if name == "dims" {
                let naga::TypeInner::Array { base, size, stride } = inner else {
                    panic!("dims is an array: {inner:?}");
                };
                assert_eq!(module.types[*base].inner, u32_ty);
                assert_eq!(*stride, 4);
                let naga::ArraySize::Constant(len) = size else {
                    panic!("dims has a fixed length");
                };
                assert_eq!(len.get() as usize, MAX_RANK);
            } else {
                assert_eq!(*inner, u32_ty, "{name} is u32");
            }
        }
    }

    #[test]
    fn one_params_per_chunk_at_the_alignment() {
        let limits = PlanLimits {
            workgroup_size: 4,
            max_elements_per_chunk: 1,
            max_workgroups_x: 3,
            max_workgroups_y: 65535,
            offset_alignment: 256,
            max_binding: 1 << 27,
            max_buffer: 1 << 28,
        };
        let p = plan(DataType::Float64, &[3, 100], &limits).unwrap();
        assert_eq!(p.chunks.len(), 10);
        assert_eq!(params_stride(256), 256);
        assert_eq!(params_stride(4), PARAMS_SIZE);
        let bytes = params_bytes(&p, Output::Dml { ncols: 1, skip: 1 }, 256);
        assert_eq!(bytes.len(), 10 * 256);
        let last: Params = bytemuck::pod_read_unaligned(&bytes[9 * 256..][..PARAMS_SIZE as usize]);
        let mut dims = [0; MAX_RANK];
        dims[..2].copy_from_slice(&[3, 100]);
        assert_eq!(
            last,
            Params {
                n: 300 - 9 * 32,
                base: 9 * 32,
                tile_base: 9 * 2,
                num_tiles: 1,
                total_tiles: 19,
                rank: 2,
                skip: 1,
                ncols: 1,
                mode: MODE_DML,
                nnz: 0,
                mask_lo: u32::MAX,
                mask_hi: 0x7FFF_FFFF,
                dims,
            }
        );
        let onnx = params_bytes(&p, Output::Onnx { stride: 7 }, 256);
        let first: Params = bytemuck::pod_read_unaligned(&onnx[..PARAMS_SIZE as usize]);
        assert_eq!((first.mode, first.nnz, first.ncols), (MODE_ONNX, 7, 0));
    }
}
