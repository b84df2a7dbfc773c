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
use crate::graph::{describe, fresh_node_name};
use crate::trace::View;
use nonzero_proto::onnx::attribute_proto::AttributeType;
use nonzero_proto::onnx::AttributeProto;
use nonzero_rewrite_analysis::findings::Fact;
use nonzero_rewrite_match::gathers::axis_candidate;

pub fn find(view: &View) -> Option<Edit> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let (traced, axis) = axis_candidate(view, node)?;
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
