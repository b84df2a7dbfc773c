// The element reads of passes 1 and 3. `fn is_nz(e: u32) -> bool` comes before it, written per
// element kind (`ElementKind::is_nz_wgsl` in kind.rs).

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
