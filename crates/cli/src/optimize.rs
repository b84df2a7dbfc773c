//! `nonzero optimize IN OUT [--check] [-v] [--report-json FILE] [--nonzero-domain] [--provider P]`: rewrite exported NonZero chains (crates/optimize).

use crate::{check, outputs};
use anyhow::{anyhow, Context, Result};
use nonzero_proto::Bytes;
use std::io::Write;
use std::path::PathBuf;

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

/// Rewrites `input` into `output`. Refuses paths that would overwrite the input or the other
/// output before reading anything; with `check`, finds ONNX Runtime first and runs both models;
/// writes nothing unless everything succeeded (crate::outputs).
pub fn optimize_command(args: &OptimizeArgs) -> Result<()> {
    outputs::refuse_clobbering(&args.input, &args.output, args.report_json.as_deref())?;
    outputs::remove_temporaries_on_signals()?;
    let prepared = match args.check {
        true => Some(check::prepare(
            args.ort_dylib.as_deref(),
            args.library.as_deref(),
            args.options.static_shapes,
            args.seeds,
        )?),
        false => None,
    };
    let original = Bytes::from(
        std::fs::read(&args.input)
            .with_context(|| format!("reading '{}'", args.input.display()))?,
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
    if let Some(prepared) = &prepared {
        let bytes = rewritten.to_bytes();
        match &report.static_mode {
            Some(s) => check::check_static(prepared, &original, &bytes, s)?,
            None => check::check(prepared, &original, &bytes)?,
        }
    }
    // Streamed: the model is never serialized into memory as a whole.
    let model = outputs::stage(&args.output, |f| rewritten.write_to(f))?;
    let report_file = match &args.report_json {
        Some(path) => Some((
            path,
            outputs::stage(path, |f| f.write_all(report.to_json().as_bytes()))?,
        )),
        None => None,
    };
    // For the tests of SIGINT and SIGTERM (crates/cli/tests/outputs.rs): a pause while the
    // temporary files exist.
    if let Some(ms) = std::env::var("NONZERO_TEST_PAUSE_BEFORE_RENAME_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    // Everything succeeded: only now does anything take the place of a file.
    if let Some((path, staged)) = report_file {
        staged.commit()?;
        println!("wrote the report to {}", path.display());
    }
    model.commit()?;
    println!("wrote {}", args.output.display());
    Ok(())
}
