//! `nonzero optimize`'s arguments that clap takes as text: input shapes and capacities, read here
//! so that every malformed value gets one message that names the rule it broke.

use anyhow::{bail, Result};
use std::collections::BTreeMap;

/// `--target NAME` (alias `--provider`): cpu or cuda, ONNX Runtime's execution providers (the
/// default mode's), or generic, qnn, litert or rknn, the static forms' toolchains (cpu is
/// generic there). A toolchain other than generic needs --static (checked with the options).
pub fn parse_target(text: &str) -> Result<(nonzero_optimize::Provider, nonzero_optimize::Target)> {
    use nonzero_optimize::{Provider, Target};
    if let Some(provider) = Provider::parse(text) {
        return Ok((provider, Target::Generic));
    }
    match Target::parse(text) {
        Some(target) => Ok((Provider::Cpu, target)),
        None => bail!("--target {text}: expected cpu, cuda (ONNX Runtime's providers) or, with --static, generic, qnn, litert, rknn"),
    }
}

/// `NAME=D0,D1,...` as a name and sizes.
pub fn parse_input_shape(text: &str) -> Result<(String, Vec<i64>)> {
    let (name, dims) = text.split_once('=').ok_or_else(|| {
        anyhow::anyhow!("--input-shape {text}: expected NAME=D0,D1,... (NAME= for a scalar)")
    })?;
    let dims = dims
        .split(',')
        .filter(|d| !d.trim().is_empty())
        .map(|d| {
            d.trim()
                .parse::<i64>()
                .ok()
                .filter(|&v| v >= 0)
                .ok_or_else(|| {
                    anyhow::anyhow!("--input-shape {text}: '{d}' is not a size (0 or more)")
                })
        })
        .collect::<Result<Vec<i64>>>()?;
    Ok((name.to_string(), dims))
}

/// `--capacity N`: a positive integer. Read here rather than by clap, so that `--capacity -1`
/// and `--capacity=-1` get the same message (clap would suggest `-- -1` for the first).
pub fn parse_capacity(text: &str) -> Result<i64> {
    match text.trim().parse::<i64>() {
        Ok(n) if n >= 1 => Ok(n),
        Err(e) if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) => bail!(
            "--capacity must be a positive integer of at most {}, got {text}",
            i64::MAX
        ),
        _ => bail!("--capacity must be a positive integer, got {text}"),
    }
}

/// Every `--capacity`: at most one `N` for all outputs, and `NAME=N` once per graph output
/// (split at the last `=`, so a name may hold one).
pub fn parse_capacities(texts: &[String]) -> Result<(Option<i64>, BTreeMap<String, i64>)> {
    let (mut all, mut named) = (None, BTreeMap::new());
    for text in texts {
        match text.rsplit_once('=') {
            Some((name, n)) => {
                let n = parse_capacity(n).map_err(|e| anyhow::anyhow!("{e} (for '{name}')"))?;
                if named.insert(name.to_string(), n).is_some() {
                    bail!("--capacity {name}=N: given twice for '{name}'");
                }
            }
            None => {
                let n = parse_capacity(text)?;
                if let Some(first) = all.replace(n) {
                    bail!("--capacity N: given twice ({first} and {n}); NAME=N caps one output");
                }
            }
        }
    }
    Ok((all, named))
}
