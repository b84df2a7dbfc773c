//! TorchScript's `unbind` of coordinates (emit-static's sequences.rs): a SplitToSequence of the
//! transposed NonZero into unit parts, each read by a SequenceAt at a constant position, is
//! read as Gathers (or Slices) of columns, so that the selection becomes static. Anything else
//! that reads the sequence keeps it, and the NonZero stays dynamic, naming it. Values on ONNX
//! Runtime: tests/python/test_static_unbind.py.

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;
use nonzero_rewrite_analysis::findings::Reason;

/// `m` [4, 5] unbound by `split` (a tensor, or none), its parts read by `reads`; `y` = the
/// first part read plus one.
fn unbound(split: Option<TensorProto>, reads: Vec<NodeProto>, extra: Vec<TensorProto>) -> Vec<u8> {
    let mut inputs = vec!["t"];
    let mut constants = extra;
    constants.push(scalar("one", 1));
    if let Some(s) = split {
        inputs.push("split");
        constants.push(s);
    }
    let mut nodes = vec![
        node("NonZero", &["m"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
        node(
            "SplitToSequence",
            &inputs,
            &["seq"],
            vec![int("axis", 1), int("keepdims", 0)],
        ),
    ];
    nodes.extend(reads);
    nodes.push(node("Add", &["part", "one"], &["y"], vec![]));
    let g = graph(
        nodes,
        vec![value("m", DataType::Bool, Some(&["4", "5"]))],
        &["y"],
        constants,
    );
    model(g, 17)
}

fn at(position: &str) -> Vec<NodeProto> {
    vec![node("SequenceAt", &["seq", position], &["part"], vec![])]
}

fn ops(bytes: &[u8]) -> Vec<String> {
    let m = ModelProto::decode(bytes).expect("re-parse");
    m.graph
        .unwrap()
        .node
        .iter()
        .map(|n| n.op_type().to_string())
        .collect()
}

fn allowing_dynamic() -> crate::Options {
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    options
}

#[test]
fn unit_parts_read_at_constant_positions_become_columns() {
    // A scalar split of 1 (TorchScript's), none, and the position from the end.
    for (split, position) in [
        (Some(scalar("split", 1)), 0),
        (None, 1),
        (Some(scalar("split", 1)), -1),
    ] {
        let bytes = unbound(split, at("k"), vec![scalar("k", position)]);
        let (out, report) = optimize_with(&bytes, &static_options(&[])).expect("static");
        assert_eq!(report.nonzero_left(), 0, "{position}");
        let ops = ops(&out);
        assert!(ops.contains(&"Gather".to_string()), "{ops:?}");
        assert!(
            !ops.iter().any(|o| o.contains("Sequence")),
            "the sequence is gone: {ops:?}"
        );
    }
}

#[test]
fn a_list_of_ones_keeps_the_axis_as_a_slice_of_width_one() {
    let split = int64s("split", &[1, 1]);
    let mut reads = at("k");
    reads.push(node("Squeeze", &["kept"], &["part"], vec![]));
    reads[0].output[0] = "kept".into();
    // Squeeze of the kept axis needs its axes: the inferred shape is [n, 1].
    reads[1].input.push("axis1".into());
    let bytes = unbound(
        Some(split),
        reads,
        vec![scalar("k", 1), int64s("axis1", &[1])],
    );
    let (out, report) = optimize_with(&bytes, &static_options(&[])).expect("static");
    assert_eq!(report.nonzero_left(), 0);
    assert!(ops(&out).contains(&"Slice".to_string()));
}

#[test]
fn other_reads_of_the_sequence_keep_it_and_the_nonzero_says_so() {
    let cases: Vec<(Option<TensorProto>, Vec<NodeProto>, Vec<TensorProto>)> = vec![
        // A position computed at run time.
        (
            Some(scalar("split", 1)),
            vec![
                node("ReduceSum", &["m64"], &["k"], vec![int("keepdims", 0)]),
                node("Cast", &["m"], &["m64"], vec![int("to", 7)]),
                node("SequenceAt", &["seq", "k"], &["part"], vec![]),
            ],
            vec![],
        ),
        // A position past the parts (the original fails).
        (Some(scalar("split", 1)), at("k"), vec![scalar("k", 2)]),
        // Parts of two columns.
        (Some(scalar("split", 2)), at("k"), vec![scalar("k", 0)]),
        // The sequence read whole.
        (
            Some(scalar("split", 1)),
            vec![
                node("SequenceAt", &["seq", "k"], &["part"], vec![]),
                node("SequenceLength", &["seq"], &["n"], vec![]),
            ],
            vec![scalar("k", 0)],
        ),
    ];
    for (i, (split, reads, extra)) in cases.into_iter().enumerate() {
        let bytes = unbound(split, reads, extra);
        let (out, report) = optimize_with(&bytes, &allowing_dynamic()).expect("written");
        assert_eq!(report.nonzero_left(), 1, "case {i}");
        let nonzero = report
            .left
            .iter()
            .find(|l| l.op == "NonZero")
            .expect("named");
        assert_eq!(nonzero.reason, Reason::PaddingUnsafe, "case {i}");
        assert!(
            nonzero.detail.contains("SplitToSequence"),
            "case {i}: {}",
            nonzero.detail
        );
        assert!(
            ops(&out).contains(&"SplitToSequence".to_string()),
            "case {i}"
        );
    }
}
