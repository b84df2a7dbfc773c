//! Reliability tests of `nonzero-core`; the tests live in `tests/`.
//!
//! - `huge_tensors`: tensors with more than 2^32 elements through op-core: NonZero and ArgWhere
//!   (exact int64 coordinates past 2^32), BooleanMask (exact values and rows past 2^32), and the
//!   uint32 paths, DirectML's and NonZeroCoordinates (refused, outputs untouched).
//!   `#[ignore]`d; `scripts/test` runs them explicitly with `--ignored`.
//! - `element_count_limits`: the same limits from shapes alone (no big allocation), not ignored.
//! - `fuzz_regressions`: inputs the fuzzers found, as plain tests.

/// Resident set size of this process in KiB (`VmRSS` of `/proc/self/status`).
pub fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Peak resident set size of this process in KiB (`VmHWM`).
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// A zeroed buffer of `n` elements whose every page has been written, so a kernel reads real
/// resident memory rather than the kernel's shared zero page (which is what reading a fresh
/// `calloc` gives, and which would make a test faster than real data).
pub fn touched_zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    let per_page = (4096 / std::mem::size_of::<T>().max(1)).max(1);
    for page in v.chunks_mut(per_page) {
        // SAFETY: a valid, aligned pointer to an initialised element of the buffer; volatile so
        // the store is kept.
        unsafe { std::ptr::write_volatile(page.as_mut_ptr(), T::default()) };
    }
    v
}

/// Prints the RSS and asserts the peak stayed under `limit_gib` GiB.
pub fn check_peak(limit_gib: u64) {
    let peak = peak_rss_kib();
    eprintln!("RSS now {} MiB, peak {} MiB", rss_kib() / 1024, peak / 1024);
    assert!(
        peak < limit_gib * 1024 * 1024,
        "peak RSS {peak} KiB is over {limit_gib} GiB"
    );
}
