// Pass 2: the hierarchical scan of the tile counts, in two dispatches (a dispatch boundary is
// the only synchronisation between workgroups). Afterwards a tile's offset is
// `blocks[g / TILE] + tiles[g]` and count[0] holds the total. Independent of the element kind.

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
// per step) and writes the total into count[0].
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
