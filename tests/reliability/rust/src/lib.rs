//! Reliability tests of `nonzero-core`; the tests live in `tests/`.
//!
//! - `huge_tensors`: bool tensors with more than 2^32 elements through op-core (int64
//!   coordinates past 2^32) and through DirectML's UINT32 path (refused, outputs untouched).
//!   `#[ignore]`d; `scripts/test` runs them explicitly with `--ignored`.
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
