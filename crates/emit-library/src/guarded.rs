//! The fused form when the sizes are not proven (issue 25, item 1 f): tf2onnx (`unk__41`) and
//! paddle2onnx (`DynamicDimension.0`) name every dynamic dim apart, so nothing in the file says
//! that data's leading dims are the mask's. The original gather does not need them to be: it
//! runs whenever every selected coordinate is in range of the data.
//!
//! So the gather becomes
//! `If(Shape(mask) == Shape(data)[:k], then BooleanMask(data, mask), else the original)`,
//! where "the original" is what the default mode gave before: the gather of `ArgWhere(mask)`
//! (which no pattern matches again, so a second run changes nothing). When the sizes agree,
//! BooleanMask equals the gather (the proof of `gather_nd`, with the sizes checked at run time);
//! otherwise the original's own gather runs, and fails exactly when the original fails.

use super::{chain_text, nonzero_node, Edit, Kind};
use crate::graph::{describe, fresh_node_name};
use crate::trace::{Traced, View};
use nonzero_proto::onnx::attribute_proto::AttributeType;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{type_proto, TypeProto};
use nonzero_proto::onnx::{AttributeProto, GraphProto, NodeProto, TensorProto, ValueInfoProto};
use nonzero_rewrite_analysis::findings::Fact;
use nonzero_rewrite_analysis::findings::Reason;
use nonzero_rewrite_match::gathers::{guardable, leading_dims_match};

/// How the original reads the coordinates.
#[derive(Debug, Clone, Copy)]
pub enum Reads {
    /// `GatherND(data, [nnz, k] coordinates)`.
    GatherNd,
    /// `Gather(data, [nnz] column, axis=0)` of a 1-D mask.
    Column,
}

/// The nodes that compute the condition (inserted before the gather) and the If that replaces
/// it, writing `output`; `None` below opset 10.
pub fn guarded(
    view: &View,
    data: &str,
    traced: &Traced,
    reads: Reads,
    output: &str,
    name: &str,
) -> Option<(Vec<NodeProto>, NodeProto, Vec<Fact>)> {
    if !guardable(view, data, traced) {
        return None;
    }
    let k = traced.mask_rank as i64;
    let mask = traced.mask.as_str();
    // Names under the output's, with a part no exporter writes.
    let fresh = |what: &str| format!("{output}.nonzero_guard.{what}");
    let ints = |what: &str, values: &[i64]| constant(&fresh(what), values);
    let op = |ty: &str, inputs: &[&str], out: &str, attribute: Vec<AttributeProto>| NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![out.to_string()],
        op_type: Some(ty.to_string()),
        name: Some(format!("{name}_{out}")),
        attribute,
        ..Default::default()
    };
    let (mask_shape, data_shape, leading) =
        (fresh("mask_shape"), fresh("data_shape"), fresh("leading"));
    let (equal, differ, differ_count, sizes_agree) = (
        fresh("equal"),
        fresh("differ"),
        fresh("differ_count"),
        fresh("sizes_agree"),
    );
    // If's condition may be any one-element tensor: `[1]` here.
    let prelude = vec![
        ints("zero", &[0]),
        ints("k", &[k]),
        ints("none", &[0]),
        op("Shape", &[mask], &mask_shape, vec![]),
        op("Shape", &[data], &data_shape, vec![]),
        op(
            "Slice",
            &[&data_shape, &fresh("zero"), &fresh("k"), &fresh("zero")],
            &leading,
            vec![],
        ),
        op("Equal", &[&mask_shape, &leading], &equal, vec![]),
        op("Not", &[&equal], &differ, vec![]),
        op(
            "Cast",
            &[&differ],
            &fresh("differ_int"),
            vec![int_attr("to", DataType::Int64 as i64)],
        ),
        op(
            "ReduceSum",
            &[&fresh("differ_int")],
            &differ_count,
            vec![int_attr("keepdims", 1)],
        ),
        op(
            "Equal",
            &[&differ_count, &fresh("none")],
            &sizes_agree,
            vec![],
        ),
    ];
    let elem = view.shapes.get(data).elem_type;
    let branch = |label: &str, nodes: Vec<NodeProto>, out: &str| GraphProto {
        name: Some(format!("{name}_{label}")),
        node: nodes,
        output: vec![ValueInfoProto {
            name: Some(out.to_string()),
            r#type: elem.map(tensor_type),
            ..Default::default()
        }],
        ..Default::default()
    };
    let then_out = fresh("fused");
    let then_branch = branch(
        "sizes_agree",
        vec![nonzero_node(
            "BooleanMask",
            format!("{name}_boolean_mask"),
            &[data, mask],
            &then_out,
        )],
        &then_out,
    );
    let coordinates = fresh("coordinates");
    let mut original = vec![nonzero_node(
        "ArgWhere",
        format!("{name}_argwhere"),
        &[mask],
        &coordinates,
    )];
    let else_out = fresh("gathered");
    match reads {
        Reads::GatherNd => original.push(op("GatherND", &[data, &coordinates], &else_out, vec![])),
        Reads::Column => {
            original.push(ints("column", &[-1]));
            let column = fresh("column_values");
            original.push(op(
                "Reshape",
                &[&coordinates, &fresh("column")],
                &column,
                vec![],
            ));
            original.push(op(
                "Gather",
                &[data, &column],
                &else_out,
                vec![int_attr("axis", 0)],
            ));
        }
    }
    let else_branch = branch("sizes_differ", original, &else_out);
    let if_node = NodeProto {
        input: vec![sizes_agree],
        output: vec![output.to_string()],
        name: Some(fresh_node_name(
            view.graph,
            &format!("{name}_if_sizes_agree"),
        )),
        op_type: Some("If".to_string()),
        attribute: vec![
            graph_attr("then_branch", then_branch),
            graph_attr("else_branch", else_branch),
        ],
        ..Default::default()
    };
    let facts = vec![
        Fact::Bool {
            tensor: mask.to_string(),
        },
        Fact::Rank {
            tensor: mask.to_string(),
            rank: traced.mask_rank,
        },
        Fact::CheckedAtRunTime {
            tensor: mask.to_string(),
            other: data.to_string(),
        },
    ];
    Some((prelude, if_node, facts))
}

fn int_attr(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(value),
        ..Default::default()
    }
}

fn graph_attr(name: &str, g: GraphProto) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Graph as i32),
        g: Some(g),
        ..Default::default()
    }
}

fn tensor_type(elem_type: i32) -> TypeProto {
    TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: Some(elem_type),
            shape: None,
        })),
        ..Default::default()
    }
}

/// A Constant node holding a 1-D int64 tensor.
fn constant(output: &str, values: &[i64]) -> NodeProto {
    let t = TensorProto {
        dims: vec![values.len() as i64],
        data_type: Some(DataType::Int64 as i32),
        int64_data: values.to_vec(),
        ..Default::default()
    };
    NodeProto {
        output: vec![output.to_string()],
        op_type: Some("Constant".to_string()),
        name: Some(format!("{output}_constant")),
        attribute: vec![AttributeProto {
            name: Some("value".into()),
            r#type: Some(AttributeType::Tensor as i32),
            t: Some(t),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// The edit for gather `node` (index `i`) of `traced`'s coordinates: BooleanMask when
/// `gather_nd::leading_dims_match` proves the sizes, the guarded If when only the sizes are
/// unproven; `None` otherwise (the gather is kept, and `diagnose` says why).
pub fn fused_or_guarded(
    view: &View,
    i: usize,
    node: &NodeProto,
    traced: Traced,
    kind: Kind,
    reads: Reads,
) -> Option<Edit> {
    let data = &node.input[0];
    match leading_dims_match(view, data, &traced, traced.mask_rank) {
        Ok(facts) => Some(super::gather_nd::boolean_mask_edit(
            view, i, node, traced, kind, facts,
        )),
        Err((Reason::SizesNotProven, _)) => {
            let out = &node.output[0];
            let (prelude, replacement, facts) =
                guarded(view, data, &traced, reads, out, &describe(node))?;
            let line = format!(
                "BooleanMask: {} -> {} ({}) became If(sizes of {} and {data} agree, BooleanMask({data}, {}), the original gather of ArgWhere({})) -> {out} (guarded)",
                chain_text(view, &traced.chain),
                node.op_type.as_deref().unwrap_or_default(),
                describe(node),
                traced.mask,
                traced.mask,
                traced.mask,
            );
            Some(Edit {
                node: i,
                prelude,
                replacement,
                kind,
                line,
                chain: traced.chain,
                facts,
            })
        }
        Err(_) => None,
    }
}
