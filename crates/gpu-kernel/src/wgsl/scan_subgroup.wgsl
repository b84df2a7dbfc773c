// Subgroup path: correct for any subgroup size (1 to WG and beyond: a workgroup smaller than
// the subgroup is one partial subgroup).

// The invocation's builtins, passed to the scan helpers. Naga 30 rejects `enable subgroups;`:
// the device feature `wgpu::Features::SUBGROUP` allows the subgroup built-ins instead.
struct Ids {
    @builtin(local_invocation_index) lid: u32,
    @builtin(subgroup_invocation_id) lane: u32,
    @builtin(subgroup_size) sg_size: u32,
}

// Per-subgroup sums, then their exclusive prefix sums. At most WG subgroups.
var<workgroup> sg_sums: array<u32, WG>;
// Set when an invocation's subgroup lane does not match `lid % subgroup_size` inside a block of
// `subgroup_size` consecutive `lid`s: the layout the two-level scan assumes.
var<workgroup> sg_bad: atomic<u32>;
var<workgroup> sg_flag: u32;
var<workgroup> sg_total: u32;

// Adds a thread's count to the tile total: one atomic per subgroup.
fn add_count(ids: Ids, c: u32) {
    let s = subgroupAdd(c);
    if (ids.lane == subgroupBroadcastFirst(ids.lane) && s != 0u) {
        atomicAdd(&total, s);
    }
}

// (inclusive prefix sum of `v` over the workgroup in `local_invocation_index` order, workgroup
// total). Every thread must call it; the caller puts a barrier before the next call.
//
// Level 1: subgroupExclusiveAdd inside each subgroup. Level 2: subgroup 0 scans the subgroup
// sums in steps of `subgroup_size` (so any number of subgroups). The rank is then the
// subgroup's offset plus the lane's exclusive sum. Vulkan, D3D12 and Metal do not promise that
// subgroup `s` holds exactly `lid`s `s * size .. (s + 1) * size`; every invocation checks it,
// and if any does not hold the whole workgroup takes the workgroup-memory scan instead.
fn scan_inclusive(ids: Ids, v: u32) -> vec2<u32> {
    let size = ids.sg_size;
    let sg = ids.lid / size;
    let excl = subgroupExclusiveAdd(v);
    let sum = subgroupAdd(v);
    let first = subgroupBroadcastFirst(ids.lane);
    // Both subgroup operations run on every lane (no short-circuit around them).
    let first_sg = subgroupBroadcastFirst(sg);
    if (ids.lid % size != ids.lane || first_sg != sg) {
        atomicStore(&sg_bad, 1u);
    }
    if (ids.lane == first) {
        sg_sums[sg] = sum;
    }
    workgroupBarrier();
    let bad = atomicLoad(&sg_bad);
    // With the checked layout, subgroup 0 is exactly `lid < min(size, WG)`.
    if (bad == 0u && sg == 0u) {
        let nsg = (WG + size - 1u) / size;
        var carry = 0u;
        for (var b = 0u; b < nsg; b = b + size) {
            let i = b + ids.lane;
            var s = 0u;
            if (i < nsg) {
                s = sg_sums[i];
            }
            let e = subgroupExclusiveAdd(s);
            if (i < nsg) {
                sg_sums[i] = carry + e;
            }
            carry = carry + subgroupAdd(s);
        }
        if (ids.lid == 0u) {
            sg_total = carry;
        }
    }
    if (ids.lid == 0u) {
        sg_flag = bad;
    }
    if (workgroupUniformLoad(&sg_flag) != 0u) {
        let incl = scan_hs(ids.lid, v);
        return vec2<u32>(incl, scratch[WG - 1u]);
    }
    return vec2<u32>(sg_sums[sg] + excl + v, sg_total);
}
