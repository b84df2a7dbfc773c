//! An If decided by a count (issue 37, item 1): torchvision's `batched_nms` returns an empty
//! list when `boxes.numel() == 0`, and else what NonMaxSuppression keeps. Once the boxes are a
//! padded list, their size is the capacity, not the count, so the condition cannot be folded.
//! But NMS over a padded list runs on its valid rows only ([`crate::sinks`]): over zero of them
//! it keeps nothing, which is the then branch's empty list. So the If becomes its else branch,
//! and the else branch's NMS a fixed-shape one in turn ([`crate::nms`]).
//!
//! The form proven: a condition `Size(X) == 0` or `ReduceProd(Shape(X)) == 0` (through Cast and
//! Identity), a then branch whose outputs are constants with no element, and an else branch
//! whose outputs are each read from a NonMaxSuppression of that branch (a column, squeezed,
//! sliced, cast). Whether X is padded, and NMS's boxes and scores padded alike, is the flow's
//! to prove: the capacity pass inlines these Ifs only on a trial copy of the graph, and keeps
//! it only where the selection's padding is then proven safe ([`crate::capacity`]).

use crate::branches;
use crate::graph::{describe, is_onnx_op};
use crate::trace::View;
use nonzero_proto::onnx::GraphProto;

/// How many steps may sit between a tensor and what it is read from.
const MAX_STEPS: usize = 6;

/// An If in the form above.
pub struct CountIf {
    /// Its position in the graph.
    pub at: usize,
    /// The X whose size it tests: taking the else branch is exact only where X is padded by
    /// the list that the else branch's NMS reads.
    pub tested: String,
    /// The else branch's NonMaxSuppression nodes, by output.
    pub nms: Vec<String>,
}

impl CountIf {
    /// True when `flow` (the list's, with the else branch taken) pads X and scores the
    /// padding of every NMS here out: over zero valid rows each keeps nothing, as the then
    /// branch.
    pub fn decided_by(&self, flow: &crate::padding::Flow) -> bool {
        flow.padded.contains(&self.tested) && self.nms.iter().all(|n| flow.nms.contains(n))
    }
}

/// The Ifs of `view`'s graph in the form above.
pub fn found(view: &View) -> Vec<CountIf> {
    if !crate::versions::is_known("If", view.shapes.opset()) {
        return vec![];
    }
    (0..view.graph.node.len())
        .filter_map(|at| decided_by_count(view, at))
        .collect()
}

fn decided_by_count(view: &View, at: usize) -> Option<CountIf> {
    let node = &view.graph.node[at];
    if !is_onnx_op(node, "If") || node.input.len() != 1 {
        return None;
    }
    let branch = |name: &str| {
        node.attribute
            .iter()
            .find(|a| a.name.as_deref() == Some(name))
            .and_then(|a| a.g.as_ref())
    };
    let (then_branch, else_branch) = (branch("then_branch")?, branch("else_branch")?);
    let sized = |g: &GraphProto| g.output.len() == node.output.len();
    let out_name = |o: &nonzero_proto::onnx::ValueInfoProto| o.name.clone().unwrap_or_default();
    if !sized(then_branch)
        || !sized(else_branch)
        || !then_branch
            .output
            .iter()
            .all(|o| empty_constant(then_branch, &out_name(o)))
    {
        return None;
    }
    let nms = else_branch
        .output
        .iter()
        .map(|o| read_from_nms(else_branch, &out_name(o)))
        .collect::<Option<Vec<_>>>()?;
    Some(CountIf {
        at,
        tested: size_is_zero(view, &node.input[0])?,
        nms,
    })
}

/// The X of `Size(X) == 0` or `ReduceProd(Shape(X)) == 0`, through Cast and Identity.
fn size_is_zero(view: &View, cond: &str) -> Option<String> {
    let mut at = cond.to_string();
    for _ in 0..MAX_STEPS {
        let node = view.producer(&at)?;
        match node.op_type.as_deref() {
            Some("Cast" | "Identity") if !node.input.is_empty() => at = node.input[0].clone(),
            Some("Equal") if node.input.len() == 2 => {
                let zero = |i: usize| view.const_ints(&node.input[i]).is_some_and(|v| v == [0]);
                let size = |i: usize| size_of(view, &node.input[i]);
                return if zero(1) {
                    size(0)
                } else if zero(0) {
                    size(1)
                } else {
                    None
                };
            }
            _ => return None,
        }
    }
    None
}

/// The X of `Size(X)` or `ReduceProd(Shape(X))`, through Cast and Identity.
fn size_of(view: &View, name: &str) -> Option<String> {
    let node = view.producer(name)?;
    let first = node.input.first()?;
    match node.op_type.as_deref() {
        Some("Size") => Some(first.clone()),
        Some("Cast" | "Identity") => size_of(view, first),
        Some("ReduceProd") if node.input.len() == 1 => {
            let shape = view.producer(first)?;
            is_onnx_op(shape, "Shape")
                .then(|| shape.input.first().cloned())
                .flatten()
        }
        _ => None,
    }
}

/// A Constant (or initializer) of the branch with no element.
fn empty_constant(branch: &GraphProto, name: &str) -> bool {
    let empty = |t: &nonzero_proto::onnx::TensorProto| t.dims.contains(&0);
    if let Some(t) = branch
        .initializer
        .iter()
        .find(|t| t.name.as_deref() == Some(name))
    {
        return empty(t);
    }
    branch.node.iter().any(|n| {
        n.output.first().map(String::as_str) == Some(name)
            && is_onnx_op(n, "Constant")
            && n.attribute
                .iter()
                .any(|a| a.name.as_deref() == Some("value") && a.t.as_ref().is_some_and(empty))
    })
}

/// The NonMaxSuppression of `branch` (by output) that `name` is read from through column and
/// shape steps.
fn read_from_nms(branch: &GraphProto, name: &str) -> Option<String> {
    let mut at = name.to_string();
    for _ in 0..=MAX_STEPS {
        let node = branch
            .node
            .iter()
            .find(|n| n.output.first().map(String::as_str) == Some(at.as_str()))?;
        match node.op_type.as_deref() {
            Some("NonMaxSuppression") => return Some(at),
            Some(
                "Gather" | "Squeeze" | "Unsqueeze" | "Slice" | "Reshape" | "Cast" | "Identity",
            ) if !node.input.is_empty() => at = node.input[0].clone(),
            _ => return None,
        }
    }
    None
}

/// Replaces each If at `ifs` (ascending) by its else branch, and removes what computed only
/// their conditions; the report lines.
pub fn take_else(graph: &mut GraphProto, ifs: &[usize]) -> Vec<String> {
    let mut lines = vec![];
    let mut conditions = std::collections::HashSet::new();
    for &at in ifs.iter().rev() {
        let node = &graph.node[at];
        let Some(branch) = node
            .attribute
            .iter()
            .find(|a| a.name.as_deref() == Some("else_branch"))
            .and_then(|a| a.g.clone())
        else {
            continue;
        };
        if branches::shadows(graph, at, &branch) {
            continue;
        }
        let node = branches::take(graph, at, "else_branch", branch);
        conditions.extend(node.input.iter().cloned());
        lines.push(format!(
            "count-decided If {}: its size test reads a padded list, and its else branch keeps what NMS keeps of the list's valid rows (nothing of none): the else branch takes its place",
            describe(&node)
        ));
    }
    nonzero_rewrite_graph::indexed::remove_dead(graph, conditions);
    lines
}
