//! Fixed capacity, per graph: each NonZero whose padding reaches only padding-safe readers
//! ([`super::padding`]) is compacted ([`super::compact`]), its gathers, reductions and nested
//! selections rewritten for the padding, and each padded graph output gains `<name>_count`
//! ([`super::outputs`]). A NonZero that cannot be is recorded with its reason.

use super::emit::Emitter;
use super::scope::Scope;
use super::{compact, count_if, padding, partners, replace, sinks, static_dims, StaticPass};
use crate::graph::{describe, is_onnx_op};
use crate::trace::View;
use crate::StaticError;
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_analysis::dims::{checked_numel, MAX_PADDED_ELEMENTS};
use nonzero_rewrite_analysis::findings::Reason;
use std::collections::HashSet;

impl StaticPass<'_> {
    /// Compaction of every NonZero whose padding stays on padding-safe readers.
    pub(super) fn fixed_capacity(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
    ) -> Result<(), StaticError> {
        // What the graph proves, recomputed only after a compaction changed it: a NonZero
        // refused leaves the graph as it was (SSDlite refuses 180 in a row).
        let mut unchanged = None;
        loop {
            let (index, shapes) = unchanged.take().unwrap_or_else(|| scope.shapes_of(graph));
            // Lists cut at a Concat by the compactions so far, rejoined where all are: on these
            // shapes, not a computation of its own after each compaction.
            if !self.rejoined.is_empty() {
                let lines = self.rejoin(graph, scope, &shapes);
                if !lines.is_empty() {
                    for line in lines {
                        let line = scope.line(line);
                        self.summary.rewrites.push(("rejoin".to_string(), line));
                    }
                    continue;
                }
            }
            let view = View {
                graph,
                index: &index,
                shapes: &shapes,
            };
            let Some(at) = graph.node.iter().position(|n| {
                is_onnx_op(n, "NonZero")
                    && n.input.len() == 1
                    && !self.known.contains_key(&n.output[0])
            }) else {
                // No NonZero left: a NonMaxSuppression, whose rows a fixed form pads.
                if self.fixed_nms(graph, scope)? {
                    continue;
                }
                return Ok(());
            };
            let node = &graph.node[at];
            let (mask, output) = (node.input[0].clone(), node.output[0].clone());
            let plan = plan(&view, scope, &mask, &output);
            // Refused at an If (the refusal names the reader first; trying only then keeps
            // SSDlite's 180 refusals cheap).
            if plan.as_ref().is_err_and(|(_, why)| why.starts_with("If ")) {
                // An If decided by the list's size may be what refuses it ([`count_if`]): on
                // a copy with such Ifs replaced by their else branch, the list may pass.
                // One If at a time: only the one this list's size decides is taken.
                let adopted = count_if::found(&view).into_iter().find_map(|found| {
                    let mut trial = graph.clone();
                    let lines = count_if::take_else(&mut trial, &[found.at]);
                    let (index, shapes) = scope.shapes_of(&trial);
                    let view = View {
                        graph: &trial,
                        index: &index,
                        shapes: &shapes,
                    };
                    let passes = !lines.is_empty()
                        && self::plan(&view, scope, &mask, &output)
                            .is_ok_and(|(_, _, flow, _)| found.decided_by(&flow));
                    passes.then_some((trial, lines))
                });
                if let Some((trial, lines)) = adopted {
                    for line in lines {
                        let line = scope.line(line);
                        self.summary.rewrites.push(("count-if".to_string(), line));
                    }
                    *graph = trial;
                    continue;
                }
            }
            let first = match plan {
                Ok(plan) => plan,
                Err(why) => {
                    self.known.insert(output, why);
                    unchanged = Some((index, shapes));
                    continue;
                }
            };
            // Selections sharing its count: all compacted together, or none ([`partners`]).
            let partners = partners::sharing_count(&view, &output);
            if !partners.is_empty() {
                match self.plan_partners(&view, scope, (mask, output.clone(), first), &partners) {
                    Ok(batch) => {
                        for (mask, output, plan) in batch {
                            self.compact_planned(graph, scope, mask, output, plan)?;
                        }
                        self.remove_unread(graph);
                    }
                    Err(why) => {
                        self.known.insert(output, why);
                        unchanged = Some((index, shapes));
                    }
                }
                continue;
            }
            // The NonZeros right after it whose plans on these shapes touch nothing this one's
            // (or another of the batch's) does are compacted too before shapes are computed
            // again: each would be planned alike on the new shapes (SSDlite's 90 classes).
            let mut taken = region(&view, &mask, &output, &first.2);
            let mut batch = vec![(mask, output, first)];
            for later in graph.node[at + 1..].iter().filter(|n| {
                is_onnx_op(n, "NonZero")
                    && n.input.len() == 1
                    && !self.known.contains_key(&n.output[0])
            }) {
                let (mask, output) = (later.input[0].clone(), later.output[0].clone());
                // One of selections sharing a count goes with them only (above).
                if !partners::sharing_count(&view, &output).is_empty() {
                    break;
                }
                let Ok(plan) = self::plan(&view, scope, &mask, &output) else {
                    break;
                };
                let touched = region(&view, &mask, &output, &plan.2);
                if !touched.is_disjoint(&taken) {
                    break;
                }
                taken.extend(touched);
                batch.push((mask, output, plan));
            }
            for (mask, output, plan) in batch {
                self.compact_planned(graph, scope, mask, output, plan)?;
            }
            self.remove_unread(graph);
        }
    }

    /// Compacts the NonZero writing `output` of `mask` as `plan` says, and rewrites the sinks.
    fn compact_planned(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        mask: String,
        output: String,
        (dims, mask_type, flow, sinks): Plan,
    ) -> Result<(), StaticError> {
        let at = crate::graph::writer_of(graph, &output).expect("a planned NonZero is still there");
        let node = &graph.node[at];
        {
            let capacity = self.capacity_for(&flow.outputs)?;
            padded_within_limit(&describe(node), &mask, &dims, capacity, &sinks.gathers)?;
            let mut e = Emitter::new(graph, scope, &describe(node));
            let Some(compacted) = compact::emit(&mut e, &mask, mask_type, &dims, capacity, &output)
            else {
                self.known.insert(
                    output,
                    (
                        Reason::MaskNotBool,
                        format!("{mask}: no zero of its type (strings)"),
                    ),
                );
                return Ok(());
            };
            let compacted_node = describe(node);
            let line = format!(
                "fixed capacity: NonZero {} became [{}, {}] coordinates padded with -1 (outputs: {})",
                compacted_node,
                dims.len(),
                compacted.capacity,
                compact::outputs_text(&flow)
            );
            let inputs = replace(graph, at, e);
            self.dead.extend(inputs);
            self.emit_sinks(graph, scope, &flow, sinks, &compacted)?;
            self.summary
                .rewrites
                .push(("fixed-capacity".to_string(), scope.line(line)));
            self.summary.compacted.push((
                scope.label.to_string(),
                compacted_node,
                compacted.capacity,
            ));
        }
        Ok(())
    }

    /// `first` planned with the selections sharing its count (`partners`, by output), each
    /// planned on the same shapes; or why none of them can be compacted.
    fn plan_partners(
        &self,
        view: &View,
        scope: &Scope,
        first: Planned,
        partners: &[String],
    ) -> Result<Vec<Planned>, (Reason, String)> {
        let mut batch = vec![first];
        for partner in partners {
            let Some(node) = view.producer(partner) else {
                continue;
            };
            let mask = node.input[0].clone();
            let plan = plan(view, scope, &mask, partner).map_err(|(reason, why)| {
                let why = format!(
                    "its count is that of NonZero -> {partner}, which stays dynamic: {why}"
                );
                (reason, why)
            })?;
            batch.push((mask, partner.clone(), plan));
        }
        let mut members = vec![];
        for (_, output, (dims, _, flow, _)) in &batch {
            let capacity = self
                .capacity_for(&flow.outputs)
                .map_err(|e| (Reason::PaddingUnsafe, e.to_string()))?;
            members.push(partners::Member {
                output,
                dims,
                capacity,
                flow,
            });
        }
        partners::check(&members)?;
        Ok(batch)
    }

    /// The capacity of a selection whose padding reaches the graph outputs `outputs`: the one
    /// `--capacity NAME=N` gives them, else `--capacity N`. Outputs of one selection given
    /// different capacities are an error naming both (they share its rows).
    pub(super) fn capacity_for(
        &self,
        outputs: &[(String, usize)],
    ) -> Result<Option<i64>, StaticError> {
        let mut named = outputs
            .iter()
            .filter_map(|(name, _)| Some((name, *self.output_capacities.get(name)?)));
        let Some((first, capacity)) = named.next() else {
            return Ok(self.capacity);
        };
        if let Some((other, c)) = named.find(|&(_, c)| c != capacity) {
            return Err(StaticError::Refused(format!(
                "the outputs '{first}' and '{other}' come from one selection, but get the capacities {capacity} and {c}; give them one"
            )));
        }
        Ok(Some(capacity))
    }
}

/// The mask's sizes and element type, where its padding flows, and the sinks there.
type Plan = (Vec<i64>, i32, padding::Flow, sinks::Sinks);

/// A NonZero's mask and output, and its plan.
type Planned = (String, String, Plan);

/// What the compaction of NonZero(`mask`) -> `output` needs: the mask's sizes and type, where
/// its padding flows, and the sinks there; or why it stays dynamic.
fn plan(view: &View, scope: &Scope, mask: &str, output: &str) -> Result<Plan, (Reason, String)> {
    let info = view.shapes.get(mask);
    let dims = static_dims(view.shapes, mask).ok_or((
        Reason::ShapeNotFixed,
        format!("the shape of {mask} is not fixed: {}", info.shape_text()),
    ))?;
    if dims.is_empty() {
        return Err((Reason::ScalarInput, format!("{mask} is a scalar")));
    }
    let mask_type = info.elem_type.ok_or((
        Reason::ShapeNotFixed,
        format!("the type of {mask} is unknown"),
    ))?;
    let flow = padding::follow(view, output, &dims).map_err(|why| (Reason::PaddingUnsafe, why))?;
    // A body's output keeps its length: the If or Loop around it has no `_count`.
    if let (Some((name, _)), true) = (flow.outputs.first(), scope.depth > 0 && !scope.pad_outputs) {
        return Err((
            Reason::PaddingUnsafe,
            format!(
                "the padded '{name}' is an output of {}, whose length would change",
                scope.label
            ),
        ));
    }
    let sinks = sinks::plan(view, &flow)?;
    Ok((dims, mask_type, flow, sinks))
}

/// What compacting a NonZero as `flow` says may change: its mask and output, every tensor it
/// pads, and the outputs of their readers, whose nodes the sinks rewrite (but a Concat that
/// rejoins lists: each list's cut is its own input there). The other inputs of those readers
/// are read, not changed.
fn region(view: &View, mask: &str, output: &str, flow: &padding::Flow) -> HashSet<String> {
    let mut touched: HashSet<String> = flow.padded.clone();
    touched.extend([mask.to_string(), output.to_string()]);
    for name in &flow.padded {
        for &(r, _) in view.index.readers_of(name) {
            let reader = &view.graph.node[r];
            let rejoins = flow
                .rejoined
                .iter()
                .any(|(concat, _, _)| reader.output.first() == Some(concat));
            if !rejoins {
                touched.extend(reader.output.iter().filter(|n| !n.is_empty()).cloned());
            }
        }
    }
    touched
}

/// Refuses a compaction whose padded tensors (the coordinates, each gather of them) would hold
/// more than [`MAX_PADDED_ELEMENTS`], naming the NonZero, the tensor and its size.
fn padded_within_limit(
    node: &str,
    mask: &str,
    dims: &[i64],
    capacity: Option<i64>,
    gathers: &[(String, compact::GatherSizes)],
) -> Result<(), StaticError> {
    let shape = crate::summary::dims_text;
    let numel = checked_numel(dims).ok_or_else(|| {
        StaticError::Refused(format!(
            "NonZero {node}: its input '{mask}' of shape {} has more elements than an int64 counts",
            shape(dims)
        ))
    })?;
    let rows = capacity.map_or(numel, |c| c.min(numel));
    let rank = dims.len() as i64;
    let mut padded = vec![(
        format!("its coordinates [{rank}, {rows}]"),
        rows.checked_mul(rank),
    )];
    for (out, sizes) in gathers {
        // The selection's axis is the one size not fixed; the others make a row.
        let open = sizes.out_dims.iter().filter(|&&d| d < 0).count();
        let row = sizes
            .out_dims
            .iter()
            .filter(|&&d| d >= 0)
            .try_fold(1i64, |n, &d| n.checked_mul(d));
        if let (1, Some(row)) = (open, row) {
            padded.push((
                format!("'{out}' ({rows} rows of {row})"),
                rows.checked_mul(row),
            ));
        }
    }
    for (what, elements) in padded {
        if elements.is_none_or(|n| n > MAX_PADDED_ELEMENTS) {
            let size = elements.map_or("more than an int64 counts".to_string(), |n| n.to_string());
            return Err(StaticError::Refused(format!(
                "NonZero {node} of '{mask}' {}: padded to {rows} rows, {what} would hold {size} elements, past static mode's limit of 2^31 (docs/static.md, \"Capacity\"); --capacity N keeps the first N rows",
                shape(dims)
            )));
        }
    }
    Ok(())
}
