//! What a grid write's updates U hold ([`super::grid`]): a tensor of the grid's shape, one
//! value everywhere, or a Reshape to sizes the inference proves.

use super::dims_of;
use crate::trace::View;
use nonzero_rewrite_analysis::dims::static_dims;

/// How deep the update chain is followed.
const MAX_STEPS: usize = 12;

/// What U holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GridUpdates {
    /// U itself, the grid's shape then X's trailing sizes.
    Tensor(String),
    /// U is `Reshape(input, sizes computed from shapes)`, the sizes proven these (-1 for the one
    /// not fixed): the Reshape to constant sizes reads no Shape.
    Reshaped { input: String, shape: Vec<i64> },
    /// One value everywhere: this one-element tensor's.
    Value(String),
    /// One value everywhere: the `value` attribute of the ConstantOfShape writing this tensor
    /// (`full_like`, TorchScript's fill of the slice).
    Filled(String),
}

/// U when every element of it is one value: a one-element tensor of at most X's rank, or a
/// ConstantOfShape's fill, through Reshape, Expand and Identity.
pub(super) fn fill(
    view: &View,
    u: &str,
    data_type: i32,
    rank: usize,
    depth: usize,
) -> Option<GridUpdates> {
    if depth > MAX_STEPS || view.shapes.get(u).elem_type != Some(data_type) {
        return None;
    }
    if let Some(d) = static_dims(view.shapes, u) {
        if d.iter().all(|&n| n == 1) && d.len() <= rank {
            return Some(GridUpdates::Value(u.to_string()));
        }
    }
    let node = view.producer(u)?;
    let op = node.op_type.as_deref()?;
    if !view.is_op(node, op) || node.input.is_empty() {
        return None;
    }
    match op {
        "Reshape" | "Expand" | "Identity" => fill(view, &node.input[0], data_type, rank, depth + 1),
        "ConstantOfShape" => Some(GridUpdates::Filled(u.to_string())),
        _ => None,
    }
}

/// U as `Reshape(input, constant sizes)` where its Reshape's sizes are computed (TorchScript's
/// `Concat(Shape(grid part), Shape(X)[k:])`) and the inference proves them: at most one size
/// not fixed (written -1), every fixed one above 0 (so that -1 is decided).
pub(super) fn reshaped(view: &View, u: &str) -> Option<GridUpdates> {
    let node = view
        .producer(u)
        .filter(|n| view.is_op(n, "Reshape") && n.input.len() == 2)?;
    if view.const_ints(&node.input[1]).is_some() {
        return None;
    }
    let dims = dims_of(view.shapes, u)?;
    let open = dims.iter().filter(|d| d.as_static().is_none()).count();
    let shape: Vec<i64> = dims.iter().map(|d| d.as_static().unwrap_or(-1)).collect();
    (open <= 1 && shape.iter().all(|&d| d != 0)).then(|| GridUpdates::Reshaped {
        input: node.input[0].clone(),
        shape,
    })
}
