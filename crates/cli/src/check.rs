//! `nonzero optimize --check`: the original against the rewritten model on seeded random inputs.
//! ONNX Runtime (and, outside static mode, the custom-op library) is found and loaded before the
//! model is read ([`prepare`]), so a missing one costs no work.

use crate::selections::Selections;
use anyhow::{anyhow, bail, Context, Result};
use nonzero_harness::Tensor;
use nonzero_optimize::StaticReport;
use nonzero_ort_runner::{self as runner, Status};
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What `--check` runs with: found before any work.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The custom-op library (not needed in static mode: its model has standard ops only).
    pub library: Option<PathBuf>,
    pub seeds: u64,
}

/// Finds and loads ONNX Runtime (`--ort-dylib`, `$ORT_DYLIB_PATH`, else the onnxruntime wheel
/// of the project's own venvs) and, outside static mode, finds the custom-op library.
pub fn prepare(
    ort_dylib: Option<&Path>,
    library: Option<&Path>,
    static_mode: bool,
    seeds: u64,
) -> Result<Prepared> {
    let library = if static_mode {
        None
    } else {
        Some(
            library
                .map(Path::to_path_buf)
                .or_else(runner::default_library)
                .ok_or_else(|| {
                    anyhow!("--check needs the custom-op library: build it (cargo build --release -p nonzero-ort), pass --library or set NONZERO_ORT_LIB")
                })?,
        )
    };
    let dylib = runner::ort_dylib_path(ort_dylib).context("--check needs ONNX Runtime")?;
    runner::init_ort(Some(&dylib)).context("--check needs ONNX Runtime")?;
    Ok(Prepared { library, seeds })
}

fn quoted(names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    names.join(", ")
}

/// `--static --check`: the original and the static model both on ONNX Runtime's built-in
/// kernels (the static one has standard ops only), on seeded random inputs of the static
/// model's fixed shapes. Each padded output cut to its `<name>_count` must equal the original's
/// output cut to the same count. Without a capacity nothing is cut: the count is the original's
/// length. Under `capacity`, where a selection was longer than the capacity on a run, the count
/// is at most the capacity, and the outputs computed from such a selection that are not padded
/// (a sum over it) are named, not compared: they are the cut selection's (docs/static.md).
pub fn check_static(
    prepared: &Prepared,
    original: &[u8],
    rewritten: &[u8],
    report: &StaticReport,
) -> Result<()> {
    // The capacity of each padded output: its own (`--capacity NAME=N`), else `--capacity N`.
    let capacity_of = |name: &str| {
        report
            .output_capacities
            .get(name)
            .copied()
            .or(report.capacity)
    };
    let capped = report.capacity.is_some() || !report.output_capacities.is_empty();
    let fixed = ModelProto::decode(rewritten)?;
    let model = ModelProto::decode(original)?;
    let selections = Selections::of(&model);
    let count_outputs = &report.count_outputs;
    let compacted = crate::selections::compacted(report);
    // A body's selection shows no length on a run: where one was compacted, it may be cut.
    let bodies_cut = compacted.in_bodies;
    let (probed, probes) = selections.probed(&model);
    let probed = probed.encode_to_vec();
    let mut builtin = runner::session(&probed, None, 0).context("original model, built-in")?;
    let mut ours = runner::session(rewritten, None, 0).context("static model, built-in")?;
    let padded = |name: &str| count_outputs.iter().find(|(o, _, _)| o == name);
    let is_count = |name: &str| count_outputs.iter().any(|(_, c, _)| c == name);
    let mut named: Vec<String> = vec![];
    for seed in 0..prepared.seeds {
        let inputs = runner::random_inputs(&fixed, 1, 0x5eed + seed)?;
        let want = runner::run(&mut builtin, &inputs).context("running the original")?;
        let got = runner::run(&mut ours, &inputs).context("running the static model")?;
        // The selections longer on this run than the rows their compaction holds.
        let cut: BTreeSet<&String> = want
            .iter()
            .filter(|(n, t)| {
                let node = selections.nonzeros.iter().find(|(o, _)| o == n);
                let rows = node.and_then(|(_, node)| compacted.nodes.get(node));
                rows.is_some_and(|&rows| t.shape.get(1).is_some_and(|&l| l as u64 > rows as u64))
            })
            .map(|(n, _)| n)
            .collect();
        let got_named = |name: &str| -> Result<&Tensor> {
            got.iter()
                .find(|(n, _)| n == name)
                .map(|(_, t)| t)
                .ok_or_else(|| anyhow!("check failed: the static model has no output '{name}'"))
        };
        if let Some((name, _)) = got
            .iter()
            .find(|(n, _)| !is_count(n) && !want.iter().any(|(w, _)| w == n))
        {
            bail!("check failed: the static model has the output '{name}', the original has not");
        }
        let (mut wants, mut gots) = (vec![], vec![]);
        for (name, value) in want.iter().filter(|(n, _)| !probes.contains(n)) {
            let from_cut = capped && selections.computed_from_cut(name, &cut, bodies_cut);
            let Some((_, count_name, axis)) = padded(name) else {
                if from_cut {
                    if !named.contains(name) {
                        named.push(name.clone());
                    }
                } else {
                    wants.push((name.clone(), value.clone()));
                    gots.push((name.clone(), got_named(name)?.clone()));
                }
                continue;
            };
            let count = count_of(got_named(count_name)?, count_name)?;
            let length = value.shape.get(*axis).copied().unwrap_or(0);
            match capacity_of(name) {
                Some(c) if from_cut => {
                    let most = length.min(usize::try_from(c).unwrap_or(usize::MAX));
                    if count > most {
                        bail!("check failed (seed {seed}): '{count_name}' is {count}, past {most} (the original's '{name}' has {length} along axis {axis}, the capacity is {c})");
                    }
                    // One selection, not nested in another: the first `most` are kept.
                    if selections.one_selection(name) && count != most {
                        bail!("check failed (seed {seed}): '{count_name}' is {count}, the original's '{name}' has {length} along axis {axis}, cut to the capacity {c}: {most}");
                    }
                }
                _ if count != length => bail!("check failed (seed {seed}): '{count_name}' is {count}, the original's '{name}' has {length} along axis {axis}"),
                _ => {}
            }
            let cut_to = |t: &Tensor, whose: &str| {
                t.prefix_along(*axis, count).ok_or_else(|| {
                    anyhow!("check failed (seed {seed}): {whose} '{name}' has fewer than {count} ('{count_name}') along axis {axis}")
                })
            };
            wants.push((name.clone(), cut_to(value, "the original's")?));
            gots.push((
                name.clone(),
                cut_to(got_named(name)?, "the static model's")?,
            ));
        }
        if let Status::Mismatch(m) = runner::compare(&gots, &wants) {
            bail!("check failed (seed {seed}): {m}");
        }
    }
    match report.capacity {
        _ if !capped => println!(
            "check: {} runs, every output, cut to its count, exactly equal to the original's on the built-in kernels",
            prepared.seeds
        ),
        global => {
            let mut caps: Vec<String> = report
                .output_capacities
                .iter()
                .map(|(name, c)| format!("{c} for '{name}'"))
                .collect();
            caps.extend(global.map(|c| c.to_string()));
            let most = caps.join(", ");
            println!(
                "check: {} runs at capacity {most}: each output compared is exactly equal to the original's on the built-in kernels (a padded one cut to its count, and the original's to the same count, {most} at most)",
                prepared.seeds
            );
            if !named.is_empty() {
                println!(
                    "check: not compared, computed from a selection that the capacity cut: {}",
                    quoted(&named)
                );
            }
        }
    }
    Ok(())
}

/// A `<name>_count` output's value.
fn count_of(t: &Tensor, name: &str) -> Result<usize> {
    let value = t.data.values::<i64>().and_then(|v| v.first().copied());
    value
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| anyhow!("'{name}' is not a non-negative int64 scalar"))
}

/// Runs the original model on ONNX Runtime's built-in kernels and the rewritten one with the
/// library, on seeded random inputs (two sizes for symbolic dimensions), and compares exactly.
pub fn check(prepared: &Prepared, original: &[u8], rewritten: &[u8]) -> Result<()> {
    let library = prepared.library.as_deref().expect("found by prepare");
    let model = ModelProto::decode(original)?;
    let mut builtin = runner::session(original, None, 0).context("original model, built-in")?;
    let mut ours =
        runner::session(rewritten, Some(library), 0).context("rewritten model, library")?;
    let mut runs = 0;
    for seed in 0..prepared.seeds {
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
