//! Inputs shared by the benchmarks: deterministic masks of a given density.

/// `n` elements, each non-zero with probability `density`, from a fixed-seed xorshift stream.
pub fn mask(n: usize, density: f64) -> Vec<bool> {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let threshold = (density * u32::MAX as f64) as u64;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) < threshold
        })
        .collect()
}
