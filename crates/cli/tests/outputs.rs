//! `nonzero optimize` destroys nothing the user owns (issue 36, item 1): real files in a
//! temporary directory, real links and a real FIFO. Each refusal is checked for its exact
//! message, exit code 1, the input byte for byte, and a directory holding just what it held.

#![cfg(unix)]

mod common;

use common::{command, listing, model, nonzero, stderr, stdout};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const SAME: &str = "nonzero optimize never overwrites its input";

/// A directory with the model `m.onnx`, the link `link.onnx -> m.onnx` and the hard link
/// `hard.onnx`.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("m.onnx"), model()).unwrap();
    std::os::unix::fs::symlink("m.onnx", dir.path().join("link.onnx")).unwrap();
    std::fs::hard_link(dir.path().join("m.onnx"), dir.path().join("hard.onnx")).unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    dir
}

/// Runs `nonzero optimize ARGS` in `dir`, expects exit code 1 with exactly `error: MESSAGE`,
/// nothing on stdout (nothing was read), and the directory and the model unchanged.
fn refused(dir: &Path, args: &[&str], message: &str) {
    let before = listing(dir);
    let mut all = vec!["optimize"];
    all.extend(args);
    let out = nonzero(dir, &all);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
    assert_eq!(stderr(&out), format!("error: {message}\n"), "{args:?}");
    assert_eq!(stdout(&out), "", "{args:?}");
    assert_eq!(listing(dir), before, "{args:?}");
    assert_eq!(
        std::fs::read(dir.join("m.onnx")).unwrap(),
        model(),
        "{args:?}"
    );
}

#[test]
fn an_output_that_is_the_input_is_refused_however_it_is_named() {
    let dir = setup();
    let d = dir.path();
    let absolute = d.join("m.onnx");
    let absolute = absolute.to_str().unwrap();
    let through_sub = "sub/../m.onnx";
    for output in [
        "m.onnx",
        "./m.onnx",
        absolute,
        through_sub,
        "link.onnx",
        "hard.onnx",
    ] {
        refused(
            d,
            &["m.onnx", output],
            &format!("the output '{output}' is the input 'm.onnx' (the same file): {SAME}; name another output file"),
        );
    }
    // The input named through the link, the output by its own name.
    refused(
        d,
        &["link.onnx", "m.onnx", "--report-json", "r.json"],
        &format!("the output 'm.onnx' is the input 'link.onnx' (the same file): {SAME}; name another output file"),
    );
}

#[test]
fn a_report_that_is_the_input_or_the_output_is_refused() {
    let dir = setup();
    let d = dir.path();
    for report in ["m.onnx", "./link.onnx", "hard.onnx"] {
        refused(
            d,
            &["m.onnx", "o.onnx", "--report-json", report],
            &format!("the report '{report}' (--report-json) is the input 'm.onnx' (the same file): {SAME}; name another report file"),
        );
    }
    // Neither exists yet: the same directory and name.
    for (output, report) in [("o.onnx", "./o.onnx"), ("sub/o.onnx", "sub/../sub/o.onnx")] {
        refused(
            d,
            &["m.onnx", output, "--report-json", report],
            &format!("the report '{report}' (--report-json) is the output '{output}' (the same file): the model and the report need two files"),
        );
    }
    // Both exist, one a link to the other.
    std::fs::write(d.join("old.onnx"), b"old").unwrap();
    std::os::unix::fs::symlink("old.onnx", d.join("old_link.json")).unwrap();
    refused(
        d,
        &["m.onnx", "old.onnx", "--report-json", "old_link.json"],
        "the report 'old_link.json' (--report-json) is the output 'old.onnx' (the same file): the model and the report need two files",
    );
    assert_eq!(std::fs::read(d.join("old.onnx")).unwrap(), b"old");
}

#[test]
fn an_output_that_is_not_a_regular_file_is_refused() {
    let dir = setup();
    let d = dir.path();
    let fifo = d.join("fifo");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates the node.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
    let why = "nonzero optimize writes a new file and renames it into place, which would replace it; name a regular file or a new path";
    refused(
        d,
        &["m.onnx", "fifo"],
        &format!("the output 'fifo' exists and is a FIFO (named pipe), not a regular file: {why}"),
    );
    refused(
        d,
        &["m.onnx", "o.onnx", "--report-json", "fifo"],
        &format!("the report 'fifo' exists and is a FIFO (named pipe), not a regular file: {why}"),
    );
    refused(
        d,
        &["m.onnx", "sub"],
        &format!("the output 'sub' exists and is a directory, not a regular file: {why}"),
    );
    refused(
        d,
        &["m.onnx", "/dev/null"],
        &format!(
            "the output '/dev/null' exists and is a character device, not a regular file: {why}"
        ),
    );
    refused(
        d,
        &["m.onnx", "nodir/o.onnx"],
        "cannot write the output 'nodir/o.onnx': no directory 'nodir': No such file or directory (os error 2)",
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn outputs_keep_the_permissions_and_links_they_replace() {
    let dir = setup();
    let d = dir.path();
    // A new output gets what any new file gets here (the umask's permissions).
    std::fs::File::create(d.join("probe")).unwrap();
    let fresh = std::fs::metadata(d.join("probe"))
        .unwrap()
        .permissions()
        .mode();
    let out = nonzero(
        d,
        &[
            "optimize",
            "m.onnx",
            "new.onnx",
            "--report-json",
            "new.json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for name in ["new.onnx", "new.json"] {
        let mode = std::fs::metadata(d.join(name))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, fresh & 0o7777, "{name}");
    }
    // An existing output keeps its mode; a link stays a link, and its target is replaced.
    std::fs::write(d.join("old.onnx"), b"old").unwrap();
    std::fs::set_permissions(d.join("old.onnx"), std::fs::Permissions::from_mode(0o640)).unwrap();
    std::fs::write(d.join("target.json"), b"old").unwrap();
    std::fs::set_permissions(
        d.join("target.json"),
        std::fs::Permissions::from_mode(0o604),
    )
    .unwrap();
    std::os::unix::fs::symlink("target.json", d.join("report_link.json")).unwrap();
    let out = nonzero(
        d,
        &[
            "optimize",
            "m.onnx",
            "old.onnx",
            "--report-json",
            "report_link.json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let mode = |n: &str| std::fs::metadata(d.join(n)).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode("old.onnx"), 0o640);
    assert_eq!(mode("target.json"), 0o604);
    assert!(std::fs::symlink_metadata(d.join("report_link.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(
        std::fs::read(d.join("old.onnx")).unwrap(),
        std::fs::read(d.join("new.onnx")).unwrap()
    );
    assert_eq!(
        std::fs::read(d.join("target.json")).unwrap(),
        std::fs::read(d.join("new.json")).unwrap()
    );
    assert_eq!(
        listing(d),
        [
            "hard.onnx",
            "link.onnx",
            "m.onnx",
            "new.json",
            "new.onnx",
            "old.onnx",
            "probe",
            "report_link.json",
            "sub",
            "target.json"
        ]
    );
}

#[test]
fn a_failed_run_writes_nothing() {
    let dir = setup();
    let d = dir.path();
    std::fs::write(d.join("old.json"), b"old report").unwrap();
    // Not a model: nothing is written, the old report stays.
    std::fs::write(d.join("bad.onnx"), b"not a model").unwrap();
    let before = listing(d);
    let out = nonzero(
        d,
        &[
            "optimize",
            "bad.onnx",
            "o.onnx",
            "--report-json",
            "old.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(listing(d), before);
    assert_eq!(std::fs::read(d.join("old.json")).unwrap(), b"old report");
    // --check without ONNX Runtime fails before any work: no report printed, nothing written.
    let missing = d.join("missing.so");
    let out = nonzero(
        d,
        &[
            "optimize",
            "--check",
            "--ort-dylib",
            missing.to_str().unwrap(),
            "--library",
            "m.onnx",
        ]
        .into_iter()
        .chain(["m.onnx", "o.onnx", "--report-json", "old.json"])
        .collect::<Vec<_>>(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    let err = stderr(&out);
    let want = format!(
        "error: --check needs ONNX Runtime: loading {}: ",
        missing.display()
    );
    assert!(err.starts_with(&want), "{err}");
    assert_eq!(listing(d), before);
    assert_eq!(std::fs::read(d.join("old.json")).unwrap(), b"old report");
}

/// SIGINT and SIGTERM while the temporary outputs exist: both are removed, nothing takes the
/// place of the old report, and the process ends by the signal (the shell sees 130 or 143).
#[test]
fn a_signal_leaves_no_temporary_file() {
    use std::os::unix::process::ExitStatusExt;
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let dir = setup();
        let d = dir.path();
        std::fs::write(d.join("old.json"), b"old report").unwrap();
        let before = listing(d);
        let mut child = command(
            d,
            &["optimize", "m.onnx", "o.onnx", "--report-json", "old.json"],
        )
        .env("NONZERO_TEST_PAUSE_BEFORE_RENAME_MS", "20000")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
        let start = std::time::Instant::now();
        while listing(d).iter().filter(|n| n.ends_with(".tmp")).count() < 2 {
            assert!(
                start.elapsed().as_secs() < 15,
                "no temporary files: {:?}",
                listing(d)
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let temps: Vec<String> = listing(d)
            .into_iter()
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(
            temps[0].starts_with(".o.onnx.") || temps[0].starts_with(".old.json."),
            "{temps:?}"
        );
        // SAFETY: signals the child this test started.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(signal), "{status:?}");
        assert_eq!(listing(d), before);
        assert_eq!(std::fs::read(d.join("old.json")).unwrap(), b"old report");
        assert_eq!(std::fs::read(d.join("m.onnx")).unwrap(), model());
    }
}
