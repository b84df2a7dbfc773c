//! Selections that share one count (the inference proves it: rewrite-analysis
//! `infer/same_count.rs`), like HF Longformer's global tokens and its local slots: each one's
//! rows are written at the other's coordinates. Padded to one capacity, both hold real rows
//! first and padding at the same places, so their tensors stay padded alike. That holds only if
//! they are compacted together, so they are compacted in one batch or not at all.

use crate::padding::Flow;
use crate::trace::View;
use nonzero_rewrite_analysis::dims::checked_numel;
use nonzero_rewrite_analysis::findings::Reason;

/// The other NonZeros of the graph (by output) whose count is that of `coordinates` (a
/// NonZero's output), by the inferred shapes.
pub fn sharing_count(view: &View, coordinates: &str) -> Vec<String> {
    let count = |name: &str| {
        let dims = view.shapes.get(name).dims?;
        dims.get(1).filter(|d| d.as_static().is_none()).cloned()
    };
    let Some(ours) = (!coordinates.is_empty())
        .then(|| count(coordinates))
        .flatten()
    else {
        return vec![];
    };
    view.graph
        .node
        .iter()
        .filter(|n| view.is_op(n, "NonZero") && n.input.len() == 1)
        .filter_map(|n| n.output.first())
        .filter(|out| *out != coordinates && count(out).as_ref() == Some(&ours))
        .cloned()
        .collect()
}

/// One selection of a batch: its NonZero's output, its mask's sizes, its capacity (as
/// `--capacity` sets it) and its flow.
pub struct Member<'a> {
    pub output: &'a str,
    pub dims: &'a [i64],
    pub capacity: Option<i64>,
    pub flow: &'a Flow,
}

/// Why selections sharing a count cannot be compacted together: capacities that differ (their
/// padding would start at different rows), or padded rows written at coordinates that no
/// selection of the batch pads.
pub fn check(members: &[Member]) -> Result<(), (Reason, String)> {
    let rows = |m: &Member| {
        let numel = checked_numel(m.dims)?;
        Some(m.capacity.map_or(numel, |c| c.min(numel)))
    };
    let Some((first, others)) = members.split_first() else {
        return Ok(());
    };
    for m in others {
        if rows(m) != rows(first) {
            return Err((
                Reason::PaddingUnsafe,
                format!(
                    "NonZero -> {} shares its count with NonZero -> {}, but their capacities differ ({:?} and {:?} rows)",
                    first.output,
                    m.output,
                    rows(first),
                    rows(m)
                ),
            ));
        }
    }
    for m in members {
        let dropped = |w: &String| members.iter().any(|o| o.flow.scatters.contains(w));
        if let Some(write) = m.flow.partner_writes.iter().find(|w| !dropped(w)) {
            return Err((
                Reason::PaddingUnsafe,
                format!(
                    "{write} writes padded rows of NonZero -> {} at indices that are not the coordinates of a selection of its count (not padding-safe)",
                    m.output
                ),
            ));
        }
    }
    Ok(())
}
