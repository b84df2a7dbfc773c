//! Concats of padded tensors along another axis (columns put side by side: dynamo's
//! `x[torch.where(c)]`, an NMS's batch and class columns beside its remapped boxes). The output
//! is padded alike only when every input is padded by the same selection, so a Concat waits
//! until all its inputs have arrived; it holds coordinates only if they all do.
//!
//! Along the padded axis (a detector's levels, each its own selection, appended), the rows are
//! rejoined instead ([`crate::rejoin`]): each input is cut to its count there, and once every
//! input is, the Concat becomes a selection of the valid rows of the padded inputs joined.

use super::Padded;
use crate::graph::{describe, int_attr};
use nonzero_proto::onnx::NodeProto;
use std::collections::{BTreeMap, HashMap};

struct Join {
    node: String,
    inputs: Vec<String>,
    /// Each input that arrived: (coordinates, dirty).
    arrived: HashMap<String, (bool, bool)>,
    count: Vec<super::CountStep>,
    axis: usize,
    rank: usize,
}

/// The Concats reached so far, by output name.
#[derive(Default)]
pub(super) struct Joins {
    waiting: BTreeMap<String, Join>,
    /// (Concat output, input, axis) of each padded input appended along its padded axis.
    rejoined: Vec<(String, String, usize)>,
}

impl Joins {
    /// `t` reaches `node`, a Concat; `false` when it joins along the padded axis (or is
    /// malformed), which is not this rule.
    pub fn arrive(&mut self, node: &NodeProto, t: &Padded) -> bool {
        let Ok(Some(axis)) = int_attr(node, "axis") else {
            return false;
        };
        let rank = t.rank as i64;
        let axis = if axis < 0 { axis + rank } else { axis };
        if axis < 0 || axis >= rank || axis as usize == t.axis || node.output.len() != 1 {
            return false;
        }
        let join = self
            .waiting
            .entry(node.output[0].clone())
            .or_insert_with(|| Join {
                node: describe(node),
                inputs: node.input.clone(),
                arrived: HashMap::new(),
                axis: t.axis,
                rank: t.rank,
                count: t.count.clone(),
            });
        if join.axis != t.axis || join.rank != t.rank || join.count != t.count {
            return false;
        }
        join.arrived.insert(t.name.clone(), (t.coords, t.dirty));
        true
    }

    /// The outputs of the Concats whose inputs have all arrived, taken out of the waiting.
    pub fn ready(&mut self) -> Vec<Padded> {
        let done: Vec<String> = self
            .waiting
            .iter()
            .filter(|(_, j)| j.inputs.iter().all(|i| j.arrived.contains_key(i)))
            .map(|(name, _)| name.clone())
            .collect();
        done.into_iter()
            .map(|name| {
                let join = self.waiting.remove(&name).expect("listed above");
                let coords = join.arrived.values().all(|&(c, _)| c);
                let mixed = !coords && join.arrived.values().any(|&(c, _)| c);
                let dirty = mixed || join.arrived.values().any(|&(_, d)| d);
                Padded {
                    name,
                    axis: join.axis,
                    rank: join.rank,
                    coords,
                    spread: false,
                    dirty,
                    index: None,
                    count: join.count,
                }
            })
            .collect()
    }

    /// `t` reaches `node`, a Concat along `t`'s padded axis: its rows are rejoined there.
    pub fn rejoin(&mut self, node: &NodeProto, t: &Padded) -> bool {
        let Ok(Some(axis)) = int_attr(node, "axis") else {
            return false;
        };
        let axis = if axis < 0 { axis + t.rank as i64 } else { axis };
        if axis != t.axis as i64 || node.output.len() != 1 || node.input.len() < 2 {
            return false;
        }
        self.rejoined
            .push((node.output[0].clone(), t.name.clone(), t.axis));
        true
    }

    /// The rejoined Concat inputs into `flow`; `Err` names a Concat that joins a tensor this
    /// selection does not pad along another axis.
    pub fn finish(&mut self, flow: &mut super::Flow) -> Result<(), String> {
        flow.rejoined = std::mem::take(&mut self.rejoined);
        let Some(join) = self.waiting.values().next() else {
            return Ok(());
        };
        let missing = join
            .inputs
            .iter()
            .find(|i| !join.arrived.contains_key(*i))
            .cloned()
            .unwrap_or_default();
        Err(format!(
            "Concat {} joins {missing}, which is not padded by this selection (not padding-safe)",
            join.node
        ))
    }
}
