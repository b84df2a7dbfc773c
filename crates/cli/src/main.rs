//! `nonzero`: write the bundled models and the conformance pack, run models through ONNX Runtime
//! with the NonZero custom-op library.

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use nonzero_harness::{bundled, pack};
use nonzero_ort_runner::{self as runner, RunOptions, Status};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod args;
mod check;
mod load_unload;
mod optimize;
mod outputs;
mod selections;

#[derive(Debug, Parser)]
#[command(
    name = "nonzero",
    version,
    about = "NonZero for ONNX Runtime: models, conformance pack, runner"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Regenerate the bundled models (ONNX test-case layout, seeded inputs, reference outputs).
    Models {
        /// Output directory.
        #[arg(long, default_value = "models")]
        out: PathBuf,
    },
    /// Write the conformance pack (expected outputs from nonzero_core::reference).
    Conformance {
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// Also write the multi-million-element cases.
        #[arg(long)]
        large: bool,
        /// Only cases whose name contains this text.
        #[arg(long)]
        filter: Option<String>,
    },
    /// Run case directories or bare .onnx files through ONNX Runtime and check the outputs.
    Run {
        /// Case directories, directories of cases, or .onnx files (default: every case under models/).
        paths: Vec<PathBuf>,
        /// The NonZero custom-op library (default: $NONZERO_ORT_LIB or target/release/libnonzero_ort.so).
        #[arg(long, conflicts_with = "builtin")]
        library: Option<PathBuf>,
        /// libonnxruntime.so (default: $ORT_DYLIB_PATH, else the onnxruntime wheel's in the project's .venv).
        #[arg(long)]
        ort_dylib: Option<PathBuf>,
        /// Run with ORT's built-in NonZero (no custom-op library).
        #[arg(long)]
        builtin: bool,
        /// Intra-op threads (0: ORT's default).
        #[arg(long, default_value_t = 0)]
        threads: usize,
        /// Size of symbolic dimensions when inventing inputs for bare models.
        #[arg(long, default_value_t = 4)]
        symbolic_size: usize,
        /// Bare models' inputs from this .npz (np.savez(FILE, NAME=array, ...)), not random ones.
        #[arg(long, value_name = "FILE.npz")]
        inputs: Option<PathBuf>,
        /// Values shown per tensor.
        #[arg(long, default_value_t = 8)]
        preview: usize,
        /// Only print a line per model.
        #[arg(long, short)]
        quiet: bool,
        /// Run the models CYCLES times, each in new session options that register the library
        /// (a load and, once they are freed, an unload), printing one summary line: runs matched,
        /// resident memory after cycle 100 and the last, and whether the library stayed loaded.
        #[arg(long, value_name = "CYCLES")]
        load_unload: Option<usize>,
    },
    /// Rewrite exported NonZero chains into ArgWhere / BooleanMask (see docs/optimize.md).
    Optimize {
        /// The model to rewrite.
        input: PathBuf,
        /// Where to write the rewritten model (written only on success).
        output: PathBuf,
        /// Run the original (built-in kernels) and the rewritten model (library) on seeded random
        /// inputs first; fail unless every output is exactly equal.
        #[arg(long)]
        check: bool,
        /// The custom-op library for --check (default: $NONZERO_ORT_LIB or target/release).
        #[arg(long)]
        library: Option<PathBuf>,
        /// libonnxruntime.so for --check (default: $ORT_DYLIB_PATH, else the onnxruntime wheel's in the project's .venv).
        #[arg(long)]
        ort_dylib: Option<PathBuf>,
        /// Seeds per symbolic size for --check.
        #[arg(long, default_value_t = 3)]
        seeds: u64,
        /// List each NonZero (or gather) left, with the proof that failed and the shapes.
        #[arg(long, short)]
        verbose: bool,
        /// Also write the report as JSON (rewrites with the shape facts they relied on, each
        /// node left with its reason) to this file.
        #[arg(long, value_name = "FILE")]
        report_json: Option<PathBuf>,
        /// Also move every remaining NonZero of known rank >= 1 to the nonzero domain, so the
        /// host can load the library with `nonzero.onnx_domain` = 0.
        #[arg(long)]
        nonzero_domain: bool,
        /// What the model is for: cpu (the default) or cuda (rewrites nothing, and says why),
        /// ONNX Runtime's execution providers; with --static, generic (the default forms), qnn,
        /// litert or rknn (forms that NPU toolchain takes; docs/static.md). --provider is an alias.
        #[arg(long, alias = "provider", default_value = "cpu", value_name = "NAME")]
        target: String,
        /// Leave out the model-local functions (standard-op bodies of the nonzero ops) that let
        /// the rewritten model run on hosts without the library.
        #[arg(long)]
        no_fallback: bool,
        /// Static shapes: standard ONNX ops only and no data-dependent shape, for compilers and
        /// NPUs that refuse them (docs/static.md). Exits non-zero, writing nothing, while a node
        /// stays dynamic.
        #[arg(long = "static")]
        static_shapes: bool,
        /// With --static: the fixed shape of a graph input, NAME=D0,D1,... (NAME= for a scalar);
        /// repeat for each input whose shape the model leaves symbolic.
        #[arg(long, value_name = "NAME=D0,D1,...", requires = "static_shapes")]
        input_shape: Vec<String>,
        /// With --static: the most coordinates (or rows) a data-dependent output holds; past it
        /// the first N in row-major order are kept. Default: the mask's element count.
        /// NAME=N caps the selections that reach the graph output NAME (repeat per output),
        /// and its length where the model computes it from values (a speech model's waveform:
        /// no default then).
        #[arg(
            long,
            value_name = "N|NAME=N",
            requires = "static_shapes",
            allow_hyphen_values = true
        )]
        capacity: Vec<String>,
        /// With --static: write the model even if nodes stay dynamic (they are reported).
        #[arg(long, requires = "static_shapes")]
        allow_dynamic: bool,
    },
}

/// A closed pipe (`nonzero optimize -v ... | head`) ends the process quietly, as it does other
/// Unix tools, instead of a panic in `println!`: Rust's runtime ignores SIGPIPE before `main`.
#[cfg(unix)]
fn default_sigpipe() {
    // SAFETY: restores the default disposition (no handler code runs); called first in `main`,
    // before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    #[cfg(unix)]
    default_sigpipe();
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<ExitCode> {
    match Cli::parse().command {
        Command::Optimize {
            input,
            output,
            check,
            library,
            ort_dylib,
            seeds,
            verbose,
            report_json,
            nonzero_domain,
            target,
            no_fallback,
            static_shapes,
            input_shape,
            capacity,
            allow_dynamic,
        } => {
            let mut input_shapes = std::collections::BTreeMap::new();
            for text in &input_shape {
                let (name, dims) = args::parse_input_shape(text)?;
                if input_shapes.insert(name.clone(), dims).is_some() {
                    anyhow::bail!("--input-shape {name}: given twice");
                }
            }
            let (capacity, output_capacities) = args::parse_capacities(&capacity)?;
            let (provider, target) = args::parse_target(&target)?;
            optimize::optimize_command(&optimize::OptimizeArgs {
                input,
                output,
                check,
                library,
                ort_dylib,
                seeds,
                verbose,
                report_json,
                options: nonzero_optimize::Options {
                    nonzero_domain,
                    provider,
                    no_fallback,
                    static_shapes,
                    input_shapes,
                    capacity,
                    output_capacities,
                    allow_dynamic,
                    target,
                },
            })?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Models { out } => {
            for (name, case) in bundled::bundled_models() {
                let dir = out.join(name);
                if dir.exists() {
                    std::fs::remove_dir_all(&dir)?;
                }
                case.write(&dir)?;
                println!("wrote {}", dir.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Conformance { out, large, filter } => {
            let summary = pack::write_pack(&out, large, |s| {
                filter.as_deref().is_none_or(|f| s.name.contains(f))
            })?;
            println!(
                "wrote {} cases to {} ({:.1} MB), manifest: {}",
                summary.entries.len(),
                out.display(),
                summary.bytes as f64 / 1e6,
                out.join("manifest.json").display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            paths,
            library,
            ort_dylib,
            builtin,
            threads,
            symbolic_size,
            inputs,
            preview,
            quiet,
            load_unload,
        } => {
            let library = if builtin {
                None
            } else {
                match library.or_else(runner::default_library) {
                    Some(l) => Some(l),
                    None => bail!(
                        "no custom-op library: build it (cargo build --release -p nonzero-ort), pass --library or set NONZERO_ORT_LIB, or use --builtin"
                    ),
                }
            };
            runner::init_ort(ort_dylib.as_deref())?;
            let opts = RunOptions {
                library: library.clone(),
                threads,
                symbolic_size,
                inputs,
            };
            let paths = if paths.is_empty() {
                vec![PathBuf::from("models")]
            } else {
                paths
            };
            let mut targets = vec![];
            for p in &paths {
                if p.is_dir() {
                    targets.extend(runner::case_dirs(p)?);
                } else {
                    targets.push(p.clone());
                }
            }
            match &library {
                Some(l) => println!("custom-op library: {}", l.display()),
                None => println!("custom-op library: none (ORT built-in kernels)"),
            }
            if let Some(cycles) = load_unload {
                let ok = load_unload::run(&targets, &opts, cycles)?;
                return Ok(if ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                });
            }
            let (mut ok, mut failed, mut other) = (0, 0, 0);
            for t in &targets {
                let failure = report(t, &opts, preview, quiet);
                match failure {
                    Some(true) => failed += 1,
                    Some(false) => ok += 1,
                    None => other += 1,
                }
            }
            println!(
                "{} models: {ok} matched, {failed} failed, {other} other",
                targets.len()
            );
            Ok(if failed > 0 {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// Runs and prints one model; `Some(true)` on failure, `Some(false)` on match, `None` otherwise.
fn report(path: &Path, opts: &RunOptions, preview: usize, quiet: bool) -> Option<bool> {
    let r = runner::run_path(path, opts);
    let (word, detail) = match &r.status {
        Status::Match => ("MATCH", String::new()),
        Status::Mismatch(m) => ("MISMATCH", m.clone()),
        Status::Error(e) => ("ERROR", e.clone()),
        Status::Skipped(s) => ("SKIPPED", s.clone()),
        Status::NoExpected {
            builtin_equal: Some(false),
            note,
        } => ("MISMATCH", note.clone()),
        Status::NoExpected {
            builtin_equal: Some(true),
            note,
        } => ("MATCH", note.clone()),
        Status::NoExpected { note, .. } => ("RAN", note.clone()),
    };
    println!(
        "{word:8} {}{}",
        r.name,
        if detail.is_empty() {
            String::new()
        } else {
            format!(": {detail}")
        }
    );
    if !quiet {
        for (n, t) in &r.inputs {
            println!("    input  {n}: {}", t.describe(preview));
        }
        for (n, t) in &r.outputs {
            println!("    output {n}: {}", t.describe(preview));
        }
        if matches!(r.status, Status::Mismatch(_)) {
            for (n, t) in &r.expected {
                println!("    expect {n}: {}", t.describe(preview));
            }
        }
    }
    match r.status {
        s if s.is_match() => Some(false),
        s if s.is_failure() => Some(true),
        _ => None,
    }
}
