//! `nonzero optimize IN OUT [--check] [-v] [--report-json FILE] [--nonzero-domain] [--provider P]`: rewrite exported NonZero chains (crates/optimize).

use anyhow::{anyhow, bail, Context, Result};
use nonzero_ort_runner::{self as runner, Status};
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::{Bytes, Message};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Settings of one `optimize` run.
#[derive(Debug, Clone)]
pub struct OptimizeArgs {
    pub input: PathBuf,
    pub output: PathBuf,
    pub check: bool,
    pub library: Option<PathBuf>,
    pub ort_dylib: Option<PathBuf>,
    pub seeds: u64,
    pub verbose: bool,
    pub report_json: Option<PathBuf>,
    pub options: nonzero_optimize::Options,
}

/// Rewrites `input` into `output`; with `check`, runs both first and writes nothing unless
/// every output is exactly equal.
pub fn optimize_command(args: &OptimizeArgs) -> Result<()> {
    let original = Bytes::from(
        std::fs::read(&args.input).with_context(|| format!("reading {}", args.input.display()))?,
    );
    // The buffer is shared with the decoded model's tensors (see optimize_bytes), not copied.
    let (rewritten, report) = nonzero_optimize::optimize_bytes(original.clone(), &args.options)
        .map_err(|e| anyhow!("{}: {e}", args.input.display()))?;
    for rewrite in &report.rewrites {
        println!("{}", rewrite.line);
    }
    if args.verbose {
        for line in report.left_lines() {
            println!("{line}");
        }
    }
    println!("{}", report.summary());
    if let Some(path) = &args.report_json {
        write_atomically(path, |f| f.write_all(report.to_json().as_bytes()))?;
        println!("wrote the report to {}", path.display());
    }
    if args.check {
        let bytes = rewritten.to_bytes();
        match &report.static_mode {
            Some(s) => check_static(&original, &bytes, &s.count_outputs, args)?,
            None => check(&original, &bytes, args)?,
        }
    }
    // Streamed: the model is never serialized into memory as a whole.
    write_atomically(&args.output, |f| rewritten.write_to(f))?;
    println!("wrote {}", args.output.display());
    Ok(())
}

/// Writes to a temporary file next to `path` with `write` (through a buffer), then renames it
/// over `path`, so a failed write leaves nothing behind.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .ok_or_else(|| anyhow!("{}: not a file path", path.display()))?;
    let temp = dir.join(format!(
        ".{}.{}.tmp",
        file_name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> Result<()> {
        let f = File::create(&temp)
            .with_context(|| format!("cannot write the output {}", path.display()))?;
        let mut f = BufWriter::with_capacity(1 << 20, f);
        write(&mut f)
            .and_then(|_| f.into_inner().map_err(|e| e.into_error()))
            .and_then(|f| f.sync_all())
            .with_context(|| format!("writing {}", temp.display()))?;
        std::fs::rename(&temp, path)
            .with_context(|| format!("cannot write the output {}", path.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// `--static --check`: the original and the static model both on ONNX Runtime's built-in
/// kernels (the static one has standard ops only), on seeded random inputs of the static
/// model's fixed shapes; each padded output cut to its `<name>_count` must equal the original's
/// exactly. (Float sums and means over a selection differ by rounding: --check names them.)
fn check_static(
    original: &[u8],
    rewritten: &[u8],
    count_outputs: &[(String, String, usize)],
    args: &OptimizeArgs,
) -> Result<()> {
    runner::init_ort(args.ort_dylib.as_deref())?;
    let fixed = ModelProto::decode(rewritten)?;
    let mut builtin = runner::session(original, None, 0).context("original model, built-in")?;
    let mut ours = runner::session(rewritten, None, 0).context("static model, built-in")?;
    for seed in 0..args.seeds {
        let inputs = runner::random_inputs(&fixed, 1, 0x5eed + seed)?;
        let want = runner::run(&mut builtin, &inputs).context("running the original")?;
        let got = runner::run(&mut ours, &inputs).context("running the static model")?;
        let trimmed = trim(got, count_outputs)?;
        if let Status::Mismatch(m) = runner::compare(&trimmed, &want) {
            bail!("check failed (seed {seed}): {m}");
        }
    }
    println!(
        "check: {} runs, every output, cut to its count, exactly equal to the original's on the built-in kernels",
        args.seeds
    );
    Ok(())
}

/// The static model's outputs with each padded one cut to its count and the counts dropped.
fn trim(
    outputs: Vec<(String, nonzero_harness::Tensor)>,
    count_outputs: &[(String, String, usize)],
) -> Result<Vec<(String, nonzero_harness::Tensor)>> {
    let count_of = |name: &str| -> Result<usize> {
        let (_, t) = outputs
            .iter()
            .find(|(n, _)| n == name)
            .ok_or_else(|| anyhow!("the static model has no output {name}"))?;
        let value = t.data.values::<i64>().and_then(|v| v.first().copied());
        value
            .and_then(|v| usize::try_from(v).ok())
            .ok_or_else(|| anyhow!("{name} is not a non-negative int64 scalar"))
    };
    let mut trimmed = vec![];
    for (name, tensor) in &outputs {
        if count_outputs.iter().any(|(_, c, _)| c == name) {
            continue;
        }
        let tensor = match count_outputs.iter().find(|(o, _, _)| o == name) {
            Some((_, count, axis)) => tensor
                .prefix_along(*axis, count_of(count)?)
                .ok_or_else(|| anyhow!("{name}: its count exceeds its padded axis {axis}"))?,
            None => tensor.clone(),
        };
        trimmed.push((name.clone(), tensor));
    }
    Ok(trimmed)
}

/// Runs the original model on ONNX Runtime's built-in kernels and the rewritten one with the
/// library, on seeded random inputs (two sizes for symbolic dimensions), and compares exactly.
fn check(original: &[u8], rewritten: &[u8], args: &OptimizeArgs) -> Result<()> {
    let library = args
        .library
        .clone()
        .or_else(runner::default_library)
        .ok_or_else(|| {
            anyhow!("--check needs the custom-op library: pass --library or set NONZERO_ORT_LIB")
        })?;
    runner::init_ort(args.ort_dylib.as_deref())?;
    let model = ModelProto::decode(original)?;
    let mut builtin = runner::session(original, None, 0).context("original model, built-in")?;
    let mut ours =
        runner::session(rewritten, Some(&library), 0).context("rewritten model, library")?;
    let mut runs = 0;
    for seed in 0..args.seeds {
        for symbolic_size in [5, 64] {
            let inputs = runner::random_inputs(&model, symbolic_size, 0x5eed + seed)?;
            let want = runner::run(&mut builtin, &inputs).context("running the original")?;
            let got = runner::run(&mut ours, &inputs).context("running the rewritten model")?;
            if want.len() != got.len() {
                bail!(
                    "check failed: {} outputs, the original has {}",
                    got.len(),
                    want.len()
                );
            }
            if let Status::Mismatch(m) = runner::compare(&got, &want) {
                bail!("check failed (seed {seed}, symbolic size {symbolic_size}): {m}");
            }
            runs += 1;
        }
    }
    println!(
        "check: {runs} runs, every output exactly equal to the original's on the built-in kernels"
    );
    Ok(())
}
