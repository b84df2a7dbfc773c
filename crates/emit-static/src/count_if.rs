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
use nonzero_proto::onnx::{GraphProto, NodeProto};

/// How many steps may sit between a tensor and what it is read from.
const MAX_STEPS: usize = 6;

/// The Ifs of `view`'s graph in the form above, by position.
pub fn found(view: &View) -> Vec<usize> {
    (0..view.graph.node.len())
        .filter(|&at| decided_by_count(view, &view.graph.node[at]))
        .collect()
}

fn decided_by_count(view: &View, node: &NodeProto) -> bool {
    if !is_onnx_op(node, "If") || node.input.len() != 1 {
        return false;
    }
    let branch = |name: &str| {
        node.attribute
            .iter()
            .find(|a| a.name.as_deref() == Some(name))
            .and_then(|a| a.g.as_ref())
    };
    let (Some(then_branch), Some(else_branch)) = (branch("then_branch"), branch("else_branch"))
    else {
        return false;
    };
    size_is_zero(view, &node.input[0])
        && then_branch.output.len() == node.output.len()
        && else_branch.output.len() == node.output.len()
        && then_branch
            .output
            .iter()
            .all(|o| empty_constant(then_branch, o.name.as_deref().unwrap_or("")))
        && else_branch
            .output
            .iter()
            .all(|o| read_from_nms(else_branch, o.name.as_deref().unwrap_or("")))
}

/// `Size(X) == 0` or `ReduceProd(Shape(X)) == 0`, through Cast and Identity.
fn size_is_zero(view: &View, cond: &str) -> bool {
    let mut at = cond.to_string();
    for _ in 0..MAX_STEPS {
        let Some(node) = view.producer(&at) else {
            return false;
        };
        match node.op_type.as_deref() {
            Some("Cast" | "Identity") if !node.input.is_empty() => at = node.input[0].clone(),
            Some("Equal") if node.input.len() == 2 => {
                let zero = |i: usize| view.const_ints(&node.input[i]).is_some_and(|v| v == [0]);
                let size = |i: usize| size_of(view, &node.input[i]);
                return (zero(1) && size(0)) || (zero(0) && size(1));
            }
            _ => return false,
        }
    }
    false
}

fn size_of(view: &View, name: &str) -> bool {
    let Some(node) = view.producer(name) else {
        return false;
    };
    match node.op_type.as_deref() {
        Some("Size") => true,
        Some("Cast" | "Identity") => node.input.first().is_some_and(|i| size_of(view, i)),
        Some("ReduceProd") => node
            .input
            .first()
            .and_then(|i| view.producer(i))
            .is_some_and(|shape| is_onnx_op(shape, "Shape") && node.input.len() == 1),
        _ => false,
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

/// `name` is read from a NonMaxSuppression of `branch` through column and shape steps.
fn read_from_nms(branch: &GraphProto, name: &str) -> bool {
    let mut at = name.to_string();
    for _ in 0..=MAX_STEPS {
        let Some(node) = branch
            .node
            .iter()
            .find(|n| n.output.first().map(String::as_str) == Some(at.as_str()))
        else {
            return false;
        };
        match node.op_type.as_deref() {
            Some("NonMaxSuppression") => return true,
            Some(
                "Gather" | "Squeeze" | "Unsqueeze" | "Slice" | "Reshape" | "Cast" | "Identity",
            ) if !node.input.is_empty() => at = node.input[0].clone(),
            _ => return false,
        }
    }
    false
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
