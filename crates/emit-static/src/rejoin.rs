//! A Concat along the padded axis of lists from different selections (a detector's levels or
//! classes, each its own `scores > t` selection, appended; issue 37): its rows are each input's
//! valid rows in order, which is a selection in turn. Each selection's flow cuts its input there
//! to its count (`Slice(p, 0, count)`: [`StaticPass::cut_rejoined`], exact and still dynamic).
//! Once every input of the Concat is such a cut (or has a fixed size), the Concat becomes
//! `Gather(Concat(p_i), NonZero(Concat(valid_i)))` ([`StaticPass::rejoin`]): a NonZero over a
//! mask of fixed size, which the capacity pass then compacts like any other. Concats of the same
//! lists (a detector's boxes, scores and labels) share that NonZero, so that one selection
//! reaches them all, as the detector's NMS needs.

use crate::compact::Compacted;
use crate::emit::{int_attr as attr, ints_attr, Emitter};
use crate::graph::int_attr;
use crate::graph::{describe, is_onnx_op};
use crate::padding::Flow;
use crate::scope::Scope;
use crate::{replace, static_dims, StaticPass};
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_graph::indexed::remove_dead;
use std::collections::{BTreeMap, HashSet};

impl StaticPass<'_> {
    /// Cuts each input of `flow` that a Concat appends along its padded axis to its count.
    pub(super) fn cut_rejoined(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        flow: &Flow,
        compacted: &Compacted,
    ) {
        let mut done = HashSet::new();
        for (concat, input, axis) in &flow.rejoined {
            if !done.insert((concat, input)) {
                continue;
            }
            let Some(at) = crate::graph::writer_of(graph, concat) else {
                continue;
            };
            let mut e = Emitter::new(graph, scope, &format!("{input}/rejoin"));
            let steps = flow.counts.get(input);
            let list = compacted.derived(&mut e, steps);
            let (start, axes) = (e.ints(&[0]), e.ints(&[*axis as i64]));
            let end = e.reshape(&list.count, &[1]);
            let cut = e.op("Slice", &[input, &start, &end, &axes], vec![]);
            let inserted = e.insert(graph, at);
            for slot in graph.node[at + inserted].input.iter_mut() {
                if slot == input {
                    *slot = cut.clone();
                }
            }
            // The selection (its count tensor is its own) and the count's steps from it.
            let key = format!("{} {steps:?}", compacted.count);
            self.rejoined.insert(cut, key);
        }
    }

    /// Every Concat whose inputs are all cuts or of fixed sizes, as a selection of the valid
    /// rows of its padded inputs joined; the report's lines.
    pub(super) fn rejoin(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        shapes: &crate::infer::ShapeTable,
    ) -> Vec<String> {
        let candidate = |n: &nonzero_proto::onnx::NodeProto| {
            is_onnx_op(n, "Concat") && n.input.iter().any(|i| self.rejoined.contains_key(i))
        };
        if !graph.node.iter().any(candidate) {
            return vec![];
        }
        // Concats by their lists (axis, each input's selection and steps, or fixed part).
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for node in graph.node.iter().filter(|n| candidate(n)) {
            let Ok(Some(axis)) = int_attr(node, "axis") else {
                continue;
            };
            let mut key = format!("{axis}");
            let whole = node.input.iter().all(|input| {
                let part = match self.rejoined.get(input) {
                    Some(list) => Some(list.clone()),
                    None => static_dims(shapes, input).map(|d| format!("fixed {d:?}")),
                };
                part.map(|p| key.push_str(&format!("|{p}"))).is_some()
            });
            if whole && node.output.len() == 1 {
                groups.entry(key).or_default().push(node.output[0].clone());
            }
        }
        let mut lines = vec![];
        for concats in groups.into_values() {
            let Some(selection) = self.rejoin_group(graph, scope, shapes, &concats) else {
                continue;
            };
            lines.push(format!(
                "rejoined lists: {} appended the valid rows of their selections; now one selection, NonZero -> {selection}",
                concats.join(", ")
            ));
        }
        lines
    }

    /// The Concats `concats` (one list each: the same inputs' selections) as Gathers of their
    /// padded inputs at one NonZero of the valid rows; that NonZero's output.
    fn rejoin_group(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        shapes: &crate::infer::ShapeTable,
        concats: &[String],
    ) -> Option<String> {
        let first = concats
            .iter()
            .filter_map(|c| crate::graph::writer_of(graph, c))
            .min()?;
        let node = graph.node[first].clone();
        let axis = int_attr(&node, "axis").ok()??;
        let mut e = Emitter::new(graph, scope, &format!("{}/rejoin", describe(&node)));
        let mut valid = vec![];
        for input in &node.input {
            let (data, end) = self.cut_of(graph, input);
            let dims = static_dims(shapes, &data)?;
            let rank = dims.len() as i64;
            let at = usize::try_from(if axis < 0 { axis + rank } else { axis }).ok()?;
            let rows = e.range(*dims.get(at)?);
            valid.push(match end {
                Some(end) => {
                    let end = e.reshape(&end, &[]);
                    e.binary("Less", &rows, &end)
                }
                None => {
                    let zero = e.scalar(-1);
                    e.binary("Greater", &rows, &zero)
                }
            });
        }
        let valid: Vec<&str> = valid.iter().map(String::as_str).collect();
        let mask = e.concat(&valid, 0);
        let nonzero = e.op("NonZero", &[&mask], vec![]);
        let rows = e.op("Transpose", &[&nonzero], vec![ints_attr("perm", &[1, 0])]);
        let index = e.reshape(&rows, &[-1]);
        e.insert(graph, first);
        for concat in concats {
            let at = crate::graph::writer_of(graph, concat)?;
            let node = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&node));
            let parts: Vec<String> = node.input.iter().map(|i| self.cut_of(graph, i).0).collect();
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            let data = e.concat(&parts, axis);
            e.op("Gather", &[&data, &index], vec![attr("axis", axis)]);
            e.finish_as(concat);
            let inputs = replace(graph, at, e);
            for input in &inputs {
                self.rejoined.remove(input);
            }
            self.report.removed_nodes += remove_dead(graph, inputs);
        }
        Some(nonzero)
    }

    /// The padded list a Concat input was cut from and the cut's end, or the input itself (a
    /// part of fixed size) and `None`.
    fn cut_of(&self, graph: &GraphProto, input: &str) -> (String, Option<String>) {
        if self.rejoined.contains_key(input) {
            if let Some(slice) = crate::graph::writer_of(graph, input).map(|at| &graph.node[at]) {
                return (slice.input[0].clone(), Some(slice.input[2].clone()));
            }
        }
        (input.to_string(), None)
    }
}
