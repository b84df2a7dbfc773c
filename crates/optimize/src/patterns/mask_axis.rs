//! `Gather(data, positions, axis=a)` where `positions` are a 1-D bool mask's coordinates,
//! squeezed to `[nnz]` (tf2onnx's `tf.boolean_mask(x, m, axis=1)`: `NonZero -> Transpose ->
//! Squeeze -> Gather(axis=1)`; any exporter's column gather whose sizes are not proven), becomes
//! `BooleanMaskAxis(data, mask, axis=a)`: the op is defined as that gather, so no size needs
//! proving. It fails exactly where the gather does, on a true entry past the axis's end.
//!
//! A GatherND of the unsqueezed `[nnz, 1]` coordinates is the same gather along axis 0.
//! `Gather(axis=0)` and GatherND with the sizes proven are BooleanMask (`gather_columns`,
//! `gather_nd`), tried first.

use super::{chain_text, nonzero_node, Edit, Kind};
use crate::graph::{describe, fresh_node_name, int_attr};
use crate::report::Fact;
use crate::trace::{trace, Traced, View};
use nonzero_proto::onnx::attribute_proto::AttributeType;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{AttributeProto, NodeProto};

/// The traced 1-D bool mask and the axis when `node` is a Gather of its `[nnz]` positions, or a
/// GatherND of its `[nnz, 1]` coordinates (the same rows: axis 0).
pub fn candidate(view: &View, node: &NodeProto) -> Option<(Traced, i64)> {
    if node.input.len() != 2 || node.output.len() != 1 {
        return None;
    }
    let (axis, squeezed) = if view.is_op(node, "Gather") {
        (int_attr(node, "axis").ok()?.unwrap_or(0), true)
    } else if view.is_op(node, "GatherND") && int_attr(node, "batch_dims").ok()?.unwrap_or(0) == 0 {
        (0, false)
    } else {
        return None;
    };
    let traced = trace(view, &node.input[1])?;
    let bool_mask = view.shapes.get(&traced.mask).elem_type == Some(DataType::Bool as i32);
    (traced.squeezed == squeezed && traced.mask_rank == 1 && bool_mask).then_some((traced, axis))
}

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let (traced, axis) = candidate(view, node)?;
        let (data, out) = (&node.input[0], &node.output[0]);
        let name = fresh_node_name(view.graph, &format!("{}_boolean_mask_axis", describe(node)));
        let line = format!(
            "BooleanMaskAxis: {} -> {} ({}) became BooleanMaskAxis({data}, {}, axis={axis}) -> {out}",
            chain_text(view, &traced.chain),
            node.op_type.as_deref().unwrap_or_default(),
            describe(node),
            traced.mask,
        );
        let mut replacement = nonzero_node("BooleanMaskAxis", name, &[data, &traced.mask], out);
        replacement.attribute.push(AttributeProto {
            name: Some("axis".into()),
            r#type: Some(AttributeType::Int as i32),
            i: Some(axis),
            ..Default::default()
        });
        Some(Edit {
            node: i,
            prelude: vec![],
            replacement,
            kind: Kind::BooleanMaskAxis,
            line,
            facts: vec![
                Fact::Rank {
                    tensor: traced.mask.clone(),
                    rank: 1,
                },
                Fact::Bool {
                    tensor: traced.mask.clone(),
                },
            ],
            chain: traced.chain,
        })
    })
}
