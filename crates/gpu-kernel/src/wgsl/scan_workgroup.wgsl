// Workgroup-memory path (no subgroup operations).

// The invocation's builtins, passed to the scan helpers.
struct Ids {
    @builtin(local_invocation_index) lid: u32,
}

// Adds a thread's count to the tile total.
fn add_count(ids: Ids, c: u32) {
    if (c != 0u) {
        atomicAdd(&total, c);
    }
}

// (inclusive prefix sum of `v` over the workgroup in `local_invocation_index` order, workgroup
// total). Every thread must call it; the caller puts a barrier before the next call.
fn scan_inclusive(ids: Ids, v: u32) -> vec2<u32> {
    let incl = scan_hs(ids.lid, v);
    return vec2<u32>(incl, scratch[WG - 1u]);
}
