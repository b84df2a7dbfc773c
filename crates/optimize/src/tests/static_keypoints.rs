//! A keypoint detector's tail as the dynamo exporter writes SuperPoint's (models/real/families;
//! issue 37, item 6): the pixels above a threshold, those away from the border (their
//! coordinates compared with fixed bounds: a second selection of the first's rows), each
//! kept keypoint's descriptor sampled with GridSample and normalised within its row, and the
//! scores written into `zeros(1, len(keypoints))` by a ScatterElements along the batch axis.
//! Emit-static's padding/index.rs, mod.rs (rows of NonZero's layout, GatherND of coordinate
//! rows), rows.rs (GridSample, unit-axis Reshape, ScatterElements along another axis),
//! shapes.rs (`Shape(q, 0, 1)`, Expand of a fill). Values: the SuperPoint export in tests/static,
//! and tests/python/test_static_keypoints.py.

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;
use nonzero_rewrite_analysis::findings::Reason;

/// The tail on scores `s` [6, 8] and a descriptor map `d` [1, 4, 3, 4]; `bound` is what the
/// rows are compared with (an initializer, or the graph input `b`); `scatter_axis` is the
/// scores' write axis (0: the batch, as SuperPoint's; 1: the padded one).
fn tail(bound: &str, scatter_axis: i64) -> Vec<u8> {
    let nodes = vec![
        node("Greater", &["s", "threshold"], &["m"], vec![]),
        node("NonZero", &["m"], &["nz"], vec![]),
        node(
            "Transpose",
            &["nz"],
            &["points"],
            vec![ints("perm", &[1, 0])],
        ),
        // The row of each pixel (a Gather of NonZero's own layout), and its column (a Slice
        // of width one, squeezed).
        node("Gather", &["nz", "zero"], &["r"], vec![int("axis", 0)]),
        node(
            "Slice",
            &["nz", "one_list", "two_list", "zero_list"],
            &["c1"],
            vec![],
        ),
        node("Squeeze", &["c1", "zero_list"], &["c"], vec![]),
        node("GreaterOrEqual", &["r", bound], &["r_low"], vec![]),
        node("Less", &["r", "five"], &["r_high"], vec![]),
        node("GreaterOrEqual", &["c", "one"], &["c_low"], vec![]),
        node("Less", &["c", "seven"], &["c_high"], vec![]),
        node("And", &["r_low", "r_high"], &["r_in"], vec![]),
        node("And", &["c_low", "c_high"], &["c_in"], vec![]),
        node("And", &["r_in", "c_in"], &["inside"], vec![]),
        node("NonZero", &["inside"], &["nz2"], vec![]),
        node(
            "Transpose",
            &["nz2"],
            &["kept"],
            vec![ints("perm", &[1, 0])],
        ),
        // The kept points' coordinates and scores.
        node("GatherND", &["points", "kept"], &["keypoints"], vec![]),
        node("GatherND", &["s", "points"], &["all_scores"], vec![]),
        node("GatherND", &["all_scores", "kept"], &["scores"], vec![]),
        // Descriptors sampled at the keypoints, normalised within each row.
        node("Cast", &["keypoints"], &["kf"], vec![int("to", 1)]),
        node("Div", &["kf", "scale"], &["g"], vec![]),
        node("Reshape", &["g", "grid_shape"], &["grid"], vec![]),
        node(
            "GridSample",
            &["d", "grid"],
            &["sampled"],
            vec![int("align_corners", 1)],
        ),
        node("Reshape", &["sampled", "rows_shape"], &["v"], vec![]),
        node(
            "ReduceL2",
            &["v", "one_list"],
            &["norm"],
            vec![int("keepdims", 1)],
        ),
        node("Clip", &["norm", "eps"], &["clamped"], vec![]),
        node(
            "Shape",
            &["keypoints"],
            &["n"],
            vec![int("start", 0), int("end", 1)],
        ),
        node(
            "Concat",
            &["one_four", "n"],
            &["desc_shape"],
            vec![int("axis", 0)],
        ),
        node("Expand", &["clamped", "desc_shape"], &["divisor"], vec![]),
        node("Div", &["v", "divisor"], &["descriptors"], vec![]),
        // `out = zeros(1, n); out[0] = scores`, as select_scatter.
        node(
            "Concat",
            &["one_list", "n"],
            &["out_shape"],
            vec![int("axis", 0)],
        ),
        node("Expand", &["zero_f", "out_shape"], &["zeros"], vec![]),
        node("Unsqueeze", &["scores", "zero_list"], &["row"], vec![]),
        node("Shape", &["row"], &["row_shape"], vec![]),
        node("Expand", &["zero", "row_shape"], &["at"], vec![]),
        node(
            "ScatterElements",
            &["zeros", "at", "row"],
            &["written"],
            vec![int("axis", scatter_axis)],
        ),
    ];
    let scalar = |name: &str, v: i64| TensorProto {
        dims: vec![],
        ..int64s(name, &[v])
    };
    let mut inputs = vec![
        value("s", DataType::Float, Some(&["6", "8"])),
        value("d", DataType::Float, Some(&["1", "4", "3", "4"])),
    ];
    if bound == "b" {
        inputs.push(value("b", DataType::Int64, Some(&[])));
    }
    let g = graph(
        nodes,
        inputs,
        &["keypoints", "descriptors", "written"],
        vec![
            float_tensor("threshold", &[], &[0.5]),
            float_tensor("scale", &[2], &[5.0, 7.0]),
            float_tensor("eps", &[], &[1e-12]),
            float_tensor("zero_f", &[], &[0.0]),
            scalar("zero", 0),
            scalar("one", 1),
            scalar("five", 5),
            scalar("seven", 7),
            int64s("zero_list", &[0]),
            int64s("one_list", &[1]),
            int64s("two_list", &[2]),
            int64s("one_four", &[1, 4]),
            int64s("grid_shape", &[1, 1, -1, 2]),
            int64s("rows_shape", &[1, 4, -1]),
        ],
    );
    model(g, 18)
}

fn made_static(bytes: &[u8]) -> (ModelProto, crate::Report) {
    let (out, report) = optimize_with(bytes, &static_options(&[])).expect("static");
    (ModelProto::decode(out.as_slice()).unwrap(), report)
}

fn left_reasons(bytes: &[u8]) -> Vec<(String, Reason, String)> {
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) = optimize_with(bytes, &options).expect("allow-dynamic");
    report
        .left
        .iter()
        .map(|l| (l.op.clone(), l.reason, l.detail.clone()))
        .collect()
}

#[test]
fn keypoints_off_the_border_and_their_descriptors_become_static() {
    let (m, report) = made_static(&tail("one", 0));
    assert!(report.left.is_empty(), "{:?}", report.left);
    let g = m.graph.as_ref().unwrap();
    let ops: Vec<&str> = g.node.iter().filter_map(|n| n.op_type.as_deref()).collect();
    assert!(!ops.contains(&"NonZero"), "{ops:?}");
    assert!(ops.contains(&"GridSample"), "{ops:?}");
    // Every output is padded to the capacity (48 pixels), with its count beside it.
    let outputs: Vec<&str> = g.output.iter().filter_map(|o| o.name.as_deref()).collect();
    for name in ["keypoints", "descriptors", "written"] {
        assert!(
            outputs.contains(&format!("{name}_count").as_str()),
            "{outputs:?}"
        );
    }
    let counts = &report.static_mode.as_ref().unwrap().count_outputs;
    assert_eq!(counts.len(), 3, "{counts:?}");
}

#[test]
fn a_coordinate_compared_with_a_bound_known_only_at_run_time_stays_dynamic() {
    let left = left_reasons(&tail("b", 0));
    let (op, reason, detail) = &left[0];
    assert_eq!(
        (op.as_str(), *reason),
        ("NonZero", Reason::PaddingUnsafe),
        "{left:?}"
    );
    assert!(detail.contains("GreaterOrEqual"), "{detail}");
}

#[test]
fn a_write_along_the_padded_axis_stays_dynamic() {
    // out[0, at] = row with `at` all zeros along the keypoints: every keypoint writes column 0,
    // so the padding's rows would land among the real ones.
    let left = left_reasons(&tail("one", 1));
    assert!(
        left.iter().any(|(op, reason, detail)| op == "NonZero"
            && *reason == Reason::PaddingUnsafe
            && detail.contains("ScatterElements")),
        "{left:?}"
    );
}
