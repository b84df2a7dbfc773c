//! The copy of one chunk's selected slices: a branch-free stream compaction for single elements
//! and small slices (up to 32 bytes), `memcpy` of runs for larger ones.

/// Mask entries per group: one 64-byte cache line of the mask.
const GROUP: usize = 64;
/// Groups with at most this many true entries visit only those (sparse masks); denser ones take
/// the branch-free loop.
const SPARSE: usize = 8;

/// Copies the slices of `x` (each `slice_bytes` bytes) whose `mask` entry is true into `out`, in
/// order. `out` holds exactly as many slices as `mask` has true entries.
pub(super) fn gather(mask: &[bool], x: &[u8], slice_bytes: usize, out: &mut [u8]) {
    debug_assert_eq!(x.len(), mask.len() * slice_bytes);
    // Small slices too (a box's 4 or an xyz's 3 floats, a pair of doubles): a memcpy per run
    // of them costs more than the copy, and the run search reads the mask a byte at a time.
    match slice_bytes {
        1 => compact::<1>(mask, x, out),
        2 => compact::<2>(mask, x, out),
        3 => compact::<3>(mask, x, out),
        4 => compact::<4>(mask, x, out),
        6 => compact::<6>(mask, x, out),
        8 => compact::<8>(mask, x, out),
        12 => compact::<12>(mask, x, out),
        16 => compact::<16>(mask, x, out),
        20 => compact::<20>(mask, x, out),
        24 => compact::<24>(mask, x, out),
        32 => compact::<32>(mask, x, out),
        _ => copy_runs(mask, x, slice_bytes, out),
    }
}

/// Number of true entries of a group: bools are bytes 0 or 1, so eight of them summed as a
/// `u64` word keep each byte at most 8, and one multiplication adds the bytes up.
#[inline(always)]
fn population(group: &[bool]) -> usize {
    let bytes: &[u8] = bytemuck::cast_slice(group);
    let (words, tail) = bytes.as_chunks::<8>();
    let sum = words
        .iter()
        .fold(0u64, |acc, w| acc + u64::from_le_bytes(*w));
    let in_words = (sum.wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize;
    in_words + tail.iter().map(|&b| b as usize).sum::<usize>()
}

/// Stream compaction of `N`-byte elements, a group of 64 at a time. Empty groups are skipped,
/// full groups copied whole, and groups with few true entries visit only those (the common cases
/// of sparse and dense masks). Any other group stores
/// every element unconditionally at the cursor and advances the cursor by its mask entry: no
/// data-dependent branch, so any density runs at the same speed. The unconditional stores need
/// 64 free slots; the chunk's last groups, where fewer remain, take the branching loop.
fn compact<const N: usize>(mask: &[bool], x: &[u8], out: &mut [u8]) {
    let (x, _) = x.as_chunks::<N>();
    let (out, _) = out.as_chunks_mut::<N>();
    let mut k = 0;
    for (g, (m, xs)) in mask.chunks(GROUP).zip(x.chunks(GROUP)).enumerate() {
        let set = population(m);
        if set == 0 {
            continue;
        }
        if set <= SPARSE {
            prefetch_ahead(x, g);
        }
        if set == m.len() {
            out[k..k + set].copy_from_slice(xs);
        } else if set <= SPARSE {
            copy_set_entries(m, xs, &mut out[k..k + set]);
        } else if let Some(window) = out.get_mut(k..k + GROUP) {
            let window: &mut [[u8; N]; GROUP] = window.try_into().expect("GROUP slots");
            let mut j = 0;
            for (&keep, &value) in m.iter().zip(xs) {
                // j counts the kept elements before this one, so j < GROUP: the mask only
                // removes the bounds check.
                window[j & (GROUP - 1)] = value;
                j += keep as usize;
            }
        } else {
            let mut j = k;
            for (&keep, &value) in m.iter().zip(xs) {
                if keep {
                    out[j] = value;
                    j += 1;
                }
            }
        }
        k += set;
    }
    debug_assert_eq!(k, out.len());
}

/// Groups ahead whose X a sparse group asks the memory system for (x86_64 only: the one
/// architecture with a prefetch intrinsic on stable Rust).
#[cfg(target_arch = "x86_64")]
const PREFETCH_GROUPS: usize = 8;

/// Sparse masks touch X's cache lines too far apart for the hardware prefetcher, so every touch
/// waits for memory; asking for a later group's lines now overlaps those waits.
#[inline(always)]
fn prefetch_ahead<const N: usize>(x: &[[u8; N]], group: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let ahead = &x[((group + PREFETCH_GROUPS) * GROUP).min(x.len())..];
        let bytes: &[u8] = ahead[..ahead.len().min(GROUP)].as_flattened();
        for line in bytes.chunks(64) {
            // SAFETY: prefetching has no architectural effect; the pointer is inside `x`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line.as_ptr().cast()) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (x, group);
}

/// Copies the elements of a group whose mask entry is true by visiting only those entries: each
/// 8-entry word holds one bit per true entry (bools are bytes 0 or 1), found by counting
/// trailing zeros.
#[inline(always)]
fn copy_set_entries<T: Copy>(group: &[bool], xs: &[T], out: &mut [T]) {
    let bytes: &[u8] = bytemuck::cast_slice(group);
    let (words, tail) = bytes.as_chunks::<8>();
    let mut k = 0;
    for (w, word) in words.iter().enumerate() {
        let mut bits = u64::from_le_bytes(*word);
        while bits != 0 {
            out[k] = xs[8 * w + (bits.trailing_zeros() / 8) as usize];
            k += 1;
            bits &= bits - 1;
        }
    }
    let tail_start = 8 * words.len();
    for (j, &keep) in tail.iter().enumerate() {
        if keep != 0 {
            out[k] = xs[tail_start + j];
            k += 1;
        }
    }
}

/// Copies each run of consecutive selected slices with one `copy_from_slice`.
fn copy_runs(mask: &[bool], x: &[u8], slice_bytes: usize, out: &mut [u8]) {
    let mut written = 0;
    let mut i = 0;
    while i < mask.len() {
        let Some(start) = mask[i..].iter().position(|&m| m).map(|p| i + p) else {
            break;
        };
        let end = mask[start..]
            .iter()
            .position(|&m| !m)
            .map_or(mask.len(), |p| start + p);
        let bytes = (end - start) * slice_bytes;
        out[written..written + bytes].copy_from_slice(&x[start * slice_bytes..end * slice_bytes]);
        written += bytes;
        i = end;
    }
    debug_assert_eq!(written, out.len());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(mask: &[bool], x: &[u8], slice_bytes: usize) -> Vec<u8> {
        let mut y = Vec::new();
        for (i, &m) in mask.iter().enumerate() {
            if m {
                y.extend_from_slice(&x[i * slice_bytes..(i + 1) * slice_bytes]);
            }
        }
        y
    }

    #[test]
    fn every_group_kind_and_slice_size() {
        // 300 entries: sparse, mixed, empty and full groups, then a tail of 44.
        let mask: Vec<bool> = (0..300)
            .map(|i| match i / 64 {
                0 => i % 17 == 0,
                1 => i % 3 != 0,
                2 => false,
                3 => true,
                _ => i % 2 == 0,
            })
            .collect();
        for slice_bytes in [1, 2, 3, 4, 5, 6, 8, 12, 16, 20, 24, 32, 40] {
            let x: Vec<u8> = (0..300 * slice_bytes)
                .map(|b| (b * 7 % 251) as u8)
                .collect();
            let expected = naive(&mask, &x, slice_bytes);
            let mut out = vec![0xAA; expected.len()];
            gather(&mask, &x, slice_bytes, &mut out);
            assert_eq!(out, expected, "slice_bytes {slice_bytes}");
        }
    }

    #[test]
    fn population_counts_every_length() {
        for len in 0..=64 {
            let group: Vec<bool> = (0..len).map(|i| i % 3 != 1).collect();
            assert_eq!(population(&group), group.iter().filter(|&&b| b).count());
        }
        assert_eq!(population(&[true; 64]), 64);
    }
}
