//! A Where of integers or booleans whose operands are broadcast (a scalar 0 for the padding of
//! gathered indices, a `[n, 1]` mask over `[n, 4]` boxes) gets each such operand expanded to
//! the output's fixed shape first: `Where(c, Expand(x, shape), y)`.
//!
//! Why: onnx2tf 2.6.9's `flatbuffer_direct` writes a Where of integers as LiteRT's SELECT (v1),
//! which takes no broadcast (a float Where becomes arithmetic, which does): LiteRT then refuses
//! to prepare the model ("HaveSameShapes(input_x, input_y) was not true"). Found in the tails of
//! torchvision's FCOS and RetinaNet (tests/deploy/test_tails.py); `Where(x < 5, y, 0)` over a
//! `[100]` int64 `y` is the whole repro. onnxsim, which onnx2tf runs first, folds the Expand of a
//! constant into a constant of the full shape. Exact: Where broadcasts its operands the same way.

use super::int64s;
use crate::scope::{names_in, Scope};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{GraphProto, NodeProto};
use nonzero_rewrite_analysis::dims::static_dims;
use std::collections::{HashMap, HashSet};

/// Expands the broadcast operands of every such Where whose shapes are all fixed; returns how
/// many Wheres changed.
pub fn expand_operands(graph: &mut GraphProto, scope: &Scope) -> usize {
    let (_, shapes) = scope.shapes_of(graph);
    let mut names = HashSet::new();
    names_in(graph, &mut names, 0);
    let mut fresh = |base: &str| {
        let name = (0..)
            .map(|i| format!("{base}/full{i}"))
            .find(|n| !names.contains(n))
            .expect("a free name");
        names.insert(name.clone());
        name
    };
    let mut shape_of: HashMap<Vec<i64>, String> = HashMap::new();
    let (mut nodes, mut changed) = (Vec::with_capacity(graph.node.len()), 0);
    for mut node in std::mem::take(&mut graph.node) {
        let Some((output, operands)) = broadcast_operands(&node, |name| {
            let t = shapes.info(name).and_then(|i| i.elem_type);
            static_dims(&shapes, name).map(|dims| (dims, t))
        }) else {
            nodes.push(node);
            continue;
        };
        let shape = shape_of
            .entry(output.clone())
            .or_insert_with(|| {
                let name = fresh("where_shape");
                graph.initializer.push(int64s(&name, &output));
                name
            })
            .clone();
        for i in operands {
            let expanded = fresh(&node.input[i]);
            nodes.push(NodeProto {
                op_type: Some("Expand".into()),
                name: node.name.as_ref().map(|n| format!("{n}/expand{i}")),
                input: vec![node.input[i].clone(), shape.clone()],
                output: vec![expanded.clone()],
                ..Default::default()
            });
            node.input[i] = expanded;
        }
        nodes.push(node);
        changed += 1;
    }
    graph.node = nodes;
    changed
}

/// The output's dims and the positions of the operands whose dims differ from them, for a
/// Where of a non-float type with every shape fixed; `None` for any other node, or one with
/// nothing broadcast. `known` gives a tensor's fixed dims and type.
fn broadcast_operands(
    node: &NodeProto,
    known: impl Fn(&str) -> Option<(Vec<i64>, Option<i32>)>,
) -> Option<(Vec<i64>, Vec<usize>)> {
    if !crate::graph::is_onnx_op(node, "Where") || node.input.len() != 3 {
        return None;
    }
    let (output, elem_type) = known(node.output.first()?)?;
    let float = matches!(
        DataType::try_from(elem_type?).ok()?,
        DataType::Float | DataType::Float16 | DataType::Double | DataType::Bfloat16
    );
    if float {
        return None;
    }
    let mut operands = vec![];
    for (i, input) in node.input.iter().enumerate() {
        if known(input)?.0 != output {
            operands.push(i);
        }
    }
    (!operands.is_empty()).then_some((output, operands))
}
