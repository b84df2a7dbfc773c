//! A ScatterND at computed indices becomes a ScatterElements on axis 0 of the data as a matrix:
//! one row per index tuple of the indexed axes, the other axes flattened into its columns. Each
//! index tuple, made non-negative, is linearised to its row, repeated over the row's columns.
//!
//! ```text
//! ScatterND(data [d0..dr], indices [a.., k], updates [a.., dk..dr], reduction)
//!   -> Reshape(ScatterElements(Reshape(data, [d0*..*dk-1, M]), Expand(Reshape(row, [A, 1]), [A, M]),
//!                              Reshape(updates, [A, M]), axis=0, reduction), [d0..dr])
//! row = ReduceSum((indices + dims * (indices < 0)) * strides, last axis), M = dk*..*dr-1
//! ```
//!
//! Rank 2, because tf_converter reads a rank-3 ScatterElements' updates as channels-first and
//! moves their axes (Longformer's `[32, 4, 8]` keys failed its Concat of `[32, 8, 4]` indices).
//!
//! Why: onnx2tf 2.6.9's `tf_converter` fails on every ScatterND whose indices are not constant
//! (its ScatterND.py calls `.numpy()` on them: "'KerasTensor' object has no attribute 'numpy'",
//! Longformer's global keys, the padded index_add_ of a MoE router), and `flatbuffer_direct`
//! writes one with `reduction=add` as the custom op ONNX_SCATTERND, which LiteRT cannot run.
//! Both take ScatterElements, with `reduction` none or add (the compaction's own scatter).
//!
//! Exact: ScatterElements on axis 0 with each row's index repeated over its elements writes
//! the same elements as ScatterND, in the same order (ONNX orders both reductions by update),
//! and a negative index counts from the axis's end in both. onnx2tf does not normalise a
//! negative ScatterElements index, hence the `dims * (indices < 0)`.

use crate::emit::{int_attr, Emitter};
use crate::graph::{describe, is_onnx_op};
use crate::scope::Scope;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{GraphProto, NodeProto};
use nonzero_rewrite_analysis::dims::static_dims;
use std::collections::HashSet;

/// Rewrites every ScatterND at computed indices whose shapes are all fixed; returns how many.
pub fn as_scatter_elements(graph: &mut GraphProto, scope: &Scope) -> usize {
    let (_, shapes) = scope.shapes_of(graph);
    let constants: HashSet<String> = graph
        .initializer
        .iter()
        .filter_map(|t| t.name.clone())
        .chain(
            graph
                .node
                .iter()
                .filter(|n| is_onnx_op(n, "Constant"))
                .flat_map(|n| n.output.clone()),
        )
        .collect();
    let mut changed = 0;
    // From the last, so that the positions of the ones before stay valid.
    for at in (0..graph.node.len()).rev() {
        let node = &graph.node[at];
        let dims = |i: usize| static_dims(&shapes, node.input.get(i).filter(|n| !n.is_empty())?);
        let computed = is_onnx_op(node, "ScatterND")
            && node.input.len() == 3
            && node.output.len() == 1
            && !constants.contains(&node.input[1]);
        let Some(plan) = computed
            .then(|| Plan::of(dims(0)?, dims(1)?, dims(2)?))
            .flatten()
        else {
            continue;
        };
        let node = graph.node.remove(at);
        let mut e = Emitter::new(graph, scope, &format!("{}/rows", describe(&node)));
        write(&mut e, &node, &plan);
        e.finish_as(&node.output[0]);
        e.insert(graph, at);
        changed += 1;
    }
    changed
}

/// The fixed shapes of one ScatterND, checked against ONNX's rule for them.
struct Plan {
    data: Vec<i64>,
    /// Each index tuple's dims: the indices' own with the last (k) as 1.
    rows: Vec<i64>,
    updates: Vec<i64>,
    /// k: how many leading axes of the data an index tuple names.
    width: usize,
    /// A: how many index tuples (the product of the indices' dims but the last).
    tuples: i64,
}

impl Plan {
    fn of(data: Vec<i64>, indices: Vec<i64>, updates: Vec<i64>) -> Option<Plan> {
        let (&width, lead) = indices.split_last()?;
        let width = usize::try_from(width).ok()?;
        let fits = (1..=data.len()).contains(&width)
            && updates.len() == lead.len() + data.len() - width
            && updates[..lead.len()] == *lead
            && updates[lead.len()..] == data[width..]
            && data.iter().all(|&d| d > 0);
        let tuples = lead.iter().try_fold(1i64, |n, &d| n.checked_mul(d))?;
        let rows = [lead.to_vec(), vec![1]].concat();
        fits.then_some(Plan {
            data,
            rows,
            updates,
            width,
            tuples,
        })
    }

    /// How many elements one index tuple writes: `dk * .. * dr-1`.
    fn row_length(&self) -> i64 {
        self.data[self.width..].iter().product()
    }

    /// The data as ScatterElements gets it: `[d0 * .. * dk-1, dk * .. * dr-1]`.
    fn flat_data(&self) -> Vec<i64> {
        vec![self.data[..self.width].iter().product(), self.row_length()]
    }

    /// The updates (and the expanded indices) as ScatterElements gets them: `[A, dk * ..]`.
    fn flat_updates(&self) -> Vec<i64> {
        vec![self.tuples, self.row_length()]
    }
}

/// A Reshape of `x` (of dims `from`) to `to`, or `x` where they are one.
fn reshape(e: &mut Emitter, x: &str, from: &[i64], to: &[i64]) -> String {
    if from == to {
        x.to_string()
    } else {
        e.reshape(x, to)
    }
}

/// Writes the ScatterElements form of `node`; the caller names its last output.
fn write(e: &mut Emitter, node: &NodeProto, plan: &Plan) {
    let (data, indices, updates) = (&node.input[0], &node.input[1], &node.input[2]);
    let k = plan.width;
    // Each index made non-negative, per axis: i + d * (i < 0).
    let zero = e.scalar(0);
    let negative = e.binary("Less", indices, &zero);
    let negative = e.cast(&negative, DataType::Int64);
    let lengths = e.ints(&plan.data[..k]);
    let shift = e.binary("Mul", &negative, &lengths);
    let mut row = e.binary("Add", indices, &shift);
    if k > 1 {
        // The tuple's row in the data flattened over its first k axes.
        let strides: Vec<i64> = (0..k)
            .map(|j| plan.data[j + 1..k].iter().product())
            .collect();
        let strides = e.ints(&strides);
        let weighted = e.binary("Mul", &row, &strides);
        row = e.reduce_sum(&weighted, &[-1], true);
    }
    // [A, 1], expanded over each update's elements.
    let flat = plan.flat_updates();
    let row = reshape(e, &row, &plan.rows, &[plan.tuples, 1]);
    let shape = e.ints(&flat);
    let row = e.op("Expand", &[&row, &shape], vec![]);
    let updates = reshape(e, updates, &plan.updates, &flat);
    let flat_data = plan.flat_data();
    let target = reshape(e, data, &plan.data, &flat_data);
    let mut attributes = vec![int_attr("axis", 0)];
    let reduction = node
        .attribute
        .iter()
        .filter(|a| a.name.as_deref() == Some("reduction"));
    attributes.extend(reduction.cloned());
    let written = e.op("ScatterElements", &[&target, &row, &updates], attributes);
    if flat_data != plan.data {
        e.reshape(&written, &plan.data);
    }
}
