//! `nonzero optimize --check` and `--capacity` (issue 36, item 6): ONNX Runtime found in the
//! project's venv before any work, the capacity's one message, and under `--capacity` the padded
//! outputs compared with the original's cut to the count, the outputs computed from a cut
//! selection named. The tests that run models need ONNX Runtime (common::ort_dylib).

mod common;

use common::{listing, model, nonzero, root, stderr, stdout};

const SHAPES: [&str; 4] = [
    "--input-shape",
    "input_0=4,5,3",
    "--input-shape",
    "input_1=4,5",
];

#[test]
fn a_capacity_that_is_not_a_positive_integer_gets_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("m.onnx"), model()).unwrap();
    for (args, shown) in [
        (vec!["--capacity", "-1"], "-1"),
        (vec!["--capacity=-1"], "-1"),
        (vec!["--capacity", "0"], "0"),
        (vec!["--capacity=0"], "0"),
        (vec!["--capacity", "2.5"], "2.5"),
        (vec!["--capacity", "three"], "three"),
    ] {
        let mut all = vec!["optimize", "--static", "m.onnx", "o.onnx"];
        all.extend(SHAPES);
        all.extend(&args);
        let out = nonzero(d, &all);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            stderr(&out),
            format!("error: --capacity must be a positive integer, got {shown}\n"),
            "{args:?}"
        );
    }
    let mut all = vec!["optimize", "--static", "m.onnx", "o.onnx"];
    all.extend(SHAPES);
    all.extend(["--capacity", "9223372036854775808"]);
    let out = nonzero(d, &all);
    assert_eq!(
        stderr(&out),
        "error: --capacity must be a positive integer of at most 9223372036854775807, got 9223372036854775808\n"
    );
    assert_eq!(listing(d), ["m.onnx"]);
}

#[test]
fn capacities_per_output_are_read_and_checked_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("m.onnx"), model()).unwrap();
    for (args, message) in [
        (
            vec!["--capacity", "3", "--capacity", "4"],
            "error: --capacity N: given twice (3 and 4); NAME=N caps one output\n".to_string(),
        ),
        (
            vec!["--capacity", "4=2", "--capacity=4=3"],
            "error: --capacity 4=N: given twice for '4'\n".to_string(),
        ),
        (
            vec!["--capacity", "4=-1"],
            "error: --capacity must be a positive integer, got -1 (for '4')\n".to_string(),
        ),
        (
            vec!["--capacity", "nope=3"],
            format!(
                "error: {}: static mode: a capacity for 'nope', but the main graph has no output named 'nope' (its outputs: '4')\n",
                "m.onnx"
            ),
        ),
    ] {
        let mut all = vec!["optimize", "--static", "m.onnx", "o.onnx"];
        all.extend(SHAPES);
        all.extend(&args);
        let out = nonzero(d, &all);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(stderr(&out), message, "{args:?}");
    }
    assert_eq!(listing(d), ["m.onnx"]);
}

/// A copy of the binary in a project of its own, whose `.venv` holds a file named as the
/// onnxruntime wheel's library: `--check` without ORT_DYLIB_PATH loads that one, before it
/// reads the model (it is not a library, so the load fails, naming it).
#[test]
fn check_looks_for_onnx_runtime_in_the_projects_venv_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let bin = project.join("target/release");
    let capi = project.join(".venv/lib/python3.11/site-packages/onnxruntime/capi");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&capi).unwrap();
    std::fs::write(project.join("Cargo.toml"), "[workspace]\n").unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_nonzero"), bin.join("nonzero")).unwrap();
    let fake = capi.join("libonnxruntime.so.1.31.1");
    std::fs::write(&fake, b"not a library").unwrap();
    std::fs::write(capi.join("libonnxruntime_providers_shared.so"), b"").unwrap();
    std::fs::write(dir.path().join("m.onnx"), model()).unwrap();
    let out = std::process::Command::new(bin.join("nonzero"))
        .args(["optimize", "--static", "--check", "m.onnx", "o.onnx"])
        .args(SHAPES)
        .env_remove("ORT_DYLIB_PATH")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    let want = format!(
        "error: --check needs ONNX Runtime: loading {}: ",
        fake.canonicalize().unwrap().display()
    );
    assert!(stderr(&out).starts_with(&want), "{}", stderr(&out));
    assert_eq!(listing(dir.path()), ["m.onnx", "project"]);
}

/// `nonzero optimize --static --check ARGS IN OUT` with ONNX Runtime; `None` to skip.
fn static_check(input: &std::path::Path, args: &[&str]) -> Option<std::process::Output> {
    let ort = common::ort_dylib()?;
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec!["optimize", "--static", "--check", "--ort-dylib"];
    all.push(ort.to_str().unwrap());
    all.extend(args);
    let input = input.to_str().unwrap();
    all.extend([input, "o.onnx"]);
    let out = nonzero(dir.path(), &all);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    Some(out)
}

fn check_lines(out: &std::process::Output) -> Vec<String> {
    stdout(out)
        .lines()
        .filter(|l| l.starts_with("check: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn under_a_capacity_padded_outputs_are_compared_cut_to_their_count() {
    let input = root().join("models/exported/x_mask_ts17.onnx");
    // input_0 [4, 5, 3] masked by input_1 [4, 5]: about 10 of 20 selected, cut to 3.
    let mut args = SHAPES.to_vec();
    args.extend(["--capacity", "3"]);
    let Some(out) = static_check(&input, &args) else {
        return;
    };
    assert_eq!(
        check_lines(&out),
        ["check: 3 runs at capacity 3: each output compared is exactly equal to the original's on the built-in kernels (a padded one cut to its count, and the original's to the same count, 3 at most)"]
    );
    let out = static_check(&input, &SHAPES).unwrap();
    assert_eq!(
        check_lines(&out),
        ["check: 3 runs, every output, cut to its count, exactly equal to the original's on the built-in kernels"]
    );
    // The same capacity given to the output by name.
    let mut args = SHAPES.to_vec();
    args.extend(["--capacity", "4=3"]);
    let out = static_check(&input, &args).unwrap();
    assert_eq!(
        check_lines(&out),
        ["check: 3 runs at capacity 3 for '4': each output compared is exactly equal to the original's on the built-in kernels (a padded one cut to its count, and the original's to the same count, 3 for '4' at most)"]
    );
}

#[test]
fn under_a_capacity_outputs_computed_from_a_cut_selection_are_named() {
    // (x[m] > 0).all(): one bool from the whole selection, which the capacity 2 cuts.
    let input = root().join("models/real/torch_patterns/masked_all_ts17.onnx");
    let shapes = ["--input-shape", "x=12,3", "--input-shape", "m=12"];
    let mut args = shapes.to_vec();
    args.extend(["--capacity", "2"]);
    let Some(out) = static_check(&input, &args) else {
        return;
    };
    assert_eq!(
        check_lines(&out),
        [
            "check: 3 runs at capacity 2: each output compared is exactly equal to the original's on the built-in kernels (a padded one cut to its count, and the original's to the same count, 2 at most)",
            "check: not compared, computed from a selection that the capacity cut: 'y'",
        ]
    );
    // A capacity no selection reaches cuts nothing: everything is compared.
    let mut args = shapes.to_vec();
    args.extend(["--capacity", "12"]);
    let out = static_check(&input, &args).unwrap();
    assert_eq!(
        check_lines(&out),
        ["check: 3 runs at capacity 12: each output compared is exactly equal to the original's on the built-in kernels (a padded one cut to its count, and the original's to the same count, 12 at most)"]
    );
}

/// A check that fails after the model was rewritten (the custom-op library is not one) leaves
/// no output and no report, and the old report as it was.
#[test]
fn a_check_that_fails_writes_nothing() {
    let Some(ort) = common::ort_dylib() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("m.onnx"), model()).unwrap();
    std::fs::write(d.join("r.json"), b"old report").unwrap();
    let out = nonzero(
        d,
        &[
            "optimize",
            "--check",
            "--ort-dylib",
            ort.to_str().unwrap(),
            "--library",
            "r.json",
            "m.onnx",
            "o.onnx",
            "--report-json",
            "r.json",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("1 NonZero: 1 rewritten, 0 left"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out)
            .starts_with("error: rewritten model, library: registering custom-op library r.json: "),
        "{}",
        stderr(&out)
    );
    assert_eq!(listing(d), ["m.onnx", "r.json"]);
    assert_eq!(std::fs::read(d.join("r.json")).unwrap(), b"old report");
    assert_eq!(std::fs::read(d.join("m.onnx")).unwrap(), model());
}
