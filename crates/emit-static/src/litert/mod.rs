//! For LiteRT (`--target litert`), the forms onnx2tf 2.6.9's backends (`flatbuffer_direct`,
//! and `tf_converter` where named) convert right, found by the deploy stage (tests/deploy, docs/static.md "Targets"):
//!
//! - a Split of a tensor of fixed shape becomes one Slice per part ([`splits_as_slices`]): the
//!   backend leaves a Split's parts, and everything after them, with -1 in their
//!   `shape_signature` (`nonzero(as_tuple=True)`'s columns; Mixtral's experts hit);
//! - an Identity that writes a graph output from a tensor read elsewhere too becomes
//!   `Add(x, 0)` ([`identity_outputs_apart`]): the backend drops such an Identity by renaming its
//!   input's producer to the output, and the input's other readers then read a tensor that no
//!   op writes ("Input tensor ... lacks data" at run time: the counts of one NonZero's two
//!   readers).
//!
//! - a Clip of integers becomes `Min(Max(x, lo), hi)` ([`integer_clips_as_max_min`]): the
//!   backend writes Longformer's own `Clip(attention_mask * (global + 1), 0, 1)` of int64 as a
//!   RELU_0_TO_1 of int32 input and int64 output, which LiteRT refuses to prepare;
//! - coordinates gathered from a grid and transposed are gathered by rows of the grid stored
//!   transposed ([`grid_rows`]): `tf_converter` drops a square result's Transpose;
//! - a Where of integers gets its broadcast operands expanded to its shape
//!   ([`selects`]): `flatbuffer_direct` writes it as SELECT, which takes no broadcast;
//! - a ScatterND at computed indices becomes a ScatterElements on the data flattened over the
//!   indexed axes ([`scatter_rows`]): `tf_converter` fails on any ScatterND whose indices are
//!   not constant, and `flatbuffer_direct` writes one with `reduction=add` as a custom op;
//! - an exported GELU's rank-0 divisor `1.4142135` becomes a `[1]` tensor ([`gelu_divisors`]):
//!   `tf_converter` fuses the GELU into LiteRT's GELU builtin then, and otherwise writes its Erf
//!   as the Flex op FlexErf, which LiteRT does not run.
//!
//! All are exact: a Slice of a part's range is the part; `x + 0` is `x` for integers (only
//! integer outputs are rewritten: a float `-0.0 + 0` would be +0.0); a Clip of integers is its
//! Max and Min; an Expand to the shape Where broadcasts to changes no value; a ScatterElements
//! of each tuple's row writes the elements the ScatterND writes, in its order; a dividend of rank
//! 1 or more divided by `[d]` is divided by `d`.

mod gelu_divisors;
mod grid_rows;
mod scatter_rows;
mod selects;

use super::scope::{names_in, Scope};
use crate::graph::{int_attr, ints_attr};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::type_proto::Value;
use nonzero_proto::onnx::{GraphProto, NodeProto, TensorProto};
use std::collections::HashSet;

/// The rewrites; returns how many nodes each changed.
pub fn rewrite(graph: &mut GraphProto, scope: &Scope) -> [usize; 7] {
    [
        splits_as_slices(graph, scope),
        identity_outputs_apart(graph),
        integer_clips_as_max_min(graph, scope),
        scatter_rows::as_scatter_elements(graph, scope),
        grid_rows::gather_rows(graph),
        selects::expand_operands(graph, scope),
        gelu_divisors::as_one_element(graph, scope),
    ]
}

/// Each Clip (opset 11 on: bounds as inputs) of an integer tensor becomes Max with its lower
/// bound, then Min with its upper one (either left out where the Clip has none).
pub fn integer_clips_as_max_min(graph: &mut GraphProto, scope: &Scope) -> usize {
    if scope.opset < 12 {
        return 0; // no integer Max or Min before opset 12
    }
    let (_, shapes) = scope.shapes_of(graph);
    let integer = |name: &str| {
        let t = shapes.info(name).and_then(|i| i.elem_type);
        t.and_then(|t| DataType::try_from(t).ok())
            .is_some_and(|t| matches!(t, DataType::Int64 | DataType::Int32))
    };
    let mut names = HashSet::new();
    names_in(graph, &mut names, 0);
    let mut changed = 0;
    // From the last, so that the positions of the ones before stay valid.
    for at in (0..graph.node.len()).rev() {
        let node = &graph.node[at];
        let clip = crate::graph::is_onnx_op(node, "Clip") && node.output.len() == 1;
        if !clip || !node.input.first().is_some_and(|x| integer(x)) {
            continue;
        }
        let bound = |i: usize| node.input.get(i).filter(|b| !b.is_empty()).cloned();
        let name = node.name.clone().unwrap_or_else(|| node.output[0].clone());
        let (mut value, out) = (node.input[0].clone(), node.output[0].clone());
        let steps: Vec<(&str, String)> = [("Max", bound(1)), ("Min", bound(2))]
            .into_iter()
            .filter_map(|(op, b)| Some((op, b?)))
            .collect();
        if steps.is_empty() {
            continue; // a Clip with no bounds is its input: left as it is
        }
        let last = steps.len() - 1;
        let mut nodes = vec![];
        for (i, (op, b)) in steps.into_iter().enumerate() {
            let output = if i == last {
                out.clone()
            } else {
                let free = (0..).map(|k| format!("{out}/raised{k}"));
                let name = free
                    .into_iter()
                    .find(|n| !names.contains(n))
                    .expect("a free name");
                names.insert(name.clone());
                name
            };
            nodes.push(NodeProto {
                op_type: Some(op.into()),
                name: Some(format!("{name}/{}", op.to_ascii_lowercase())),
                input: vec![value, b],
                output: vec![output.clone()],
                ..Default::default()
            });
            value = output;
        }
        graph.node.splice(at..=at, nodes);
        changed += 1;
    }
    changed
}

/// Each Split whose input has a fixed shape and whose part sizes are known becomes Slices.
pub fn splits_as_slices(graph: &mut GraphProto, scope: &Scope) -> usize {
    let (_, shapes) = scope.shapes_of(graph);
    let mut names = HashSet::new();
    names_in(graph, &mut names, 0);
    let mut changed = 0;
    let mut at = 0;
    while at < graph.node.len() {
        let node = &graph.node[at];
        let is_split = node.op_type.as_deref() == Some("Split")
            && crate::graph::is_onnx_op(node, "Split")
            && node.input.first().is_some_and(|i| !i.is_empty())
            && !node.output.is_empty();
        let dims: Option<Vec<i64>> = is_split
            .then(|| {
                shapes
                    .info(&node.input[0])?
                    .dims
                    .as_ref()?
                    .iter()
                    .map(|d| d.as_static())
                    .collect()
            })
            .flatten();
        let Some(dims) = dims else {
            at += 1;
            continue;
        };
        let Some((axis, sizes)) = parts(graph, node, &dims, scope.opset) else {
            at += 1;
            continue;
        };
        let split = graph.node.remove(at);
        let mut fresh = |what: &str| {
            let name = (0..)
                .map(|i| format!("{}/{what}{i}", split.output[0]))
                .find(|n| !names.contains(n))
                .expect("a free name");
            names.insert(name.clone());
            name
        };
        let axes = fresh("axis");
        graph.initializer.push(int64s(&axes, &[axis]));
        let mut start = 0;
        let mut slices = vec![];
        for (output, size) in split.output.iter().zip(&sizes) {
            let end = start + size;
            if !output.is_empty() {
                let (s, e) = (fresh("start"), fresh("end"));
                graph.initializer.push(int64s(&s, &[start]));
                graph.initializer.push(int64s(&e, &[end]));
                slices.push(NodeProto {
                    op_type: Some("Slice".into()),
                    name: split
                        .name
                        .as_ref()
                        .map(|n| format!("{n}/slice{}", slices.len())),
                    input: vec![split.input[0].clone(), s, e, axes.clone()],
                    output: vec![output.clone()],
                    ..Default::default()
                });
            }
            start = end;
        }
        let count = slices.len();
        for (i, slice) in slices.into_iter().enumerate() {
            graph.node.insert(at + i, slice);
        }
        at += count;
        changed += 1;
    }
    changed
}

/// The Split's axis and the size of each part (ONNX's rules: the `split` sizes, else equal
/// parts, the last smaller where `num_outputs` does not divide the axis), or `None`.
fn parts(
    graph: &GraphProto,
    node: &NodeProto,
    dims: &[i64],
    opset: i64,
) -> Option<(i64, Vec<i64>)> {
    let rank = dims.len() as i64;
    let axis = int_attr(node, "axis").ok()?.unwrap_or(0);
    let axis = if axis < 0 { axis + rank } else { axis };
    let length = *dims.get(usize::try_from(axis).ok()?)?;
    let count = node.output.len() as i64;
    let given = match node.input.get(1).filter(|s| !s.is_empty()) {
        Some(split) if opset >= 13 => Some(constant_ints(graph, split)?),
        Some(_) => return None,
        None => ints_attr(node, "split").ok()?,
    };
    let sizes = match given {
        Some(sizes) => sizes,
        None if length % count == 0 => vec![length / count; count as usize],
        // opset 18's num_outputs: ceil-sized parts, the last one smaller.
        None if int_attr(node, "num_outputs").ok()?.is_some() => {
            let each = (length + count - 1) / count;
            let mut sizes = vec![each; count as usize - 1];
            sizes.push(length - each * (count - 1));
            sizes
        }
        None => return None,
    };
    let fits = sizes.len() as i64 == count
        && sizes.iter().all(|&s| s >= 0)
        && sizes.iter().sum::<i64>() == length;
    fits.then_some((axis, sizes))
}

/// The int64 values of an initializer or a Constant node's tensor named `name`.
fn constant_ints(graph: &GraphProto, name: &str) -> Option<Vec<i64>> {
    let tensor = graph
        .initializer
        .iter()
        .find(|t| t.name.as_deref() == Some(name))
        .or_else(|| {
            let node = graph.node.iter().find(|n| {
                n.op_type.as_deref() == Some("Constant")
                    && n.output.first().map(String::as_str) == Some(name)
            })?;
            node.attribute
                .iter()
                .find(|a| a.name.as_deref() == Some("value"))?
                .t
                .as_ref()
        })?;
    nonzero_rewrite_graph::graph::tensor_ints(tensor)
}

fn int64s(name: &str, values: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: vec![values.len() as i64],
        data_type: Some(DataType::Int64 as i32),
        int64_data: values.to_vec(),
        ..Default::default()
    }
}

/// Each Identity writing an integer graph output from a tensor that another node or output
/// reads too becomes `Add(x, 0)`.
pub fn identity_outputs_apart(graph: &mut GraphProto) -> usize {
    let mut names = HashSet::new();
    names_in(graph, &mut names, 0);
    let integer_outputs: HashSet<String> =
        crate::outputs::outputs_of_type(graph, &[DataType::Int64, DataType::Int32])
            .into_iter()
            .collect();
    let outputs: Vec<String> = graph.output.iter().filter_map(|o| o.name.clone()).collect();
    let readers = |graph: &GraphProto, name: &str| {
        let by_nodes = graph
            .node
            .iter()
            .map(|n| n.input.iter().filter(|i| *i == name).count())
            .sum::<usize>();
        by_nodes + outputs.iter().filter(|o| *o == name).count()
    };
    let mut changed = 0;
    for at in 0..graph.node.len() {
        let node = &graph.node[at];
        let rewritten = node.op_type.as_deref() == Some("Identity")
            && crate::graph::is_onnx_op(node, "Identity")
            && node
                .output
                .first()
                .is_some_and(|o| integer_outputs.contains(o))
            && node.input.first().is_some_and(|i| readers(graph, i) > 1);
        if !rewritten {
            continue;
        }
        let output = node.output[0].clone();
        let elem_type = graph
            .output
            .iter()
            .find(|o| o.name.as_ref() == Some(&output))
            .and_then(|o| match o.r#type.as_ref()?.value.as_ref()? {
                Value::TensorType(t) => t.elem_type,
                _ => None,
            })
            .expect("an integer output");
        crate::outputs::identity_as_add_of_zero(graph, at, elem_type, &mut names);
        changed += 1;
    }
    changed
}
