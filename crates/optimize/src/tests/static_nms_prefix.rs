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
/// column cut to the first `keep`; `also_whole`: the uncut rows are a graph output too.
fn nms_then_prefix(keep: i64, also_whole: bool) -> (ModelProto, String) {
    let mut outputs = vec!["kept"];
    if also_whole {
        outputs.push("sel");
    }
    let g = graph(
        vec![
            node(
                "NonMaxSuppression",
                &["boxes", "scores", "max", "iou"],
                &["sel"],
                vec![],
            ),
            node("Gather", &["sel", "two"], &["column"], vec![int("axis", 1)]),
            node(
                "Slice",
                &["column", "zero", "keep", "zero"],
                &["kept"],
                vec![],
            ),
        ],
        vec![
            value("boxes", DataType::Float, Some(&["2", "5", "4"])),
            value("scores", DataType::Float, Some(&["2", "3", "5"])),
            value("max", DataType::Int64, Some(&["1"])),
        ],
        &outputs,
        vec![
            float_tensor("iou", &[1], &[0.5]),
            int64s("two", &[2]),
            int64s("zero", &[0]),
            int64s("keep", &[keep]),
        ],
    );
    let (out, report) = optimize_with(&model(g, 13), &static_options(&[])).expect("static");
    let summary = report.static_mode.as_ref().expect("static report");
    let (_, line) = summary
        .rewrites
        .iter()
        .find(|(kind, _)| kind == "fixed-nms")
        .expect("fixed NMS");
    (
        ModelProto::decode(out.as_slice()).expect("re-parse"),
        line.clone(),
    )
}

#[test]
fn the_loop_stops_after_the_picks_every_reader_keeps() {
    let (m, line) = nms_then_prefix(4, false);
    assert!(
        line.contains("at most 4 picks per batch and class"),
        "{line}"
    );
    assert!(line.contains("its readers keep the first 4 rows"), "{line}");
    // Rows for 2 batches x 3 classes x 4 picks, then the first 4 of them.
    assert!(line.contains("its rows [24, 3]"), "{line}");
    let g = m.graph.as_ref().unwrap();
    assert_eq!(
        g.output.iter().map(|o| o.name()).collect::<Vec<_>>(),
        ["kept", "kept_count"]
    );
}

#[test]
fn a_reader_of_every_row_keeps_every_pick() {
    let (_, line) = nms_then_prefix(4, true);
    assert!(
        line.contains("at most 5 picks per batch and class"),
        "{line}"
    );
    assert!(!line.contains("readers keep"), "{line}");
    // A prefix longer than the lists bounds nothing.
    let (_, line) = nms_then_prefix(100, false);
    assert!(
        line.contains("at most 5 picks per batch and class"),
        "{line}"
    );
    assert!(!line.contains("readers keep"), "{line}");
}
