// Pass 1: non-zeros per tile, into `tiles[tile_base + t]`.

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
