//! Row-wise work VITS's spline writes on padded rows (emit-static's padding/steps.rs, picks.rs,
//! spatial.rs, index_gather.rs): a float Div by padded rows reads the divisor's padding as 1, a
//! GatherElements of rows and indices padded alike reads the indices' padding as 0, a Pad of
//! another axis keeps the rows; an integer Div by padded rows stays dynamic. Values:
//! tests/python/test_static_row_ops.py.

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;
use nonzero_rewrite_analysis::findings::Reason;

/// `m` [4] selects rows of `x`, `y` [4, 3] (of `elem`) and `bins` [4, 3] int64; `tail` reads
/// `xs`, `ys` and `bs`, and writes the graph output `out`.
fn rows_then(elem: DataType, tail: Vec<NodeProto>, constants: Vec<TensorProto>) -> Vec<u8> {
    let mut nodes = vec![
        node("NonZero", &["m"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
        node("GatherND", &["x", "t"], &["xs"], vec![]),
        node("GatherND", &["y", "t"], &["ys"], vec![]),
        node("GatherND", &["bins", "t"], &["bs"], vec![]),
    ];
    nodes.extend(tail);
    let inputs = vec![
        value("x", elem, Some(&["4", "3"])),
        value("y", elem, Some(&["4", "3"])),
        value("bins", DataType::Int64, Some(&["4", "3"])),
        value("m", DataType::Bool, Some(&["4"])),
    ];
    model(graph(nodes, inputs, &["out"], constants), 13)
}

fn static_model(bytes: &[u8]) -> (ModelProto, crate::Report) {
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (out, report) = optimize_with(bytes, &options).expect("static");
    (
        ModelProto::decode(out.as_slice()).expect("re-parse"),
        report,
    )
}

#[test]
fn a_float_division_by_padded_rows_reads_their_padding_as_one() {
    let tail = vec![node("Div", &["xs", "ys"], &["out"], vec![])];
    let (m, report) = static_model(&rows_then(DataType::Float, tail, vec![]));
    assert!(report.left.is_empty(), "{:?}", report.left);
    let g = m.graph.as_ref().unwrap();
    let div = g.node.iter().find(|n| n.op_type() == "Div").unwrap();
    let divisor = g.node.iter().find(|n| n.output[0] == div.input[1]).unwrap();
    assert_eq!(divisor.op_type(), "Where");
    assert_eq!(divisor.input[2], "ys");
}

#[test]
fn an_integer_division_by_padded_rows_stays_dynamic() {
    let tail = vec![node("Div", &["xs", "ys"], &["out"], vec![])];
    let (_, report) = static_model(&rows_then(DataType::Int64, tail, vec![]));
    assert_eq!(report.left[0].reason, Reason::PaddingUnsafe);
    assert!(
        report.left[0].detail.contains("Div"),
        "{}",
        report.left[0].detail
    );
}

#[test]
fn gather_elements_of_rows_padded_alike_reads_the_padding_at_zero() {
    let tail = vec![node(
        "GatherElements",
        &["xs", "bs"],
        &["out"],
        vec![int("axis", 1)],
    )];
    let (m, report) = static_model(&rows_then(DataType::Float, tail, vec![]));
    assert!(report.left.is_empty(), "{:?}", report.left);
    let g = m.graph.as_ref().unwrap();
    let gather = g
        .node
        .iter()
        .find(|n| n.op_type() == "GatherElements")
        .unwrap();
    let indices = g
        .node
        .iter()
        .find(|n| n.output[0] == gather.input[1])
        .unwrap();
    assert_eq!(indices.op_type(), "Where");
}

#[test]
fn gather_elements_along_the_rows_stays_dynamic() {
    let tail = vec![node(
        "GatherElements",
        &["xs", "bs"],
        &["out"],
        vec![int("axis", 0)],
    )];
    let (_, report) = static_model(&rows_then(DataType::Float, tail, vec![]));
    assert_eq!(report.left[0].reason, Reason::PaddingUnsafe);
}

#[test]
fn a_pad_of_the_columns_keeps_the_rows() {
    let tail = vec![node("Pad", &["xs", "pads"], &["out"], vec![])];
    let pads = vec![int64s("pads", &[0, 1, 0, 0])];
    let (_, report) = static_model(&rows_then(DataType::Float, tail, pads));
    assert!(report.left.is_empty(), "{:?}", report.left);
}
