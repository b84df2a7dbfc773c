//! A fixed-shape NMS whose rows every reader cuts to a prefix (torchvision's
//! `keep[:detections_per_img]`; emit-static's nms/fixed.rs `kept_rows`): the Loop makes at most
//! that many picks per list. Values: tests/python/test_static_nms.py (rows cut to a drawn
//! prefix, against ONNX Runtime) and the detectors in tests/static.

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
