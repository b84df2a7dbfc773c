//! A detector head's work on padded detections (emit-static's padding/spatial.rs: Conv,
//! pooling and a Resize that keeps the batch axis, each map on its own) and the Loop that runs
//! once per detection (counted_loops.rs). Values: tests/python/test_static_counted_loop.py and
//! Keypoint R-CNN in tests/static.

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;
use nonzero_rewrite_analysis::findings::Reason;

/// `m` [6] selects maps of `x` [6, 2, 4, 4] (NonZero, Transpose, Squeeze, Gather), then `head`
/// on them; the result is the graph output `y`.
fn selected_maps(head: Vec<NodeProto>, mut constants: Vec<TensorProto>) -> Vec<u8> {
    let mut nodes = vec![
        node("NonZero", &["m"], &["coords"], vec![]),
        node(
            "Transpose",
            &["coords"],
            &["column"],
            vec![ints("perm", &[1, 0])],
        ),
        node("Squeeze", &["column", "one"], &["index"], vec![]),
        node("Gather", &["x", "index"], &["maps"], vec![int("axis", 0)]),
    ];
    nodes.extend(head);
    constants.push(int64s("one", &[1]));
    let inputs = vec![
        value("x", DataType::Float, Some(&["6", "2", "4", "4"])),
        value("m", DataType::Bool, Some(&["6"])),
    ];
    model(graph(nodes, inputs, &["y"], constants), 13)
}

fn conv_weights() -> Vec<TensorProto> {
    vec![float_tensor("w", &[3, 2, 1, 1], &[0.5; 6])]
}

#[test]
fn conv_and_a_resize_of_the_maps_keep_them_rows() {
    let head = vec![
        node("Conv", &["maps", "w"], &["conv"], vec![]),
        node("Resize", &["conv", "", "scales"], &["y"], vec![]),
    ];
    let mut constants = conv_weights();
    constants.push(float_tensor("scales", &[4], &[1.0, 1.0, 2.0, 2.0]));
    let (out, report) =
        optimize_with(&selected_maps(head, constants), &static_options(&[])).expect("static");
    assert!(report.left.is_empty(), "{:?}", report.left);
    let m = ModelProto::decode(out.as_slice()).expect("re-parse");
    let names: Vec<&str> = m
        .graph
        .as_ref()
        .unwrap()
        .output
        .iter()
        .map(|o| o.name())
        .collect();
    assert_eq!(names, ["y", "y_count"]);
}

#[test]
fn a_resize_of_the_batch_axis_mixes_rows_and_stays_dynamic() {
    let head = vec![node("Resize", &["maps", "", "scales"], &["y"], vec![])];
    let constants = vec![float_tensor("scales", &[4], &[2.0, 1.0, 1.0, 1.0])];
    let options = static_options(&[]);
    let mut options = options;
    options.allow_dynamic = true;
    let (_, report) = optimize_with(&selected_maps(head, constants), &options).expect("static");
    let left = &report.left[0];
    assert_eq!(left.reason, Reason::PaddingUnsafe);
    assert!(left.detail.contains("Resize"), "{}", left.detail);
}

#[test]
fn a_conv_whose_weights_are_the_maps_stays_dynamic() {
    // The maps as the weights: every output row would read every padded row.
    let head = vec![node("Conv", &["x", "maps"], &["y"], vec![])];
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) = optimize_with(&selected_maps(head, vec![]), &options).expect("static");
    assert_eq!(report.left[0].reason, Reason::PaddingUnsafe);
    assert!(
        report.left[0].detail.contains("Conv"),
        "{}",
        report.left[0].detail
    );
}

#[test]
fn a_loop_once_per_map_gets_the_count_as_its_trip_count() {
    let body = graph(
        vec![
            node("Gather", &["maps", "i"], &["map"], vec![int("axis", 0)]),
            node("Identity", &["cond_in"], &["cond_out"], vec![]),
            node("Identity", &["map"], &["row"], vec![]),
        ],
        vec![
            value("i", DataType::Int64, Some(&[])),
            value("cond_in", DataType::Bool, Some(&[])),
        ],
        &["cond_out", "row"],
        vec![],
    );
    let head = vec![
        node("Shape", &["maps"], &["shape"], vec![]),
        node(
            "Gather",
            &["shape", "zero"],
            &["count"],
            vec![int("axis", 0)],
        ),
        node(
            "Loop",
            &["count", "yes"],
            &["y"],
            vec![graph_attr("body", body)],
        ),
    ];
    let scalar = |name: &str, data_type: DataType, value: i64| TensorProto {
        data_type: Some(data_type as i32),
        name: Some(name.into()),
        int64_data: (data_type == DataType::Int64)
            .then_some(value)
            .into_iter()
            .collect(),
        int32_data: (data_type == DataType::Bool)
            .then_some(value as i32)
            .into_iter()
            .collect(),
        ..Default::default()
    };
    let constants = vec![
        scalar("zero", DataType::Int64, 0),
        scalar("yes", DataType::Bool, 1),
    ];
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (out, report) = optimize_with(&selected_maps(head, constants), &options).expect("static");
    let summary = report.static_mode.as_ref().expect("static report");
    assert!(summary
        .rewrites
        .iter()
        .any(|(kind, _)| kind == "counted-loop"));
    assert!(
        !report.left.iter().any(|l| l.op == "NonZero"),
        "{:?}",
        report.left
    );
    let m = ModelProto::decode(out.as_slice()).expect("re-parse");
    let g = m.graph.as_ref().unwrap();
    let lp = g.node.iter().find(|n| n.op_type() == "Loop").unwrap();
    // Its trip count is computed from the selection (not the Shape read of the capacity), and
    // its body reads the maps cut to it.
    assert_ne!(lp.input[0], "count");
    let body = lp.attribute[0].g.as_ref().unwrap();
    let read = &body.node[0].input[0];
    let cut = g
        .node
        .iter()
        .find(|n| &n.output[0] == read)
        .expect("the cut");
    assert_eq!((cut.op_type(), cut.input[0].as_str()), ("Slice", "maps"));
}

#[test]
fn a_pad_of_each_map_keeps_rows_and_a_pad_of_the_batch_does_not() {
    for (pads, rows) in [
        ([0, 0, 1, 1, 0, 0, 1, 1], true),
        ([1, 0, 0, 0, 0, 0, 0, 0], false),
    ] {
        let head = vec![node("Pad", &["maps", "pads"], &["y"], vec![])];
        let mut options = static_options(&[]);
        options.allow_dynamic = true;
        let bytes = selected_maps(head, vec![int64s("pads", &pads)]);
        let (_, report) = optimize_with(&bytes, &options).expect("static");
        assert_eq!(report.left.is_empty(), rows, "{pads:?}: {:?}", report.left);
        if !rows {
            assert!(
                report.left[0].detail.contains("Pad"),
                "{}",
                report.left[0].detail
            );
        }
    }
}

#[test]
fn maps_picked_at_indices_of_another_selection_stay_dynamic() {
    // `x[m][arange(len) * 2 + c]` with `c` selected by a second mask: not this selection's rows.
    let head = vec![
        node("Flatten", &["maps"], &["flat"], vec![int("axis", 2)]),
        node("NonZero", &["m2"], &["c2"], vec![]),
        node("Reshape", &["c2", "minus_one"], &["c"], vec![]),
        node("Gather", &["flat", "c"], &["y"], vec![int("axis", 0)]),
    ];
    let mut bytes_model =
        ModelProto::decode(selected_maps(head, vec![int64s("minus_one", &[-1])]).as_slice())
            .unwrap();
    let g = bytes_model.graph.as_mut().unwrap();
    g.input.push(value("m2", DataType::Bool, Some(&["6"])));
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) = optimize_with(&bytes_model.encode_to_vec(), &options).expect("static");
    let left: Vec<&str> = report.left.iter().map(|l| l.detail.as_str()).collect();
    assert!(
        left.iter()
            .any(|d| d.contains("Gather_y") && d.contains("not the coordinates")),
        "{left:?}"
    );
}
