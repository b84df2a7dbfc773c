//! OneHot in standard elementwise ops, for `--target qnn`: QNN HTP takes no OneHot, so an MoE's
//! router (Mixtral's `one_hot(selected_experts)`, the model's own op) went to the CPU EP.
//!
//! `OneHot(indices, depth, [off, on], axis)` becomes `Where(Equal(u, classes) or Equal(u,
//! classes - depth), on, off)`: `u` is the indices unsqueezed at `axis`, and `classes` is
//! `[0, depth)` along that axis. Exact for every index: a negative one counts from `depth`, and
//! one outside `[-depth, depth)` matches no class (all off). Float indices are compared as
//! ONNX Runtime's kernel compares them, in float (a negative one plus depth, then equal to a
//! class), not truncated to int64 as ONNX's text says: 2.5 is no class there.

use crate::emit::Emitter;
use crate::graph::{int_attr, is_onnx_op};
use crate::scope::Scope;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::GraphProto;

/// Rewrites every OneHot of `graph` whose depth is a constant and whose indices' rank and
/// values' type are known. Returns how many.
pub fn rewrite(graph: &mut GraphProto, scope: &Scope) -> usize {
    let mut done = 0;
    // From the last, so that the positions of the ones before stay valid.
    for at in (0..graph.node.len()).rev() {
        if !is_onnx_op(&graph.node[at], "OneHot") || graph.node[at].input.len() != 3 {
            continue;
        }
        let Some(e) = standard_form(graph, scope, at) else {
            continue;
        };
        graph.node.remove(at);
        e.insert(graph, at);
        done += 1;
    }
    done
}

/// The nodes that replace the OneHot at `at`, or `None` where it stays.
fn standard_form(graph: &GraphProto, scope: &Scope, at: usize) -> Option<Emitter> {
    let node = &graph.node[at];
    let (index, shapes) = scope.shapes_of(graph);
    let depth = match index.const_ints(graph, &node.input[1])?.as_slice() {
        [d] if *d > 0 => *d,
        _ => return None,
    };
    let indices = shapes.get(&node.input[0]);
    let rank = indices.rank()? as i64;
    let value_type = shapes.get(&node.input[2]).elem_type?;
    let axis = int_attr(node, "axis").ok().flatten().unwrap_or(-1);
    // The one-hot axis in the output (rank + 1 axes).
    let axis = if axis < 0 { axis + rank + 1 } else { axis };
    if !(0..=rank).contains(&axis) {
        return None;
    }
    let prefix = node.name.clone().unwrap_or_else(|| node.output[0].clone());
    let mut e = Emitter::new(graph, scope, &format!("{prefix}/standard"));
    // `[depth, 1, ..]`: one 1 per axis after the one-hot axis.
    let dims: Vec<i64> = std::iter::once(depth)
        .chain(std::iter::repeat_n(1, (rank - axis) as usize))
        .collect();
    let hot = match indices.elem_type.and_then(|t| DataType::try_from(t).ok()) {
        Some(DataType::Int64 | DataType::Int32) => integer_hot(
            &mut e,
            &node.input[0],
            indices.elem_type,
            axis,
            depth,
            &dims,
        ),
        Some(DataType::Float) => float_hot(&mut e, &node.input[0], axis, depth, &dims),
        // ONNX Runtime has OneHot kernels for int64, int32 and float indices only.
        _ => return None,
    };
    let (off, on) = (e.scalar(0), e.scalar(1));
    let gather = |e: &mut Emitter, which: &str| {
        e.op(
            "Gather",
            &[&node.input[2], which],
            vec![crate::emit::int_attr("axis", 0)],
        )
    };
    let (on, off) = (gather(&mut e, &on), gather(&mut e, &off));
    e.select(&hot, &on, &off, value_type);
    e.finish_as(&node.output[0]);
    Some(e)
}

/// Integer indices: `u == class or u == class - depth`, with no Where or Add on int64 (QNN HTP
/// leaves those to the CPU EP). Exact: adding depth to a negative index cannot overflow.
fn integer_hot(
    e: &mut Emitter,
    indices: &str,
    elem_type: Option<i32>,
    axis: i64,
    depth: i64,
    dims: &[i64],
) -> String {
    let indices = if elem_type == Some(DataType::Int64 as i32) {
        indices.to_string()
    } else {
        e.cast(indices, DataType::Int64)
    };
    let at_axis = e.unsqueeze(&indices, &[axis]);
    let classes: Vec<i64> = (0..depth).collect();
    let from_end: Vec<i64> = classes.iter().map(|c| c - depth).collect();
    let classes = e.ints_shaped(&classes, dims);
    let from_end = e.ints_shaped(&from_end, dims);
    let hit = e.binary("Equal", &at_axis, &classes);
    let hit_from_end = e.binary("Equal", &at_axis, &from_end);
    e.binary("Or", &hit, &hit_from_end)
}

/// Float indices, as ONNX Runtime computes them: a negative index plus depth (rounded in float),
/// then equal to a class.
fn float_hot(e: &mut Emitter, indices: &str, axis: i64, depth: i64, dims: &[i64]) -> String {
    let zero = e.float_scalar(0.0);
    let depth_f = e.float_scalar(depth as f32);
    let negative = e.binary("Less", indices, &zero);
    let wrapped = e.binary("Add", indices, &depth_f);
    let adjusted = e.where_(&negative, &wrapped, indices);
    let at_axis = e.unsqueeze(&adjusted, &[axis]);
    let classes: Vec<f32> = (0..depth).map(|c| c as f32).collect();
    let classes = e.floats(&classes, dims);
    e.binary("Equal", &at_axis, &classes)
}
