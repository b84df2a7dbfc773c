//! The first rows of a padded list (issue 37, item 3): `keep[:L]` along the padded axis keeps
//! its padding as a prefix, with the count min(count, L) for every reader after it (emit-static's
//! padding/steps.rs `prefix`, sinks.rs `Compacted::limited`). The values are checked on ONNX
//! Runtime by tests/python/test_static_nms.py and the detectors' `keep[:detections]`.

use super::*;
use crate::optimize_with;

fn op_count(g: &GraphProto, op: &str) -> usize {
    g.node
        .iter()
        .filter(|n| n.op_type.as_deref() == Some(op))
        .count()
}

/// `x[m][:3]`: the first rows of a selection, and their sum.
fn first_rows() -> Vec<u8> {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["rows"], vec![]),
            node("Slice", &["rows", "zero", "three", "zero"], &["y"], vec![]),
            node(
                "ReduceSum",
                &["y", "zero"],
                &["s"],
                vec![int("keepdims", 0)],
            ),
        ],
        vec![
            value("m", DataType::Bool, Some(&["n"])),
            value("x", DataType::Float, Some(&["n", "2"])),
        ],
        &["y", "s"],
        vec![int64s("zero", &[0]), int64s("three", &[3])],
    );
    model(g, 17)
}

#[test]
fn the_first_rows_of_a_selection_count_at_most_that_many() {
    let options = static_options(&[("m", &[7]), ("x", &[7, 2])]);
    let (bytes, report) = optimize_with(&first_rows(), &options).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let g = m.graph.as_ref().unwrap();
    let s = report.static_mode.as_ref().unwrap();
    assert_eq!(
        s.count_outputs,
        vec![("y".to_string(), "y_count".to_string(), 0)]
    );
    // The Slice stays: [7, 2] rows cut to [3, 2]. The count is min(count, 3), and the sum
    // masks the first 3 rows of the padding.
    assert!(op_count(g, "Slice") >= 1);
    let listing = main_listing(&m);
    let count = g.node.iter().find(|n| n.output[0] == "y_count").unwrap();
    let min = g
        .node
        .iter()
        .find(|n| n.output[0] == count.input[0])
        .unwrap();
    assert_eq!(min.op_type.as_deref(), Some("Add"), "{listing:#?}");
    // The sum's padding is counted from its own min(count, 3), 2 elements a row; the
    // compaction's padding, which nothing reads here, is gone (emit-static's dead.rs).
    for line in [
        "Less(NonZero_nz/add,ReduceSum_s/const)",
        "Mul(ReduceSum_s/add,",
        "Where(ReduceSum_s/",
    ] {
        assert!(
            listing.iter().any(|l| l.starts_with(line)),
            "{line}: {listing:#?}"
        );
    }
    assert!(
        !listing
            .iter()
            .any(|l| l.starts_with("Slice(") && l.contains("/not")),
        "{listing:#?}"
    );
}

/// `rows.reshape(len(rows), -1)` and `cat([full_like(rows[:, :1], 3), rows], 1)` of `x[m]`: the
/// size read from the rows stands for their count only as their own size (emit-static's
/// padding/shapes.rs), and `full_like` is padded alike.
fn sized_by_rows() -> Vec<u8> {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["rows"], vec![]),
            node("Shape", &["rows"], &["shape"], vec![]),
            node(
                "Gather",
                &["shape", "zero_s"],
                &["count"],
                vec![int("axis", 0)],
            ),
            node("Unsqueeze", &["count", "zero"], &["count1"], vec![]),
            node(
                "Concat",
                &["count1", "minus1"],
                &["size"],
                vec![int("axis", 0)],
            ),
            node("Reshape", &["rows", "size"], &["y"], vec![]),
            node("Slice", &["rows", "zero", "one", "one"], &["first"], vec![]),
            node("Shape", &["first"], &["first_shape"], vec![]),
            node("ConstantOfShape", &["first_shape"], &["ids"], vec![]),
            node("Concat", &["ids", "rows"], &["w"], vec![int("axis", 1)]),
        ],
        vec![
            value("m", DataType::Bool, Some(&["n"])),
            value("x", DataType::Float, Some(&["n", "2"])),
        ],
        &["y", "w"],
        vec![
            int64s("zero", &[0]),
            int64s("one", &[1]),
            int64s("minus1", &[-1]),
            TensorProto {
                dims: vec![],
                ..int64s("zero_s", &[0])
            },
        ],
    );
    model(g, 17)
}

#[test]
fn the_rows_size_and_full_like_are_padded_alike() {
    let options = static_options(&[("m", &[7]), ("x", &[7, 2])]);
    let (_, report) = optimize_with(&sized_by_rows(), &options).expect("static");
    assert!(report.left.is_empty(), "{:?}", report.left);
    let s = report.static_mode.as_ref().unwrap();
    let outputs: Vec<&str> = s.count_outputs.iter().map(|(o, _, _)| o.as_str()).collect();
    assert_eq!(outputs, ["y", "w"]);
}

#[test]
fn the_rows_size_read_as_a_value_stays_dynamic() {
    // len(rows) + 1 as an output is the count plus one: the capacity cannot stand for it.
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["rows"], vec![]),
            node("Shape", &["rows"], &["shape"], vec![]),
            node(
                "Gather",
                &["shape", "zero"],
                &["count"],
                vec![int("axis", 0)],
            ),
            node("Add", &["count", "one"], &["y"], vec![]),
        ],
        vec![
            value("m", DataType::Bool, Some(&["n"])),
            value("x", DataType::Float, Some(&["n", "2"])),
        ],
        &["rows", "y"],
        vec![int64s("zero", &[0]), int64s("one", &[1])],
    );
    let mut options = static_options(&[("m", &[7]), ("x", &[7, 2])]);
    options.allow_dynamic = true;
    let (_, report) = optimize_with(&model(g, 17), &options).expect("static");
    assert_eq!(report.left.len(), 1, "{:?}", report.left);
    assert!(report.left[0].detail.contains("Shape"), "{:?}", report.left);
}
