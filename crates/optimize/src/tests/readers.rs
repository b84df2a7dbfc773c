//! Issue 25, item 2: every reader of ArgWhere's coordinates is accounted for.

use super::*;
use crate::{Kind, Reason};

fn one_d_mask_graph(tail: Vec<NodeProto>, outputs: &[&str], inits: Vec<TensorProto>) -> Vec<u8> {
    let mut nodes = vec![
        node("NonZero", &["mask"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
    ];
    nodes.extend(tail);
    model(
        graph(
            nodes,
            vec![
                value("x", DataType::Float, Some(&["N", "3"])),
                value("mask", DataType::Bool, Some(&["N"])),
            ],
            outputs,
            inits,
        ),
        17,
    )
}

#[test]
fn a_reshape_to_minus_one_of_the_column_is_fused() {
    // dynamo: mask.nonzero().squeeze(1) -> index_select(x, 0, idx)
    let bytes = one_d_mask_graph(
        vec![
            node("Squeeze", &["t", "one"], &["sq"], vec![]),
            node("Reshape", &["sq", "minus_one"], &["flat"], vec![]),
            node("Gather", &["x", "flat"], &["y"], vec![int("axis", 0)]),
        ],
        &["y"],
        vec![int64s("one", &[1]), int64s("minus_one", &[-1])],
    );
    let (m, report) = run(&bytes);
    assert_eq!(main_listing(&m), ["nonzero.BooleanMask(x,mask)->y"]);
    assert_eq!(report.count(Kind::BooleanMaskGather), 1);
    assert!(report.left.is_empty() && report.coordinates_used.is_empty());
}

#[test]
fn an_unfused_gather_is_reported_and_the_summary_says_so() {
    // GatherElements reading the [nnz, 1] coordinates as indices: no library op is that.
    let bytes = one_d_mask_graph(
        vec![node(
            "GatherElements",
            &["x", "t"],
            &["y"],
            vec![int("axis", 0)],
        )],
        &["y"],
        vec![],
    );
    let (_, report) = run(&bytes);
    assert_eq!(report.count(Kind::ArgWhere), 1);
    assert_eq!(report.left.len(), 1, "{:?}", report.left);
    assert_eq!(report.left[0].reason, Reason::GatherNotFused);
    assert_eq!(report.left[0].node, "GatherElements_y");
    let summary = report.summary();
    assert!(
        summary.starts_with(
            "1 NonZero: 1 rewritten, 0 left, 1 gather kept\ngathers kept: 1 gather-not-fused"
        ),
        "{summary}"
    );
    assert!(report
        .to_json()
        .contains("\"gathers_kept\": {\"gather-not-fused\": 1}"));
}

#[test]
fn readers_that_need_the_coordinates_are_listed_apart() {
    let bytes = one_d_mask_graph(
        vec![node("ScatterND", &["x", "t", "updates"], &["y"], vec![])],
        &["y", "t"],
        vec![],
    );
    let mut m = ModelProto::decode(bytes.as_slice()).unwrap();
    m.graph
        .as_mut()
        .unwrap()
        .input
        .push(value("updates", DataType::Float, Some(&["K", "3"])));
    let (_, report) = run(&m.encode_to_vec());
    assert!(report.left.is_empty(), "{:?}", report.left);
    let ops: Vec<&str> = report
        .coordinates_used
        .iter()
        .map(|u| u.op.as_str())
        .collect();
    assert_eq!(ops, ["output", "ScatterND"]);
    assert!(report
        .summary()
        .contains("\ncoordinates used by: 1 ScatterND, 1 output\n"));
    assert!(report.to_json().contains("\"coordinates_used\": [{\"graph\": \"main\", \"argwhere\": \"Transpose_t_argwhere\", \"reader\": \"the graph's outputs\", \"op\": \"output\"}"), "{}", report.to_json());
}
