// Shared by every NonZero shader module (see `shaders.rs` for how a module is put together).
// The generated header before it defines
//   const WG: u32        the workgroup size (a power of two, 4..=256)
//   const MAX_RANK: u32  the most dimensions
// The scan variant (scan_subgroup.wgsl or scan_workgroup.wgsl) defines `struct Ids`,
// `add_count` and `scan_inclusive`.
//
// Every thread owns ITEMS consecutive elements; a tile is WG * ITEMS elements (one workgroup of
// passes 1 and 3), a block is WG * ITEMS tiles (one workgroup of pass 2a).

const ITEMS: u32 = 4u;
const TILE: u32 = WG * ITEMS;

// `Params.mode`: what pass 3 writes.
const MODE_DML: u32 = 0u;  // rows of `ncols` u32
const MODE_ONNX: u32 = 1u; // [rank, nnz] int64 as (lo, hi) u32 pairs

// One per chunk; mirrored by `Params` in params.rs (a test compares the layouts).
struct Params {
    n: u32,           // elements in this chunk
    base: u32,        // flat index of the chunk's first element
    tile_base: u32,   // index of the chunk's first tile in `tiles`
    num_tiles: u32,   // tiles in this chunk
    total_tiles: u32, // tiles of all chunks (pass 2)
    rank: u32,
    skip: u32,        // DML: leading dimensions not written (rank - N)
    ncols: u32,       // DML: N
    mode: u32,        // MODE_DML or MODE_ONNX
    nnz: u32,         // ONNX: row length
    mask_lo: u32,     // magnitude mask of the (low) word
    mask_hi: u32,     // magnitude mask of the high word (8-byte components)
    dims: array<u32, MAX_RANK>,
}

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read> p: Params;
@group(0) @binding(2) var<storage, read_write> tiles: array<u32>;
@group(0) @binding(3) var<storage, read_write> count: array<u32>;
@group(0) @binding(4) var<storage, read_write> out: array<u32>;
@group(0) @binding(5) var<storage, read_write> blocks: array<u32>;

var<workgroup> scratch: array<u32, WG>;
var<workgroup> total: atomic<u32>;

// The workgroup's index in a 1-D or 2-D dispatch (`dispatch_size` in plan.rs).
fn tile_id(wg: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wg.y * nwg.x + wg.x;
}

// Inclusive workgroup scan (Hillis-Steele over `scratch`); every thread must call it. The
// workgroup total is left in `scratch[WG - 1]` (until the next call). The workgroup-memory path
// uses it for every scan, the subgroup path when the subgroup layout check fails.
fn scan_hs(lid: u32, v: u32) -> u32 {
    var x = v;
    scratch[lid] = x;
    workgroupBarrier();
    for (var off = 1u; off < WG; off = off << 1u) {
        var y = 0u;
        if (lid >= off) {
            y = scratch[lid - off];
        }
        workgroupBarrier();
        x = x + y;
        scratch[lid] = x;
        workgroupBarrier();
    }
    return x;
}
