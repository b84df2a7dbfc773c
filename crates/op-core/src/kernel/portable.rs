//! The portable hot loops: counting and stream compaction of a contiguous run, in generic Rust
//! that the compiler vectorises (`simd.rs` compiles them once more for wider vector units).

use crate::Element;

/// Non-zeros in a contiguous run. Sums per block into `u32` lanes (a `usize` sum would make the
/// vectorised loop widen every flag to 64 bits).
#[inline(always)]
pub(super) fn count_contiguous<T: Element>(run: &[T]) -> usize {
    run.chunks(COUNT_BLOCK)
        .map(|block| block.iter().map(|x| x.is_nonzero() as u32).sum::<u32>() as usize)
        .sum()
}

/// Elements per `u32` partial count: far below 2^32, large enough to amortise the reduction.
const COUNT_BLOCK: usize = 1 << 16;

/// Stream compaction, 64 elements at a time. The zero test writes one flag byte per element
/// (branch-free; vectorised for every element width) and the flags are packed into a 64-bit mask
/// by multiplication. Then, for each byte of the mask (8 elements), eight positions from a lookup
/// table are stored unconditionally and the cursor advances by the byte's population: a fixed
/// amount of work per 8 elements at any density, with no data-dependent branch but the skip of
/// empty groups (the common case of sparse masks, and predictable at any steady density).
///
/// `out` may be shorter than the run, down to exactly the run's non-zero count (an output row
/// written in place): near its end the eight stores become one per set bit, and positions past
/// `out.len()` are counted but not written. Returns the run's non-zero count.
#[inline(always)]
pub(super) fn compact_contiguous<T: Element>(
    run: &[T],
    first_index: usize,
    out: &mut [usize],
) -> usize {
    let mut k = 0;
    let mut groups = run.chunks_exact(GROUP);
    let mut base = first_index;
    for group in &mut groups {
        k = store_positions(group_mask(group), base, k, out);
        base += GROUP;
    }
    let rest = groups.remainder();
    if !rest.is_empty() {
        k = store_positions(group_mask(rest), base, k, out);
    }
    k
}

/// Bit `i` set when `group[i]` is non-zero (`group` holds at most 64 elements): one flag byte
/// per element (a vectorised zero test), packed by [`pack_flags`].
#[inline(always)]
fn group_mask<T: Element>(group: &[T]) -> u64 {
    let mut flags = [0u8; GROUP];
    for (f, x) in flags.iter_mut().zip(group) {
        *f = x.is_nonzero() as u8;
    }
    pack_flags(&flags)
}

/// Stores `base + i` for each set bit `i` of `mask` at `out[k..]`; returns the advanced cursor.
#[inline(always)]
pub(super) fn store_positions(mask: u64, base: usize, k: usize, out: &mut [usize]) -> usize {
    if mask == 0 {
        return k;
    }
    if let Some(window) = out.get_mut(k..k + GROUP) {
        // Room for the whole group: eight unconditional stores per mask byte.
        let window: &mut [usize; GROUP] = window.try_into().expect("GROUP slots");
        let mut w = 0;
        for (byte_index, byte) in mask.to_le_bytes().into_iter().enumerate() {
            let positions = &SET_BITS[byte as usize];
            let at = base + 8 * byte_index;
            debug_assert!(w <= 8 * byte_index);
            // SAFETY: `w` is the number of set bits in the bytes before this one, at most
            // 8 * byte_index <= 56, so `w + 8 <= GROUP` slots of `window` are in bounds.
            let slots = unsafe { window.get_unchecked_mut(w..w + 8) };
            for (slot, &p) in slots.iter_mut().zip(positions) {
                *slot = at + p as usize;
            }
            w += byte.count_ones() as usize;
        }
        return k + w;
    }
    // The end of an exactly sized output: one store per set bit, none past its end.
    let mut k = k;
    for (byte_index, byte) in mask.to_le_bytes().into_iter().enumerate() {
        let ones = byte.count_ones() as usize;
        if let Some(slots) = out.get_mut(k..) {
            let at = base + 8 * byte_index;
            for (slot, &p) in slots.iter_mut().zip(&SET_BITS[byte as usize][..ones]) {
                *slot = at + p as usize;
            }
        }
        k += ones;
    }
    k
}

const GROUP: usize = 64;

/// `SET_BITS[b]` lists the positions of the set bits of `b`, ascending (unused slots are 0).
static SET_BITS: [[u8; 8]; 256] = {
    let mut table = [[0u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut bit, mut n) = (0, 0);
        while bit < 8 {
            if b & (1 << bit) != 0 {
                table[b][n] = bit as u8;
                n += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    table
};

/// Bit `i` of the result is `flags[i]` (each 0 or 1): eight flag bytes at a time are gathered
/// into one byte by a multiplication whose partial products land each byte's bit in place.
#[inline(always)]
fn pack_flags(flags: &[u8; GROUP]) -> u64 {
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let mut mask = 0u64;
    for (i, eight) in flags.chunks_exact(8).enumerate() {
        let word = u64::from_le_bytes(eight.try_into().expect("8 bytes"));
        mask |= (word.wrapping_mul(GATHER) >> 56) << (8 * i);
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_pack_into_bits_in_order() {
        let mut flags = [0u8; GROUP];
        for i in [0, 1, 7, 8, 9, 31, 32, 62, 63] {
            flags[i] = 1;
        }
        let expected = [0, 1, 7, 8, 9, 31, 32, 62, 63]
            .iter()
            .fold(0u64, |m, &i| m | 1 << i);
        assert_eq!(pack_flags(&flags), expected);
        assert_eq!(pack_flags(&[1; GROUP]), u64::MAX);
        assert_eq!(pack_flags(&[0; GROUP]), 0);
    }
}
