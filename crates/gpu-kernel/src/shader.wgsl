// NonZero, reduce-then-scan. Placeholders filled in by `lib.rs`:
//   WG            workgroup size (power of two)
//   MAX_RANK      most dimensions
//   LOAD_BODY     body of `fn is_nz(e: u32) -> bool`
//   SUBGROUP_IDS  the subgroup builtins of `Ids` (subgroup path), else empty
//   SCAN          `add_count` and `scan_inclusive`: scan_subgroup.wgsl or scan_workgroup.wgsl
// Naga 30 rejects `enable subgroups;`: the subgroup built-ins are allowed by the device feature
// `wgpu::Features::SUBGROUP` instead.
// Every thread owns ITEMS consecutive elements; a tile is WG * ITEMS elements.

const WG: u32 = {WG}u;
const ITEMS: u32 = 4u;
const TILE: u32 = WG * ITEMS;
const MAX_RANK: u32 = {MAX_RANK}u;

struct Params {
    n: u32,           // elements in this chunk
    base: u32,        // flat index of the chunk's first element
    tile_base: u32,   // index of the chunk's first tile in `tiles`
    num_tiles: u32,   // tiles in this chunk
    total_tiles: u32, // tiles of all chunks (scan pass)
    rank: u32,
    skip: u32,        // DML: leading dimensions not written (rank - N)
    ncols: u32,       // DML: N
    mode: u32,        // 0 = DML rows of N u32, 1 = ONNX [rank, nnz] int64 as lo/hi u32
    nnz: u32,         // ONNX: row length
    mask_lo: u32,     // magnitude mask of the (low) word
    mask_hi: u32,     // magnitude mask of the high word (8- and 16-byte elements)
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

// The invocation's builtins, passed to the scan helpers.
struct Ids {
    @builtin(local_invocation_index) lid: u32,
{SUBGROUP_IDS}
}

fn is_nz(e: u32) -> bool {
{LOAD_BODY}
}

{SCAN}

fn tile_id(wg: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wg.y * nwg.x + wg.x;
}

// Bit i set when element first + i is non-zero (and inside the chunk).
fn flags(first: u32) -> u32 {
    var f = 0u;
    for (var i = 0u; i < ITEMS; i = i + 1u) {
        let e = first + i;
        if (e < p.n && is_nz(e)) {
            f = f | (1u << i);
        }
    }
    return f;
}

// Inclusive workgroup scan (Hillis-Steele over `scratch`); every thread must call it. The
// workgroup total is left in `scratch[WG - 1]` (until the next call).
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

// Pass 1: non-zeros per tile.
@compute @workgroup_size(WG)
fn count_tiles(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               ids: Ids) {
    let lid = ids.lid;
    let t = tile_id(wg, nwg);
    if (lid == 0u) {
        atomicStore(&total, 0u);
    }
    workgroupBarrier();
    // `t` is uniform across the workgroup, so this early exit keeps barriers uniform.
    if (t >= p.num_tiles) {
        return;
    }
    add_count(ids, countOneBits(flags(t * TILE + lid * ITEMS)));
    workgroupBarrier();
    if (lid == 0u) {
        tiles[p.tile_base + t] = atomicLoad(&total);
    }
}

// Tile counts per block of pass 2: a block is TILE consecutive tiles.
fn num_blocks() -> u32 {
    return (p.total_tiles + TILE - 1u) / TILE;
}

// Pass 2a: workgroup `b` replaces tiles `b * TILE ..` by their exclusive prefix sums within the
// block and stores the block's sum in `blocks[b]`.
@compute @workgroup_size(WG)
fn scan_blocks(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               ids: Ids) {
    let b = tile_id(wg, nwg);
    // Uniform across the workgroup, like in `count_tiles`.
    if (b >= num_blocks()) {
        return;
    }
    let first = b * TILE + ids.lid * ITEMS;
    var v: array<u32, ITEMS>;
    var sum = 0u;
    for (var i = 0u; i < ITEMS; i = i + 1u) {
        v[i] = 0u;
        if (first + i < p.total_tiles) {
            v[i] = tiles[first + i];
        }
        sum = sum + v[i];
    }
    let r = scan_inclusive(ids, sum);
    var run = r.x - sum;
    for (var i = 0u; i < ITEMS; i = i + 1u) {
        if (first + i < p.total_tiles) {
            tiles[first + i] = run;
        }
        run = run + v[i];
    }
    if (ids.lid == 0u) {
        blocks[b] = r.y;
    }
}

// Pass 2b: one workgroup replaces the block sums by their exclusive prefix sums (TILE of them
// per step) and writes the total into count[0]. A tile's offset is then
// `tiles[g] + blocks[g / TILE]`.
@compute @workgroup_size(WG)
fn scan_block_sums(ids: Ids) {
    let lid = ids.lid;
    let nb = num_blocks();
    var carry = 0u;
    for (var start = 0u; start < nb; start = start + TILE) {
        let first = start + lid * ITEMS;
        var v: array<u32, ITEMS>;
        var sum = 0u;
        for (var i = 0u; i < ITEMS; i = i + 1u) {
            v[i] = 0u;
            if (first + i < nb) {
                v[i] = blocks[first + i];
            }
            sum = sum + v[i];
        }
        let r = scan_inclusive(ids, sum);
        var run = carry + r.x - sum;
        for (var i = 0u; i < ITEMS; i = i + 1u) {
            if (first + i < nb) {
                blocks[first + i] = run;
            }
            run = run + v[i];
        }
        carry = carry + r.y;
        // Nobody may overwrite the scan's workgroup memory while another thread still reads it.
        workgroupBarrier();
    }
    if (lid == 0u) {
        count[0] = carry;
    }
}

fn write_coords(flat: u32, pos: u32) {
    var rest = flat;
    for (var k = 0u; k < p.rank; k = k + 1u) {
        let d = p.rank - 1u - k;
        let size = p.dims[d];
        let c = rest % size;
        rest = rest / size;
        if (p.mode == 0u) {
            if (d >= p.skip) {
                out[pos * p.ncols + (d - p.skip)] = c;
            }
        } else {
            let w = 2u * (d * p.nnz + pos);
            out[w] = c;
            out[w + 1u] = 0u;
        }
    }
}

// Pass 3: recompute the flags, rank them inside the tile, scatter coordinates.
@compute @workgroup_size(WG)
fn scatter(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           ids: Ids) {
    let lid = ids.lid;
    let t = tile_id(wg, nwg);
    // Uniform across the workgroup, like in `count_tiles`.
    if (t >= p.num_tiles) {
        return;
    }
    let first = t * TILE + lid * ITEMS;
    var f = flags(first);
    let c = countOneBits(f);
    let incl = scan_inclusive(ids, c).x;
    let g = p.tile_base + t;
    var pos = blocks[g / TILE] + tiles[g] + incl - c;
    for (var i = 0u; i < ITEMS; i = i + 1u) {
        if ((f & (1u << i)) != 0u) {
            write_coords(p.base + first + i, pos);
            pos = pos + 1u;
        }
    }
}
