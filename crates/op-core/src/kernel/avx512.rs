//! The compaction written for AVX-512, where two instructions replace the portable code's
//! inner loops: a test into a mask register gives a vector's bits, and a compress packs the
//! positions of eight elements' set bits into one vector.

use super::portable;
use crate::Element;
use std::arch::x86_64::*;

/// [`portable::compact_contiguous`] on AVX-512, with the same contract. The run is read 64
/// bytes at a time: a test into a mask register gives the vector's bits, then per byte of
/// them one compress packs the positions of its set bits and one store writes them. With
/// room for the vector's every element the stores are whole vectors; at the end of an
/// exactly sized output they are masked to the byte's set bits; a short output (fewer slots
/// than set bits) takes the portable code, which stops at its end, as does the tail of
/// fewer than 64 bytes and every complex type (whose two parts are tested together).
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,bmi1,bmi2,popcnt")]
pub(super) fn compact<T: Element>(run: &[T], first_index: usize, out: &mut [usize]) -> usize {
    let size = size_of::<T>();
    let (Some(magnitude), true) = (
        T::DTYPE.magnitude_mask(),
        T::DTYPE.component_size() == Some(size),
    ) else {
        return portable::compact_contiguous(run, first_index, out);
    };
    // Elements per vector.
    let lanes = 64 / size;
    let bytes: &[u8] = bytemuck::cast_slice(run);
    let mut vectors = bytes.chunks_exact(64);
    let slots = out.as_mut_ptr();
    let mut k = 0;
    // The positions of the current mask byte's eight elements.
    let mut positions = _mm512_add_epi64(
        _mm512_set1_epi64(first_index as i64),
        _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0),
    );
    let step = _mm512_set1_epi64(8);
    for (v, vector) in (&mut vectors).enumerate() {
        // SAFETY: `vector` is 64 readable bytes; the load has no alignment requirement.
        let x = unsafe { _mm512_loadu_si512(vector.as_ptr().cast()) };
        // Bit i: element i of the vector is non-zero (`lanes` bits).
        let mask: u64 = match size {
            1 => _mm512_test_epi8_mask(x, _mm512_set1_epi8(magnitude as i8)),
            2 => _mm512_test_epi16_mask(x, _mm512_set1_epi16(magnitude as i16)).into(),
            4 => _mm512_test_epi32_mask(x, _mm512_set1_epi32(magnitude as i32)).into(),
            _ => _mm512_test_epi64_mask(x, _mm512_set1_epi64(magnitude as i64)).into(),
        };
        let ones = mask.count_ones() as usize;
        let free = out.len().saturating_sub(k);
        // The mask's bytes, low first, taken by shifts: a byte array would send the mask
        // through the stack, and reading it back (a wider load than the store) stalls on a
        // failed store forward whose cost depends on where the stack sits.
        let mask_bytes = (0..lanes / 8).map(|i| (mask >> (8 * i)) as u8);
        if ones == 0 {
            // Nothing to store (and past a short output's end `slots + k` would not even be
            // a pointer into `out`).
            positions = _mm512_add_epi64(positions, _mm512_set1_epi64(lanes as i64));
        } else if free >= lanes {
            let start = k;
            for byte in mask_bytes {
                let packed = _mm512_maskz_compress_epi64(byte, positions);
                debug_assert!(k - start + 8 <= lanes);
                // SAFETY: `k - start` counts the set bits of this vector's bytes before
                // this one, at most `lanes - 8`, and `free >= lanes` slots follow `start`:
                // the eight lanes at `k` are inside `out`.
                unsafe { _mm512_storeu_si512(slots.add(k).cast(), packed) };
                // A `usize` sum: bounded by 64, it was narrowed to a byte register, with a
                // partial-register merge on every store's address.
                k += byte.count_ones() as usize;
                positions = _mm512_add_epi64(positions, step);
            }
        } else if free >= ones {
            for byte in mask_bytes {
                let packed = _mm512_maskz_compress_epi64(byte, positions);
                let set = byte.count_ones();
                let written = _bzhi_u32(0xFF, set) as u8;
                // SAFETY: the store writes lanes `k..k + set` only (masked-off lanes are
                // neither written nor faulted on); the vector's set bits fit the free
                // slots, so `k + set <= out.len()`, and `k < out.len()` as `ones > 0`.
                unsafe { _mm512_mask_storeu_epi64(slots.add(k).cast(), written, packed) };
                k += set as usize;
                positions = _mm512_add_epi64(positions, step);
            }
        } else {
            k = store_short(mask, first_index + v * lanes, k, out);
            positions = _mm512_add_epi64(positions, _mm512_set1_epi64(lanes as i64));
        }
    }
    let done = (bytes.len() - vectors.remainder().len()) / size;
    if done < run.len() {
        let rest = out.get_mut(k..).unwrap_or_default();
        k += portable::compact_contiguous(&run[done..], first_index + done, rest);
    }
    k
}

/// The portable stores, out of line: only an output shorter than the run's non-zeros ends
/// here.
#[cold]
#[inline(never)]
fn store_short(mask: u64, base: usize, k: usize, out: &mut [usize]) -> usize {
    portable::store_positions(mask, base, k, out)
}
