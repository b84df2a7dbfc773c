// Pass 3: recompute the flags, rank them inside the tile, scatter coordinates.

// Writes the coordinates of flat index `flat` as output row `pos` (one division per dimension).
fn write_coords(flat: u32, pos: u32) {
    var rest = flat;
    for (var k = 0u; k < p.rank; k = k + 1u) {
        let d = p.rank - 1u - k;
        let size = p.dims[d];
        let c = rest % size;
        rest = rest / size;
        if (p.mode == MODE_DML) {
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
