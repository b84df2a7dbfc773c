//! A fixed-shape NMS whose rows every reader cuts to a prefix (torchvision's
//! `keep[:detections_per_img]`; emit-static's nms/fixed.rs `kept_rows`): the Loop makes at most
//! that many picks per list. Values: tests/python/test_static_nms.py (rows cut to a drawn
//! prefix, against ONNX Runtime) and the detectors in tests/static. Last, the NPU targets' unrolled
//! picks past 128 boxes (nms/picks.rs), bounded by the same prefix.

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::ModelProto;
use nonzero_proto::Message;

/// NMS over [2, 3, 5] boxes (max_output from an input: up to all 5 per list), its box-index
/// column cut to the first `keep`; `also_whole`: the uncut rows are a graph output too;
/// `unsqueezed`: the column unsqueezed at that axis before the cut. The model and the fixed
/// NMS's report line, or static mode's refusal.
fn made_static(
    keep: i64,
    also_whole: bool,
    unsqueezed: Option<i64>,
) -> Result<(ModelProto, String), String> {
    let mut outputs = vec!["kept"];
    if also_whole {
        outputs.push("sel");
    }
    let nms = ["boxes", "scores", "max", "iou"];
    let mut nodes = vec![
        node("NonMaxSuppression", &nms, &["sel"], vec![]),
        node("Gather", &["sel", "two"], &["column"], vec![int("axis", 1)]),
    ];
    let mut constants = vec![
        float_tensor("iou", &[1], &[0.5]),
        int64s("two", &[2]),
        int64s("zero", &[0]),
        int64s("keep", &[keep]),
    ];
    let mut cut = "column";
    if let Some(axis) = unsqueezed {
        constants.push(int64s("axes", &[axis]));
        nodes.push(node("Unsqueeze", &["column", "axes"], &["wide"], vec![]));
        cut = "wide";
    }
    nodes.push(node(
        "Slice",
        &[cut, "zero", "keep", "zero"],
        &["kept"],
        vec![],
    ));
    let inputs = vec![
        value("boxes", DataType::Float, Some(&["2", "5", "4"])),
        value("scores", DataType::Float, Some(&["2", "3", "5"])),
        value("max", DataType::Int64, Some(&["1"])),
    ];
    let g = graph(nodes, inputs, &outputs, constants);
    let options = static_options(&[]);
    let (out, report) = optimize_with(&model(g, 13), &options).map_err(|e| e.to_string())?;
    let summary = report.static_mode.as_ref().expect("static report");
    let fixed = summary
        .rewrites
        .iter()
        .find(|(kind, _)| kind == "fixed-nms");
    let (_, line) = fixed.expect("a fixed-shape NMS");
    let m = ModelProto::decode(out.as_slice()).expect("re-parse");
    Ok((m, line.clone()))
}

fn nms_then_prefix(keep: i64, also_whole: bool, unsqueezed: Option<i64>) -> (ModelProto, String) {
    made_static(keep, also_whole, unsqueezed).expect("static")
}

#[test]
fn the_loop_stops_after_the_picks_every_reader_keeps() {
    let (m, line) = nms_then_prefix(4, false, None);
    assert!(
        line.contains("at most 4 picks per batch and class"),
        "{line}"
    );
    assert!(line.contains("its readers keep the first 4 rows"), "{line}");
    // Rows for 2 batches x 3 classes x 4 picks, then the first 4 of them.
    assert!(line.contains("its rows [24, 3]"), "{line}");
    let g = m.graph.as_ref().unwrap();
    let names: Vec<&str> = g.output.iter().map(|o| o.name()).collect();
    assert_eq!(names, ["kept", "kept_count"]);
}

#[test]
fn a_reader_of_every_row_keeps_every_pick() {
    // A prefix longer than the lists bounds nothing either.
    for (keep, also_whole) in [(4, true), (100, false)] {
        let (_, line) = nms_then_prefix(keep, also_whole, None);
        assert!(
            line.contains("at most 5 picks per batch and class"),
            "{line}"
        );
        assert!(!line.contains("readers keep"), "{line}");
    }
}

#[test]
fn a_column_unsqueezed_before_the_cut_stays_dynamic() {
    // At 0 or -2 the column is [1, N], where a Slice of axis 0 would keep every row; the
    // padding follows no Unsqueeze of the column (kept_rows takes positive axes only besides),
    // so the NMS stays dynamic and the report names the reader.
    for axis in [1, 0, -2] {
        let refused = made_static(4, false, Some(axis)).expect_err("stays dynamic");
        let why = "Unsqueeze Unsqueeze_wide reads the padded column";
        assert!(refused.contains(why), "{refused}");
    }
}

/// The NPU targets' NMS past 128 boxes per list (emit-static's nms/picks.rs): NMS over [1, 400]
/// boxes of one class, `max_output` a constant, its rows cut to the first `keep`. The fixed
/// NMS's report line and the main graph's op types.
fn npu_form(max_output: i64, keep: i64) -> (String, Vec<String>) {
    let nodes = vec![
        node(
            "NonMaxSuppression",
            &["boxes", "scores", "max", "iou"],
            &["sel"],
            vec![],
        ),
        node("Slice", &["sel", "zero", "keep", "zero"], &["kept"], vec![]),
    ];
    let constants = vec![
        int64s("max", &[max_output]),
        float_tensor("iou", &[1], &[0.5]),
        int64s("zero", &[0]),
        int64s("keep", &[keep]),
    ];
    let inputs = vec![
        value("boxes", DataType::Float, Some(&["1", "400", "4"])),
        value("scores", DataType::Float, Some(&["1", "1", "400"])),
    ];
    let g = graph(nodes, inputs, &["kept"], constants);
    let mut options = static_options(&[]);
    options.target = nonzero_emit_static::Target::Qnn;
    let (out, report) = optimize_with(&model(g, 13), &options).expect("static");
    assert!(report.left.is_empty(), "{:?}", report.left);
    let summary = report.static_mode.as_ref().expect("static report");
    let (_, line) = summary
        .rewrites
        .iter()
        .find(|(kind, _)| kind == "fixed-nms")
        .expect("a fixed-shape NMS");
    let m = ModelProto::decode(out.as_slice()).expect("re-parse");
    let ops = m
        .graph
        .unwrap()
        .node
        .iter()
        .map(|n| n.op_type().to_string())
        .collect();
    (line.clone(), ops)
}

#[test]
fn the_npu_targets_unroll_up_to_300_picks_past_128_boxes() {
    // Five kept rows: five picks, one ArgMax each, and no Loop.
    let (line, ops) = npu_form(1 << 40, 5);
    assert!(
        line.contains("5 unrolled greedy picks per batch and class"),
        "{line}"
    );
    assert!(!ops.iter().any(|op| op == "Loop"), "{ops:?}");
    assert_eq!(ops.iter().filter(|op| *op == "ArgMax").count(), 5);
    // 300 picks asked: unrolled; 301: past picks.rs's MAX_PICKS, the Loop stays.
    let (line, ops) = npu_form(300, 1000);
    assert!(line.contains("300 unrolled greedy picks"), "{line}");
    assert!(!ops.iter().any(|op| op == "Loop"), "{ops:?}");
    let (line, ops) = npu_form(301, 1000);
    assert!(
        line.contains("a greedy Loop of at most 301 picks"),
        "{line}"
    );
    assert!(ops.iter().any(|op| op == "Loop"), "{ops:?}");
}
