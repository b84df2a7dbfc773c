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
/// its initial value's element type); each scan output `[trips, ..]` where the Loop runs a
/// known number of times ([`exact_trips`]) and the body's value for it has known sizes.
pub fn loop_outputs(node: &NodeProto, outer: &ShapeTable) -> Vec<Option<TensorInfo>> {
    let Some((body, inputs)) = loop_body(node, outer) else {
        return vec![];
    };
    let BodyInputs::Loop(kept) = &inputs else {
        return vec![];
    };
    let mut outputs: Vec<Option<TensorInfo>> = kept
        .iter()
        .enumerate()
        .map(|(k, dims)| {
            let initial = node.input.get(2 + k).filter(|n| !n.is_empty())?;
            let elem_type = outer.info(initial)?.elem_type;
            Some(TensorInfo {
                elem_type,
                dims: dims.clone(),
            })
        })
        .collect();
    let Some(trips) = exact_trips(node, outer) else {
        return outputs;
    };
    let table = ShapeTable::for_graph(body, &GraphIndex::new(body), Some(outer), &inputs);
    for scanned in body.output.iter().skip(1 + kept.len()) {
        let info = scanned.name.as_deref().and_then(|n| table.info(n));
        outputs.push(info.and_then(|info| {
            let dims = info.dims.as_ref()?;
            Some(TensorInfo {
                elem_type: info.elem_type,
                dims: Some(
                    std::iter::once(Dim::from(trips))
                        .chain(dims.iter().cloned())
                        .collect(),
                ),
            })
        }));
    }
    outputs
}

/// How many times a Loop runs, where that is known: its trip count a constant, its condition
/// absent or a constant true, and its body's condition output always true (the body's own
/// condition input or a constant true, directly or through Identities): no early exit.
pub fn exact_trips(node: &NodeProto, outer: &ShapeTable) -> Option<i64> {
    let is_true = |table: &ShapeTable, name: &str| {
        table
            .constant(name)
            .is_some_and(|c| c.data.as_f64() == [1.0])
    };
    let trips = outer.constant(node.input.first()?)?;
    let [trips] = trips.data.as_f64()[..] else {
        return None;
    };
    if trips < 0.0 || trips.fract() != 0.0 {
        return None;
    }
    let condition = node.input.get(1).map_or("", String::as_str);
    if !(condition.is_empty() || is_true(outer, condition)) {
        return None;
    }
    let (body, inputs) = loop_body(node, outer)?;
    let index = GraphIndex::new(body);
    let table = ShapeTable::for_graph(body, &index, Some(outer), &inputs);
    let own_condition = body.input.get(1)?.name.as_deref()?;
    let mut name = body.output.first()?.name.as_deref()?;
    while let Some(identity) = index
        .producer_of(body, name)
        .filter(|n| is_onnx_op(n, "Identity"))
    {
        name = identity.input.first()?;
    }
    (name == own_condition || is_true(&table, name)).then_some(trips as i64)
}
