//! For Rockchip's RKNN (`--target rknn`), the forms rknn-toolkit2 2.5.0 builds for rk3588 and
//! runs right in its simulator, found by the deploy_rknn stage (tests/deploy/test_rknn.py,
//! docs/static.md "Targets"), over the whole main graph once the portable forms are written:
//!
//! - of two int64 graph outputs that are Identities of one tensor, the later ones become
//!   `Add(x, 0)` ([`distinct_outputs`]): the toolkit returns only one of them;
//! - gathers of one tensor along one axis become one gather and a Split ([`parallel_gathers`]):
//!   the toolkit merges them without comparing their indices.
//!
//! The compaction's own rknn forms (positions in float on the NPU, the count as a ReduceSum)
//! are written where the compaction is (`positions.rs`, `compact.rs`).

pub(crate) mod parallel_gathers;

use crate::scope::{names_in, Scope};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::GraphProto;
use std::collections::HashSet;

/// The rewrites.
pub fn rewrite(graph: &mut GraphProto, scope: &Scope) {
    distinct_outputs(graph);
    parallel_gathers::merge(graph, scope);
}

/// Where two int64 graph outputs are Identities of one tensor (the counts of one NonZero's two
/// readers), every one after the first becomes `Add(x, 0)`: rknn-toolkit2 2.5.0 returns only one
/// of such outputs, so a caller reading them by position reads the wrong ones. Exact. Returns
/// how many.
pub fn distinct_outputs(graph: &mut GraphProto) -> usize {
    let mut names = HashSet::new();
    names_in(graph, &mut names, 0);
    let int64_outputs = crate::outputs::outputs_of_type(graph, &[DataType::Int64]);
    let (mut sources, mut changed) = (HashSet::new(), 0);
    for output in int64_outputs {
        let Some(at) = graph
            .node
            .iter()
            .position(|n| n.output.first() == Some(&output))
        else {
            continue;
        };
        let node = &graph.node[at];
        if node.op_type.as_deref() != Some("Identity") || sources.insert(node.input[0].clone()) {
            continue;
        }
        crate::outputs::identity_as_add_of_zero(graph, at, DataType::Int64 as i32, &mut names);
        changed += 1;
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::portable::tests::node;
    use nonzero_proto::onnx::TensorProto;

    #[test]
    fn a_second_output_identity_of_one_tensor_becomes_an_add_of_zero() {
        use nonzero_proto::onnx::{type_proto, TypeProto, ValueInfoProto};
        let int64 = |name: &str| ValueInfoProto {
            name: Some(name.into()),
            r#type: Some(TypeProto {
                value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                    elem_type: Some(DataType::Int64 as i32),
                    shape: None,
                })),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut graph = GraphProto {
            node: vec![
                node("Identity", "count", "a_count"),
                node("Identity", "count", "b_count"),
                node("Identity", "other", "c_count"),
            ],
            output: vec![int64("a_count"), int64("b_count"), int64("c_count")],
            ..Default::default()
        };
        assert_eq!(super::distinct_outputs(&mut graph), 1);
        let ops: Vec<&str> = graph
            .node
            .iter()
            .map(|n| n.op_type.as_deref().unwrap())
            .collect();
        assert_eq!(ops, ["Identity", "Add", "Identity"]);
        assert_eq!(graph.node[1].input, ["count", "b_count/zero0"]);
        let zero: &TensorProto = &graph.initializer[0];
        assert_eq!(
            (zero.name.as_deref(), &zero.int64_data[..]),
            (Some("b_count/zero0"), &[0][..])
        );
        assert_eq!(super::distinct_outputs(&mut graph), 0);
    }
}
