//! A Range whose length is a tensor value (VITS's frames), run to a capacity: the Range runs to
//! it, each Conv and ConvTranspose along the frames reads its input's padding masked to zero,
//! and the output reached is padded to its capacity with `<name>_count`. Without a capacity the
//! refusal names the option; an op that would read the padding into a real position refuses.
//! tests/static/test_capped_lengths.py runs VITS so on ONNX Runtime against the original.

use super::*;
use crate::{optimize_with, Options};
use nonzero_proto::onnx::tensor_proto::DataType;

/// `lengths` int64 `[2]`; frames `t < lengths[b]` for `t` in `arange(max(lengths))`, as float
/// `[2, 1, T]`, through a Conv (k3, pads 1) and a ConvTranspose (k4, stride 2, pads 1) to `y`
/// `[2, 1, 2T]`; `tail` nodes after, reading `up` (the ConvTranspose's output), write `y`.
fn frames_model(tail: Vec<NodeProto>) -> Vec<u8> {
    let mut nodes = vec![
        node("ReduceMax", &["lengths"], &["n"], vec![int("keepdims", 0)]),
        node("Range", &["zero", "n", "one"], &["t"], vec![]),
        node("Unsqueeze", &["t", "axis0"], &["t_row"], vec![]),
        node("Unsqueeze", &["lengths", "axis1"], &["l_col"], vec![]),
        node("Less", &["t_row", "l_col"], &["valid"], vec![]),
        node("Cast", &["valid"], &["validf"], vec![int("to", 1)]),
        node("Unsqueeze", &["validf", "axis1"], &["x"], vec![]),
        node(
            "Conv",
            &["x", "w"],
            &["h"],
            vec![ints("kernel_shape", &[3]), ints("pads", &[1, 1])],
        ),
        node("Relu", &["h"], &["a"], vec![]),
        node(
            "ConvTranspose",
            &["a", "wt"],
            &["up"],
            vec![
                ints("kernel_shape", &[4]),
                ints("strides", &[2]),
                ints("pads", &[1, 1]),
            ],
        ),
    ];
    nodes.extend(tail);
    let g = graph(
        nodes,
        vec![value("lengths", DataType::Int64, Some(&["2"]))],
        &["y"],
        vec![
            scalar("zero", 0),
            scalar("one", 1),
            int64s("axis0", &[0]),
            int64s("axis1", &[1]),
            float_tensor("w", &[2, 1, 3], &[1.0, 2.0, 3.0, -1.0, 0.5, 1.0]),
            float_tensor(
                "wt",
                &[2, 1, 4],
                &[1.0, 1.0, 0.5, 0.25, -1.0, 2.0, 1.0, 1.0],
            ),
        ],
    );
    model(g, 17)
}

fn identity_tail() -> Vec<NodeProto> {
    vec![node("Identity", &["up"], &["y"], vec![])]
}

fn options(named: &[(&str, i64)], capacity: Option<i64>) -> Options {
    let mut options = static_options(&[]);
    options.capacity = capacity;
    options.output_capacities = named.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    options
}

fn declared(m: &ModelProto, name: &str) -> Option<Vec<Option<i64>>> {
    let g = m.graph.as_ref().unwrap();
    let out = g.output.iter().find(|o| o.name.as_deref() == Some(name))?;
    nonzero_emit_static::inputs::declared(out)
}

#[test]
fn the_frames_run_to_the_capacity_and_each_convolution_reads_them_masked() {
    let (out, report) = optimize_with(&frames_model(identity_tail()), &options(&[("y", 20)], None))
        .expect("static");
    let m = ModelProto::decode(out.as_slice()).unwrap();
    // y is 2T long: 20 samples are 10 frames.
    assert_eq!(output_names(&m), ["y", "y_count"]);
    assert_eq!(declared(&m, "y"), Some(vec![Some(2), Some(1), Some(20)]));
    assert_eq!(declared(&m, "y_count"), Some(vec![]));
    let s = report.static_mode.as_ref().unwrap();
    let line = &s
        .rewrites
        .iter()
        .find(|(k, _)| k == "capped-length")
        .unwrap()
        .1;
    assert!(
        line.contains("runs to the capacity 10")
            && line.contains("2 Convs along it read the padding masked to zero")
            && line.contains("'y' padded to 20 with 'y_count'"),
        "{line}"
    );
    assert!(
        s.to_json()
            .contains("\"count_outputs\": {\"y\": {\"count\": \"y_count\", \"axis\": 2}}"),
        "{}",
        s.to_json()
    );
    let listing = main_listing(&m);
    // Each convolution reads a Where (the padding zero), not the tensor the original read.
    for conv in ["Conv(", "ConvTranspose("] {
        let node = listing.iter().find(|l| l.starts_with(conv)).unwrap();
        let input = node[conv.len()..].split(',').next().unwrap();
        let writer = listing
            .iter()
            .find(|l| l.ends_with(&format!("->{input}")))
            .unwrap();
        assert!(writer.starts_with("Where("), "{node} reads {writer}");
    }
    // The Range runs to the constant 10; nothing reads a Shape.
    let g = m.graph.as_ref().unwrap();
    let range = g
        .node
        .iter()
        .find(|n| n.op_type.as_deref() == Some("Range"))
        .unwrap();
    let limit = g
        .initializer
        .iter()
        .find(|t| t.name.as_ref() == Some(&range.input[1]))
        .unwrap();
    assert_eq!(
        nonzero_rewrite_graph::graph::tensor_ints(limit),
        Some(vec![10])
    );
    assert!(
        !listing.iter().any(|l| l.starts_with("Shape(")),
        "{listing:#?}"
    );
}

#[test]
fn the_capacity_for_every_output_applies_and_a_capacity_is_needed() {
    let (out, _) =
        optimize_with(&frames_model(identity_tail()), &options(&[], Some(7))).expect("static");
    let m = ModelProto::decode(out.as_slice()).unwrap();
    // 7 samples need 4 frames (8 samples), cut to 7.
    assert_eq!(declared(&m, "y"), Some(vec![Some(2), Some(1), Some(7)]));
    // 2^32 samples are 2^31 frames: the Conv's [2, 2, 2^31] would be allocated on every run.
    let why = static_error(
        &frames_model(identity_tail()),
        &options(&[("y", 1 << 32)], None),
    );
    assert!(
        why.contains("at the capacity's Range length 2147483648")
            && why.contains("would hold more than 2^31 elements"),
        "{why}"
    );
    let why = static_error(&frames_model(identity_tail()), &options(&[], None));
    assert!(
        why.contains("Range")
            && why.contains("sets the length of the output 'y': give --capacity y=N"),
        "{why}"
    );
}

#[test]
fn a_sum_over_the_frames_is_refused_by_name() {
    let tail = vec![node(
        "ReduceSum",
        &["up", "axis2"],
        &["y"],
        vec![int("keepdims", 1)],
    )];
    let mut bytes = ModelProto::decode(frames_model(tail).as_slice()).unwrap();
    let g = bytes.graph.as_mut().unwrap();
    g.initializer.push(int64s("axis2", &[2]));
    let why = static_error(&bytes.encode_to_vec(), &options(&[("y", 20)], None));
    assert!(
        why.contains("ReduceSum") && why.contains("reads the capped length's padding"),
        "{why}"
    );
}

#[test]
fn a_shape_read_from_its_last_axis_sizes_frames_padded_alike() {
    // `up + zeros(up.shape[-1:])`: Shape's start -1 counts from the rank.
    let tail = vec![
        node("Shape", &["up"], &["last"], vec![int("start", -1)]),
        node("ConstantOfShape", &["last"], &["zeros"], vec![]),
        node("Add", &["up", "zeros"], &["y"], vec![]),
    ];
    let (out, _) =
        optimize_with(&frames_model(tail), &options(&[("y", 20)], None)).expect("static");
    let m = ModelProto::decode(out.as_slice()).unwrap();
    assert_eq!(declared(&m, "y"), Some(vec![Some(2), Some(1), Some(20)]));
    assert!(!main_listing(&m).iter().any(|l| l.starts_with("Shape(")));
}
