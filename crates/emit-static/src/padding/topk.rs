//! TopK on a count (issue 37, item 3): `x.topk(min(K, len(x)))` over padded rows, as
//! torchvision's `_topk_min` writes it for each detector level. The padding is read as the value
//! that sorts last (the sink, [`crate::sinks`]), so the rows TopK picks first are the real ones,
//! the lower index first among equal values: a real -inf before the padding's. k is then fixed,
//! and the rows past the run-time k are the new padding ([`CountStep::TopK`]).
//!
//! k is anything that is at most the count at run time (ONNX Runtime fails on a larger k); the
//! fixed k is the capacity, or a constant bound where k is `Min` or `ReduceMin` of one. Its
//! indices point into the padded rows: a Gather of rows padded alike at them reads real rows
//! first ([`indices_gather`]), checked at the end of the flow ([`super::Flow::check_topk`]).

use super::{CountStep, Padded};
use crate::graph::int_attr;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// A visit of `node` reading `t` at `slot`: `Some(true)` where it is a TopK taking the padding
/// or a Gather at a TopK's indices (outputs pushed to `todo`, the sink to `flow`, the read to
/// `reads`), `Some(false)` for a TopK that does not, `None` for any other node.
pub(super) fn visit(
    view: &View,
    node: &NodeProto,
    slot: usize,
    t: &Padded,
    flow: &mut super::Flow,
    reads: &mut Vec<IndicesGather>,
    todo: &mut Vec<Padded>,
) -> Option<bool> {
    Visit { flow, reads, todo }.visit(view, node, slot, t)
}

struct Visit<'a> {
    flow: &'a mut super::Flow,
    reads: &'a mut Vec<IndicesGather>,
    todo: &'a mut Vec<Padded>,
}

impl Visit<'_> {
    fn visit(&mut self, view: &View, node: &NodeProto, slot: usize, t: &Padded) -> Option<bool> {
        if view.is_op(node, "TopK") {
            let Some((sink, outputs)) = reached(view, node, slot, t) else {
                return Some(false);
            };
            self.flow.topks.push(sink);
            self.push(outputs);
            return Some(true);
        }
        if !view.is_op(node, "Gather") {
            return None;
        }
        if let Some((read, next)) = indices_gather(view, node, slot, t) {
            self.reads.push(read);
            self.push(next);
            return Some(true);
        }
        let next = masked_index_gather(view, node, slot, t)?;
        let info = view.shapes.get(&t.name);
        let dims = info.dims.unwrap_or_default();
        self.flow.masked_indices.push(super::MaskedIndex {
            output: node.output[0].clone(),
            indices: t.name.clone(),
            axis: t.axis,
            dims: dims.iter().map(|d| d.as_static().unwrap_or(-1)).collect(),
            elem_type: info.elem_type.unwrap_or(0),
        });
        self.push([next]);
        Some(true)
    }

    /// The outputs' counts are recorded here, not only where a reader sees them: a graph
    /// output read by nothing still needs its own.
    fn push(&mut self, outputs: impl IntoIterator<Item = Padded>) {
        for p in outputs {
            self.flow.counts.insert(p.name.clone(), p.count.clone());
            self.todo.push(p);
        }
    }
}

/// How many steps from k to its bound are followed.
const MAX_STEPS: usize = 8;

/// The TopK `node` reading the padded `t` at `slot`: its sink and its two outputs, padded along
/// the same axis with the run-time k as their count; `None` where it does not take padding.
pub(super) fn reached(
    view: &View,
    node: &NodeProto,
    slot: usize,
    t: &Padded,
) -> Option<(super::flow::TopK, [Padded; 2])> {
    if slot != 0 || t.coords || node.input.len() != 2 || node.output.len() != 2 {
        return None;
    }
    let axis = int_attr(node, "axis").ok().flatten().unwrap_or(-1);
    let axis = if axis < 0 { axis + t.rank as i64 } else { axis };
    if axis != t.axis as i64 {
        return None;
    }
    let bound = bound(view, &node.input[1]).map(|b| b.max(0));
    let mut count = t.count.clone();
    count.push(CountStep::TopK(node.input[1].clone(), bound));
    let row = |name: &String| Padded {
        name: name.clone(),
        coords: false,
        spread: false,
        // Past the run-time k the rows are whatever TopK picked next: re-padded at outputs.
        dirty: true,
        index: None,
        count: count.clone(),
        ..t.clone()
    };
    let sink = super::flow::TopK {
        output: node.output[0].clone(),
        bound,
        axis: t.axis,
        input_count: t.count.clone(),
    };
    Some((sink, [row(&node.output[0]), row(&node.output[1])]))
}

/// A constant that the int64 `k` cannot exceed: `Min` or `ReduceMin` (of a `Concat`) with a
/// constant among its inputs, through Reshape, Squeeze, Unsqueeze and Cast.
fn bound(view: &View, k: &str) -> Option<i64> {
    let mut at = k.to_string();
    for _ in 0..MAX_STEPS {
        if let Some(v) = view.const_ints(&at) {
            return v.into_iter().min();
        }
        let node = view.producer(&at)?;
        let op = node.op_type.as_deref()?;
        if !view.is_op(node, op) || node.input.is_empty() {
            return None;
        }
        let constants = |inputs: &[String]| -> Option<i64> {
            inputs
                .iter()
                .filter_map(|i| view.const_ints(i))
                .flatten()
                .min()
        };
        match op {
            "Reshape" | "Squeeze" | "Unsqueeze" | "Cast" | "Identity" => {}
            "Min" => return constants(&node.input),
            "ReduceMin" => {
                let concat = view.producer(&node.input[0])?;
                view.is_op(concat, "Concat").then_some(())?;
                return constants(&concat.input);
            }
            _ => return None,
        }
        at = node.input[0].clone();
    }
    None
}

/// A Gather along the padded axis at the indices output of a TopK (through Cast and Identity):
/// that TopK's values output, for the check that it reads rows padded alike.
pub(super) fn indices_of(view: &View, indices: &str) -> Option<String> {
    let mut at = indices.to_string();
    for _ in 0..MAX_STEPS {
        let node = view.producer(&at)?;
        let op = node.op_type.as_deref()?;
        if !view.is_op(node, op) {
            return None;
        }
        match op {
            "TopK" if node.output.get(1) == Some(&at) => return node.output.first().cloned(),
            "Cast" | "Identity" if !node.input.is_empty() => at = node.input[0].clone(),
            _ => return None,
        }
    }
    None
}

/// A Gather of padded rows at a TopK's indices: the data's count steps (rows padded alike as
/// the TopK's input), its TopK, and the Gather's output.
#[derive(Debug, Clone)]
pub(super) struct IndicesGather {
    pub output: String,
    pub topk: String,
    pub data_count: Vec<CountStep>,
    pub slot: usize,
}

/// The Gather `node` reading the padded `t` at `slot` as data (along its padded axis) or as
/// the indices from a TopK; the output (padded like the indices) is pushed by the indices'
/// visit only.
pub(super) fn indices_gather(
    view: &View,
    node: &NodeProto,
    slot: usize,
    t: &Padded,
) -> Option<(IndicesGather, Option<Padded>)> {
    if node.input.len() != 2 || node.output.len() != 1 {
        return None;
    }
    let topk = indices_of(view, &node.input[1])?;
    let axis = int_attr(node, "axis").ok().flatten().unwrap_or(0);
    let rank = view.shapes.get(&node.input[0]).rank()?;
    let axis = if axis < 0 { axis + rank as i64 } else { axis };
    let read = IndicesGather {
        output: node.output[0].clone(),
        topk,
        data_count: vec![],
        slot,
    };
    match slot {
        // Data: rows of the selection, gathered along the padded axis.
        0 if axis == t.axis as i64 => Some((
            IndicesGather {
                data_count: t.count.clone(),
                ..read
            },
            None,
        )),
        // Indices: 1-D, the rows gathered along axis 0 of rank-1 data (a column) or of rows.
        1 if t.rank == 1 && axis == 0 => {
            let out_rank = view.shapes.get(&node.output[0]).rank()?;
            let next = Padded {
                name: node.output[0].clone(),
                axis: 0,
                rank: out_rank,
                coords: false,
                spread: false,
                dirty: true,
                index: None,
                count: t.count.clone(),
            };
            Some((read, Some(next)))
        }
        _ => None,
    }
}

/// A Gather of data of fixed sizes at padded integer values that are not coordinates (a
/// TopK's picks divided into anchor indices): the padding may hold any value, so it is read as
/// index 0 ([`crate::index_gather`]), and the output is padded along the indices' axis.
fn masked_index_gather(view: &View, node: &NodeProto, slot: usize, t: &Padded) -> Option<Padded> {
    if slot != 1 || t.coords || t.index.is_some() || node.input.len() != 2 || node.output.len() != 1
    {
        return None;
    }
    let integer = matches!(
        view.shapes.get(&t.name).elem_type,
        Some(e) if e == nonzero_proto::onnx::tensor_proto::DataType::Int64 as i32
            || e == nonzero_proto::onnx::tensor_proto::DataType::Int32 as i32
    );
    let data = super::static_dims(view.shapes, &node.input[0])?;
    let axis = int_attr(node, "axis").ok().flatten().unwrap_or(0);
    let axis = crate::infer::axis_in(axis, data.len())?;
    if !integer || data[axis] < 1 {
        return None;
    }
    Some(Padded {
        name: node.output[0].clone(),
        axis: axis + t.axis,
        rank: data.len() - 1 + t.rank,
        coords: false,
        spread: false,
        dirty: true,
        index: None,
        count: t.count.clone(),
    })
}

/// True when `list` (a ReduceMin's input) is a Concat of sizes with every other part a constant:
/// the minimum of K and the size.
pub(super) fn minimum_of_list(view: &View, list: &str) -> bool {
    view.producer(list).is_some_and(|concat| {
        view.is_op(concat, "Concat")
            && concat
                .input
                .iter()
                .filter(|i| view.const_ints(i).is_none())
                .count()
                == 1
    })
}

/// `k`, a minimum of the padded axis's size and constants, used only as the k of TopKs of data
/// padded alike (through Reshape, Squeeze, Unsqueeze and Cast).
pub(super) fn used_as_k(view: &View, k: &str, count: &crate::infer::Dim, depth: usize) -> bool {
    if depth > super::shapes::MAX_STEPS {
        return false;
    }
    let readers = view.index.readers_of(k);
    !readers.is_empty()
        && readers.iter().all(|&(r, slot)| {
            let node = &view.graph.node[r];
            let op = node.op_type.as_deref().unwrap_or("");
            if !view.is_op(node, op) {
                return false;
            }
            match op {
                "TopK" => {
                    let dims = view.shapes.get(&node.input[0]).dims;
                    slot == 1 && dims.is_some_and(|d| d.contains(count))
                }
                "Reshape" | "Squeeze" | "Unsqueeze" | "Cast" | "Identity" => {
                    slot == 0 && used_as_k(view, &node.output[0], count, depth + 1)
                }
                _ => false,
            }
        })
}
