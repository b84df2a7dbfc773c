//! How far a body's own inputs can be trusted, and what a Loop's carried values keep.
//!
//! A Loop body's carried values may change shape between iterations, so their declared shapes
//! are not used. Where the body provably keeps a carried value's shape, it is known anyway, by
//! induction: assume every carried value has its initial value's shape, infer the body, and
//! keep each assumption the body's output for that value confirms; drop the others and repeat
//! until nothing changes (each round drops one at least, so there are at most as many rounds
//! as carried values).

use super::{Dim, ShapeTable, TensorInfo};
use crate::graph::{is_onnx_op, GraphIndex};
use nonzero_proto::onnx::{GraphProto, NodeProto};

/// How far a subgraph's own inputs can be trusted.
#[derive(Debug, Clone, PartialEq)]
pub enum BodyInputs {
    /// The main graph, If branches (no inputs), functions: as declared.
    Declared,
    /// Scan bodies: state values change shape between iterations, so their declared shapes
    /// are not used (element types are).
    ElementTypeOnly,
    /// Loop bodies: the iteration number and the condition are scalars by Loop's definition;
    /// each carried value has the sizes given where the body is proven to keep them.
    Loop(Vec<Option<Vec<Dim>>>),
}

impl BodyInputs {
    /// How far the inputs of `node`'s bodies are trusted, `outer` being the table of the graph
    /// that holds `node`.
    pub fn of(node: &NodeProto, outer: &ShapeTable) -> BodyInputs {
        if is_onnx_op(node, "Loop") {
            loop_body(node, outer).map_or(BodyInputs::Loop(vec![]), |(_, kept)| kept)
        } else if is_onnx_op(node, "Scan") {
            BodyInputs::ElementTypeOnly
        } else {
            BodyInputs::Declared
        }
    }

    /// The sizes to trust for the body input at `position`, declared as `declared`.
    pub(super) fn dims(&self, position: usize, declared: Option<Vec<Dim>>) -> Option<Vec<Dim>> {
        match self {
            BodyInputs::Declared => declared,
            BodyInputs::ElementTypeOnly => None,
            BodyInputs::Loop(_) if position < 2 => Some(vec![]),
            BodyInputs::Loop(carried) => carried.get(position - 2).cloned().flatten(),
        }
    }
}

/// A Loop's body, and its inputs with the carried shapes the body is proven to keep.
fn loop_body<'n>(node: &'n NodeProto, outer: &ShapeTable) -> Option<(&'n GraphProto, BodyInputs)> {
    if outer.proving_loop {
        // Inside another Loop's proof: each round there would repeat this one's rounds, and
        // nested Loops would multiply them. Visited itself, this Loop is proven then.
        return None;
    }
    let body = node
        .attribute
        .iter()
        .find(|a| a.name.as_deref() == Some("body"))?
        .g
        .as_ref()?;
    let carried = body.input.len().saturating_sub(2);
    let mut assumed: Vec<Option<Vec<Dim>>> = (0..carried)
        .map(|k| {
            let initial = node.input.get(2 + k).filter(|n| !n.is_empty())?;
            outer.info(initial)?.dims.clone()
        })
        .collect();
    let index = GraphIndex::new(body);
    let proving = ShapeTable {
        proving_loop: true,
        ..outer.clone()
    };
    loop {
        let inputs = BodyInputs::Loop(assumed.clone());
        let table = ShapeTable::for_graph(body, &index, Some(&proving), &inputs);
        let mut dropped = false;
        for (k, assumption) in assumed.iter_mut().enumerate() {
            let Some(dims) = assumption else { continue };
            let after = body
                .output
                .get(1 + k)
                .and_then(|o| table.info(o.name.as_deref()?))
                .and_then(|info| info.dims.as_ref());
            let kept = after.is_some_and(|after| {
                after.len() == dims.len() && after.iter().zip(dims.iter()).all(|(a, d)| a.same(d))
            });
            if !kept {
                *assumption = None;
                dropped = true;
            }
        }
        if !dropped {
            return Some((body, inputs));
        }
    }
}

/// A Loop's outputs: each carried value's final value, where the body keeps its shape (with
/// its initial value's element type); the scan outputs unknown.
pub fn loop_outputs(node: &NodeProto, outer: &ShapeTable) -> Vec<Option<TensorInfo>> {
    let Some((_, BodyInputs::Loop(kept))) = loop_body(node, outer) else {
        return vec![];
    };
    kept.into_iter()
        .enumerate()
        .map(|(k, dims)| {
            let initial = node.input.get(2 + k).filter(|n| !n.is_empty())?;
            let elem_type = outer.info(initial)?.elem_type;
            Some(TensorInfo { elem_type, dims })
        })
        .collect()
}
