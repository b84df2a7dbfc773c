//! What a padded selection reaches ([`super::follow`]'s result), for the rewrites that make it
//! safe: gathers, graph outputs, reductions, nested selections, writes and re-padded outputs.

/// A gather that reads through the padded coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatherKind {
    /// `GatherND(data, [C, r] coordinates)`; `direct` when the coordinates are the compacted
    /// ones in order (proven by the tracer), so that the flat positions can stand for them.
    Nd { direct: bool },
    /// `Gather(data, [C] column, axis)`.
    Axis(usize),
}

/// How a padded tensor's count follows from the selection's on the way to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CountStep {
    /// Only the first L rows are left (`keep[:L]`): min(count, L).
    Limit(i64),
    /// Each row became k rows (`[C, k] -> [C * k]`): count * k.
    Scale(i64),
    /// A TopK's rows ([`TopK`]): min(count, k) for the run-time k (the int64 tensor named),
    /// in as many rows as the capacity, or the constant bound of k where it is less.
    TopK(String, Option<i64>),
}

/// A Gather at padded integer values ([`Flow::masked_indices`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaskedIndex {
    /// The Gather's output and its indices.
    pub output: String,
    pub indices: String,
    /// The indices' padded axis, sizes (-1 where not fixed) and type.
    pub axis: usize,
    pub dims: Vec<i64>,
    pub elem_type: i32,
}

/// A TopK along the padded axis whose k is at most the count at run time (`min(K, len(x))`,
/// torchvision's `_topk_min`): it becomes a TopK with a fixed k, its padding read as the value
/// that sorts last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopK {
    /// Its values output (the node's first).
    pub output: String,
    /// A constant that k cannot exceed: the fixed k is the capacity, or this where it is less.
    pub bound: Option<i64>,
    pub axis: usize,
    /// How its input's count follows from the selection's.
    pub input_count: Vec<CountStep>,
}

/// What the padding reaches.
#[derive(Debug, Default)]
pub struct Flow {
    /// The tensors (sinks by their output, graph outputs by name) whose count is not the
    /// selection's: the steps from it ([`CountStep`]).
    pub counts: std::collections::HashMap<String, Vec<CountStep>>,
    /// Gathers indexed by the padded coordinates, by output name.
    pub gathers: Vec<(String, GatherKind)>,
    /// Graph outputs reached, with their padded axis.
    pub outputs: Vec<(String, usize)>,
    /// Reductions over the padded axis, which read the padding masked by their identity.
    pub reductions: Vec<Reduction>,
    /// NonZero nodes (by output) whose 1-D mask is padded: the padding must select nothing,
    /// so their mask is and-ed with the valid part; they are compacted in turn.
    pub nested: Vec<String>,
    /// ScatterElements and ScatterND (by output) whose indices are the padded coordinates: the
    /// padding's writes go to an appended slot that is then dropped.
    pub scatters: Vec<String>,
    /// ScatterElements and ScatterND (by output) writing padded rows at the coordinates of
    /// another selection of the same count ([`crate::partners`]), which must drop them.
    pub partner_writes: Vec<String>,
    /// Graph outputs (and their padded axis) whose padding row-wise work changed: written
    /// again as the fill past the count.
    pub repad: Vec<(String, usize)>,
    /// The selected rows regrouped per leading index and one picked from each group
    /// ([`Regrouped`]).
    pub regrouped: Vec<Regrouped>,
    /// NonMaxSuppression nodes (by output) over padded boxes and scores: the padding is scored
    /// so that no score threshold passes it, and NMS keeps valid rows only.
    pub nms: Vec<String>,
    /// (Concat output, input, axis) of each padded input appended along its padded axis: cut
    /// to its count there ([`crate::rejoin`]).
    pub rejoined: Vec<(String, String, usize)>,
    /// Gathers of fixed data at padded integer values whose padding is not known to be a valid
    /// index: the padding is read as 0 ([`crate::index_gather`]).
    pub masked_indices: Vec<MaskedIndex>,
    /// TopKs along the padded axis ([`TopK`]).
    pub topks: Vec<TopK>,
    /// Splits along the padded axis into constant sizes ([`super::WholeSplit`]).
    pub splits: Vec<super::WholeSplit>,
    /// (Loop, padded tensor) of each Loop whose trip count is that tensor's padded size (its
    /// Shape read): it gets the count ([`crate::counted_loops`]).
    pub counted_loops: Vec<(String, String)>,
    /// (padded tensor, Loop, padded axis) of each padded tensor a counted Loop's body reads:
    /// the body reads it cut to its count, the original's rows.
    pub loop_cuts: Vec<(String, String, usize)>,
    /// (tensor, axis) that a Slice cuts to a size read from this selection's rows, taken to
    /// be padded alike: checked at the end of the flow ([`Flow::check_sized_alike`]).
    pub sized_alike: Vec<(String, usize)>,
    /// Slices (by output) that a shape read of this selection's rows sizes: each cuts data
    /// padded alike to the capacity, so its output is that data.
    pub sized_slices: Vec<String>,
    /// Slices (by output) the flow followed as such cuts: each must be one of `sized_slices`.
    pub cut_to_size: Vec<String>,
    /// Rows of padded data picked at padded indices ([`super::RowPick`]).
    pub row_picks: Vec<super::RowPick>,
    /// (output, indices, padded axis) of each GatherElements of rows padded alike along another
    /// axis: its indices' padding is read as 0.
    pub element_picks: Vec<(String, String, usize)>,
    /// (output, divisor, padded axis) of each float Div by padded rows: the divisor's padding
    /// is read as 1.
    pub divisors: Vec<(String, String, usize)>,
    /// Every tensor padded by the selection (what a test of its size would read).
    pub padded: std::collections::HashSet<String>,
}

/// `Gather(Reshape(rows, [G, -1, ...]), i, axis=1)`: the selected rows cut into G equal groups
/// (BART's `hidden[eos_mask].view(batch, -1, h)[:, -1]`), row i of each. The rows are the
/// count's, so each pick is a position among them: `g * (count / G) + i` (`(g + 1) * ... + i`
/// for a negative i), read from the padded rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Regrouped {
    /// The padded rows (the Reshape's input) and the Gather's output.
    pub rows: String,
    pub output: String,
    pub groups: i64,
    pub index: i64,
}

/// A `ReduceSum`, `ReduceMean`, `ReduceMax`, `ReduceMin` or `ReduceProd` whose axes include the
/// padded one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduction {
    /// The reduction's output (its node is found by it).
    pub output: String,
    /// The padded axis of its input, and the input's rank.
    pub axis: usize,
    pub rank: usize,
    /// The reduced axes (normalized, sorted).
    pub axes: Vec<usize>,
    pub keepdims: bool,
    /// Every reader casts the result to bool (dynamo's `all()` and `any()`), so only whether
    /// it is zero matters.
    pub truth_only: bool,
}

impl Flow {
    /// Records the count of the rows `name` for it (also where nothing reads it: `keep[:L]` as
    /// an output) and for its readers' outputs (a sink, by its output, sees the count it reads).
    pub(super) fn record_count(
        &mut self,
        view: &crate::trace::View,
        name: &str,
        count: &[CountStep],
    ) {
        if count.is_empty() {
            return;
        }
        let readers = view.index.readers_of(name).iter();
        let outputs = readers.flat_map(|&(r, _)| &view.graph.node[r].output);
        for reached in std::iter::once(&name.to_string()).chain(outputs) {
            self.counts.insert(reached.clone(), count.to_vec());
        }
    }

    /// Each tensor cut to a size read from this selection's rows must be padded by it along
    /// that axis (`axes`: every padded tensor's padded axis).
    pub(super) fn check_sized_alike(
        &self,
        axes: &std::collections::HashMap<String, usize>,
    ) -> Result<(), String> {
        if let Some(cut) = self
            .cut_to_size
            .iter()
            .find(|c| !self.sized_slices.contains(c))
        {
            return Err(format!(
                "Slice -> {cut} cuts padded rows to a size that is not this selection's (not padding-safe)"
            ));
        }
        match self.sized_alike.iter().find(|(t, a)| axes.get(t) != Some(a)) {
            Some((tensor, axis)) => Err(format!(
                "{tensor} is cut along axis {axis} to the size of this selection's rows, but is not padded by it there (not padding-safe)"
            )),
            None => Ok(()),
        }
    }

    /// Padded tensors read inside a Loop's body (`reads`: tensor, Loop, axis): only a Loop that
    /// runs once per row, its trip count the count, reads them (cut to the count) exactly.
    pub(super) fn check_loop_reads(
        &mut self,
        reads: Vec<(String, String, usize)>,
    ) -> Result<(), String> {
        for (tensor, lp, axis) in reads {
            if !self.counted_loops.iter().any(|(l, _)| *l == lp) {
                return Err(format!(
                    "the body of Loop -> {lp} reads the padded {tensor}, and its trip count is not this selection's count (not padding-safe)"
                ));
            }
            self.loop_cuts.push((tensor, lp, axis));
        }
        Ok(())
    }

    /// A write of padded rows at indices this selection does not pad would write them at real
    /// places: every write of updates (by output) must also be one of indices, or, where
    /// another selection shares the count (`partnered`), one of its (checked by
    /// [`crate::partners`]).
    pub(super) fn check_writes(
        &mut self,
        updates: Vec<String>,
        mut indices: Vec<String>,
        into_padded: &[String],
        partnered: bool,
    ) -> Result<(), String> {
        // Padded data written at this selection's own coordinates: not a case the sinks cover.
        if let Some(out) = into_padded
            .iter()
            .find(|o| indices.contains(o) || updates.contains(o))
        {
            return Err(format!(
                "{out} writes into padded rows at this selection's own coordinates (not padding-safe)"
            ));
        }
        let elsewhere: Vec<String> = updates
            .into_iter()
            .filter(|u| !indices.contains(u))
            .collect();
        if partnered {
            self.partner_writes = elsewhere;
        } else if let Some(out) = elsewhere.first() {
            return Err(format!(
                "{out} writes padded rows at indices that are not this selection's coordinates (not padding-safe)"
            ));
        }
        indices.sort();
        indices.dedup();
        self.scatters = indices;
        Ok(())
    }

    /// An NMS reads padded boxes only with scores padded alike (both reached).
    pub(super) fn check_nms(&mut self, reads: Vec<(String, usize)>) -> Result<(), String> {
        for (out, _) in &reads {
            if self.nms.contains(out) {
                continue;
            }
            let both = [0, 1]
                .iter()
                .all(|slot| reads.iter().any(|(o, s)| o == out && s == slot));
            if !both {
                return Err(format!(
                    "NonMaxSuppression -> {out} reads padded boxes or scores, but not both (not padding-safe)"
                ));
            }
            self.nms.push(out.clone());
        }
        Ok(())
    }

    /// A Gather at a TopK's indices reads rows padded alike as that TopK's input (both its
    /// data and its indices reached, the data's count steps the TopK input's).
    pub(super) fn check_topk(&self, reads: Vec<super::topk::IndicesGather>) -> Result<(), String> {
        for read in &reads {
            let topk = self.topks.iter().find(|t| t.output == read.topk);
            let data = reads
                .iter()
                .find(|r| r.output == read.output && r.slot == 0);
            let alike = topk
                .zip(data)
                .is_some_and(|(t, d)| t.input_count == d.data_count);
            if !alike {
                return Err(format!(
                    "Gather -> {} reads at the indices of TopK -> {} rows that are not padded alike as that TopK's input (not padding-safe)",
                    read.output, read.topk
                ));
            }
        }
        Ok(())
    }

    /// Gathers along the padded axis (indices, gather) must read at the coordinates of a second
    /// selection over these rows, which is compacted in turn, or at the boxes an NMS over these
    /// rows keeps (valid rows only).
    pub(super) fn check_selected_by(
        &self,
        view: &crate::trace::View,
        selected_by: Vec<(String, String)>,
    ) -> Result<(), String> {
        for (indices, gather) in selected_by {
            let nested = crate::trace::trace(view, &indices).filter(|t| t.mask_rank == 1);
            let first = nested.as_ref().and_then(|t| t.chain.first());
            let kept = kept_by(view, &indices).is_some_and(|nms| self.nms.contains(&nms));
            if self.picks_at(&indices) {
                continue;
            }
            if !kept && !first.is_some_and(|nonzero| self.nested.contains(nonzero)) {
                return Err(format!(
                    "Gather {gather} reads padded rows at {indices}, which are not the coordinates of a selection over them (not padding-safe)"
                ));
            }
        }
        Ok(())
    }
}

/// The NMS output whose box column `name` is (through column, slice and shape steps).
fn kept_by(view: &crate::trace::View, name: &str) -> Option<String> {
    let mut at = name.to_string();
    for _ in 0..8 {
        let node = view.producer(&at)?;
        let op = node.op_type.as_deref()?;
        if !view.is_op(node, op) || node.input.is_empty() {
            return None;
        }
        match op {
            "NonMaxSuppression" => return node.output.first().cloned(),
            "Gather" => {
                let column = crate::graph::int_attr(node, "axis").ok()? == Some(1)
                    && view.const_ints(node.input.get(1)?)? == [2];
                column.then_some(())?;
            }
            "Squeeze" | "Unsqueeze" | "Reshape" | "Cast" | "Identity" | "Slice" => {}
            _ => return None,
        }
        at = node.input[0].clone();
    }
    None
}
