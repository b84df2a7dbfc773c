//! `nonzero run --load-unload CYCLES`: the load-unload loop of issue 39 in this host, so that it
//! also runs where Python does not (the Windows DLL under Wine, the ASan build under
//! LeakSanitizer). Each cycle runs every model once, each in a session of its own whose session
//! options register the library by path; freeing them lets ONNX Runtime unload the library (which
//! pins itself instead: crates/onnx-adapter/src/pin.rs). The host reports its resident memory
//! after cycle 100 and after the last, and whether the library was loaded before the first cycle
//! and after every one, asking the loader without loading it (`dlopen(RTLD_NOLOAD)` then
//! `dlclose`; `GetModuleHandleW`, which takes no reference).

use anyhow::{bail, Result};
use nonzero_ort_runner::{self as runner, RunOptions};
use std::path::{Path, PathBuf};

/// Resident memory is sampled after this cycle (or the last, if there are fewer) and the last.
const RSS_AT: usize = 100;
/// Failed runs printed (every one is counted).
const SHOWN_FAILURES: usize = 5;

/// Runs `targets` `cycles` times and prints one summary line; fails if a run failed.
pub fn run(targets: &[PathBuf], opts: &RunOptions, cycles: usize) -> Result<bool> {
    let Some(library) = opts.library.as_deref() else {
        bail!("--load-unload needs the library (not --builtin)");
    };
    if cycles == 0 || targets.is_empty() {
        bail!("--load-unload needs at least one cycle and one model");
    }
    let loaded_before = is_loaded(library);
    let (mut matched, mut failed, mut unloaded_after) = (0usize, 0usize, vec![]);
    let (mut rss_at, mut rss_end) = (None, None);
    for cycle in 1..=cycles {
        for target in targets {
            let report = runner::run_path(target, opts);
            if report.status.is_match() {
                matched += 1;
            } else {
                failed += 1;
                if failed <= SHOWN_FAILURES {
                    println!("cycle {cycle}: {}: {:?}", report.name, report.status);
                }
            }
        }
        if !is_loaded(library) {
            unloaded_after.push(cycle);
        }
        if cycle == RSS_AT.min(cycles) {
            rss_at = resident_kib();
        }
        if cycle == cycles {
            rss_end = resident_kib();
        }
    }
    let rss = match (rss_at, rss_end) {
        (Some(a), Some(b)) => format!(
            "resident {a} KiB after cycle {}, {b} KiB after cycle {cycles} ({:+} KiB)",
            RSS_AT.min(cycles),
            b as i64 - a as i64
        ),
        _ => "resident memory unknown on this platform".into(),
    };
    let after = match unloaded_after.len() {
        0 => "yes".to_string(),
        n => format!(
            "no, unloaded after {n} cycles (the first: {:?})",
            &unloaded_after[..n.min(5)]
        ),
    };
    println!(
        "load-unload: {cycles} cycles x {} models: {matched} matched, {failed} failed; {rss}; \
         library loaded before the first cycle: {}; after every cycle: {after}",
        targets.len(),
        if loaded_before { "yes" } else { "no" },
    );
    Ok(failed == 0)
}

/// VmRSS (Linux) or the working set (Windows) of this process, in KiB.
#[cfg(target_os = "linux")]
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(windows)]
fn resident_kib() -> Option<u64> {
    // PROCESS_MEMORY_COUNTERS (psapi.h).
    #[repr(C)]
    #[derive(Default)]
    struct Counters {
        cb: u32,
        page_fault_count: u32,
        peak_working_set_size: usize,
        working_set_size: usize,
        rest: [usize; 6],
    }
    #[link(name = "kernel32")]
    extern "system" {
        fn GetCurrentProcess() -> *mut std::ffi::c_void;
        fn K32GetProcessMemoryInfo(
            process: *mut std::ffi::c_void,
            counters: *mut Counters,
            cb: u32,
        ) -> i32;
    }
    let mut c = Counters {
        cb: std::mem::size_of::<Counters>() as u32,
        ..Default::default()
    };
    // SAFETY: the pseudo-handle of this process; `c` is a valid PROCESS_MEMORY_COUNTERS of size cb.
    let ok = unsafe { K32GetProcessMemoryInfo(GetCurrentProcess(), &mut c, c.cb) };
    (ok != 0).then_some(c.working_set_size as u64 / 1024)
}

#[cfg(not(any(target_os = "linux", windows)))]
fn resident_kib() -> Option<u64> {
    None
}

/// Whether the library at `path` is loaded in this process (without loading it).
#[cfg(unix)]
fn is_loaded(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a NUL-terminated path; RTLD_NOLOAD finds a loaded object without loading it, and
    // the reference it took is given back at once.
    unsafe {
        let handle = libc::dlopen(c.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if handle.is_null() {
            return false;
        }
        libc::dlclose(handle);
    }
    true
}

#[cfg(windows)]
fn is_loaded(path: &Path) -> bool {
    use std::os::windows::ffi::OsStrExt;
    #[link(name = "kernel32")]
    extern "system" {
        fn GetModuleHandleW(name: *const u16) -> *mut std::ffi::c_void;
    }
    // The file name: a loaded module matches by its base name, however the path was spelled.
    let Some(name) = path.file_name() else {
        return false;
    };
    let wide: Vec<u16> = name.encode_wide().chain(Some(0)).collect();
    // SAFETY: a NUL-terminated UTF-16 name; GetModuleHandleW takes no reference.
    !unsafe { GetModuleHandleW(wide.as_ptr()) }.is_null()
}

#[cfg(not(any(unix, windows)))]
fn is_loaded(_path: &Path) -> bool {
    false
}
