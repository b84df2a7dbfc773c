//! A traced loop's Split of a selection (transformers' Mixtral, `for e in experts_hit`; emit-static's
//! padding/split.rs and whole_split.rs): the original runs only on exactly the Split's rows, so
//! the static Split reads that many of the padded rows. Values: tests/python/
//! test_static_whole_split.py and models/real/mixtral_ts17 in tests/static.

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;

/// `mask` [6] -> NonZero -> Transpose -> Split into `parts` single rows, each a graph output.
fn split_rows(parts: usize) -> Vec<u8> {
    let rows: Vec<String> = (0..parts).map(|i| format!("row{i}")).collect();
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    let nodes = vec![
        node("NonZero", &["mask"], &["coords"], vec![]),
        node(
            "Transpose",
            &["coords"],
            &["t"],
            vec![ints("perm", &[1, 0])],
        ),
        node("Split", &["t", "sizes"], &rows, vec![int("axis", 0)]),
    ];
    let sizes = int64s("sizes", &vec![1; parts]);
    let inputs = vec![value("mask", DataType::Bool, Some(&["n"]))];
    model(graph(nodes, inputs, &rows, vec![sizes]), 13)
}

#[test]
fn the_split_reads_the_first_rows_of_the_padded_list() {
    let options = static_options(&[("mask", &[6])]);
    let (out, report) = optimize_with(&split_rows(4), &options).expect("static");
    let summary = report.static_mode.as_ref().expect("static report");
    let lines: Vec<&String> = summary
        .rewrites
        .iter()
        .filter(|(kind, _)| kind == "whole-split")
        .map(|(_, line)| line)
        .collect();
    assert_eq!(lines.len(), 1, "{:?}", summary.rewrites);
    assert!(lines[0].contains("splits 4 rows"), "{}", lines[0]);
    assert!(
        lines[0].contains("first 4 of the 6 padded rows"),
        "{}",
        lines[0]
    );
    let m = ModelProto::decode(out.as_slice()).expect("re-parse");
    let g = m.graph.as_ref().unwrap();
    let split = g.node.iter().find(|n| n.op_type() == "Split").unwrap();
    let cut = g
        .node
        .iter()
        .find(|n| n.output[0] == split.input[0])
        .unwrap();
    assert_eq!(cut.op_type(), "Slice");
    assert!(!g.node.iter().any(|n| n.op_type() == "NonZero"));
    // The parts are whole rows: no count outputs.
    let names: Vec<&str> = g.output.iter().map(|o| o.name()).collect();
    assert_eq!(names, ["row0", "row1", "row2", "row3"]);
}

#[test]
fn a_split_of_every_padded_row_needs_no_cut() {
    let options = static_options(&[("mask", &[6])]);
    let (out, _) = optimize_with(&split_rows(6), &options).expect("static");
    let m = ModelProto::decode(out.as_slice()).expect("re-parse");
    let g = m.graph.as_ref().unwrap();
    let split = g.node.iter().find(|n| n.op_type() == "Split").unwrap();
    let input = g
        .node
        .iter()
        .find(|n| n.output[0] == split.input[0])
        .unwrap();
    assert_eq!(input.op_type(), "Transpose");
}

#[test]
fn a_capacity_under_the_split_rows_is_an_error() {
    let mut options = static_options(&[("mask", &[6])]);
    options.capacity = Some(3);
    let why = static_error(&split_rows(4), &options);
    assert!(
        why.contains("splits 4 rows") && why.contains("at most 3"),
        "{why}"
    );
    assert!(why.contains("--capacity to 4"), "{why}");
}
