//! Static mode's mask-then-NMS rewrite (static_mode/nms.rs): the graph it writes, and the chains
//! it leaves alone. ONNX Runtime, OpenVINO and IREE check the values (tests/python/test_static.py,
//! tests/static).

use super::*;
use crate::{optimize_with, Options};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{GraphProto, ModelProto, NodeProto};
use nonzero_proto::Message;
use std::collections::BTreeMap;

/// `kept = boxes[m]; kept[nms(kept, scores[score_mask])]`, as TorchScript writes it; with a
/// score threshold input when `threshold`.
fn mask_then_nms(score_mask: &str, threshold: bool) -> Vec<u8> {
    mask_then_nms_read_by(score_mask, threshold, "m")
}

/// The same, the kept boxes gathered from `boxes[read_mask]`.
fn mask_then_nms_read_by(score_mask: &str, threshold: bool, read_mask: &str) -> Vec<u8> {
    let mut nms_inputs = vec!["b3", "s3", "max", "iou"];
    if threshold {
        nms_inputs.push("thr");
    }
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["boxes", "t"], &["kept"], vec![]),
            node("NonZero", &[score_mask], &["nz2"], vec![]),
            node("Transpose", &["nz2"], &["t2"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["scores", "t2"], &["s"], vec![]),
            node("Unsqueeze", &["kept", "zero"], &["b3"], vec![]),
            node("Unsqueeze", &["s", "zero"], &["s2"], vec![]),
            node("Unsqueeze", &["s2", "zero"], &["s3"], vec![]),
            node("NonMaxSuppression", &nms_inputs, &["sel"], vec![]),
            node("Gather", &["sel", "two"], &["col"], vec![int("axis", 1)]),
            node("NonZero", &[read_mask], &["nz3"], vec![]),
            node("Transpose", &["nz3"], &["t3"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["boxes", "t3"], &["read"], vec![]),
            node("Gather", &["read", "col"], &["y"], vec![int("axis", 0)]),
        ],
        vec![
            value("boxes", DataType::Float, Some(&["n", "4"])),
            value("scores", DataType::Float, Some(&["n"])),
            value("m", DataType::Bool, Some(&["n"])),
            value("m2", DataType::Bool, Some(&["n"])),
        ],
        &["y"],
        vec![
            int64s("zero", &[0]),
            int64s("max", &[100]),
            TensorProto {
                dims: vec![],
                ..int64s("two", &[2])
            },
            float1("iou", 0.5),
            float1("thr", 0.25),
        ],
    );
    model(g, 17)
}

fn float1(name: &str, v: f32) -> TensorProto {
    TensorProto {
        dims: vec![1],
        data_type: Some(DataType::Float as i32),
        name: Some(name.into()),
        float_data: vec![v],
        ..Default::default()
    }
}

fn run_static(bytes: &[u8]) -> (ModelProto, crate::Report) {
    let shapes = [
        ("boxes", vec![6, 4]),
        ("scores", vec![6]),
        ("m", vec![6]),
        ("m2", vec![6]),
    ];
    let options = Options {
        static_shapes: true,
        allow_dynamic: true,
        input_shapes: shapes
            .into_iter()
            .map(|(n, d)| (n.to_string(), d))
            .collect::<BTreeMap<_, _>>(),
        ..Options::default()
    };
    let (out, report) = optimize_with(bytes, &options).expect("static");
    (
        ModelProto::decode(out.as_slice()).expect("re-parse"),
        report,
    )
}

fn the_nms(m: &ModelProto) -> &NodeProto {
    let g: &GraphProto = m.graph.as_ref().unwrap();
    g.node
        .iter()
        .find(|n| n.op_type() == "NonMaxSuppression")
        .unwrap()
}

#[test]
fn nms_runs_over_every_box_then_in_a_fixed_shape_and_the_kept_boxes_are_read_from_all() {
    let (m, report) = run_static(&mask_then_nms("m", false));
    let ops = main_listing(&m);
    assert!(
        !ops.iter()
            .any(|n| n.starts_with("NonZero") || n.starts_with("NonMaxSuppression")),
        "{ops:#?}"
    );
    // Scores Where(m, scores, -inf): the boxes masked out pass no score threshold (-inf here),
    // then the greedy Loop over the [1, 1, 6] boxes.
    let has = |prefix: &str, part: &str| {
        ops.iter()
            .any(|n| n.starts_with(prefix) && n.contains(part))
    };
    assert!(has("Where(", ",scores,"), "{ops:#?}");
    assert!(has("Loop(", ""), "{ops:#?}");
    assert!(has("Greater(", ""), "{ops:#?}");
    let summary = report.static_mode.as_ref().unwrap();
    let kinds: Vec<&str> = summary.rewrites.iter().map(|(k, _)| k.as_str()).collect();
    // The three NonZeros of m (boxes[m], scores[m], the read) are one first.
    assert_eq!(
        kinds,
        [
            "duplicate",
            "duplicate",
            "mask-then-nms",
            "nms-reader",
            "fixed-nms"
        ]
    );
    assert!(report.left.is_empty(), "{:?}", report.left);
    // The kept boxes are 6 rows (every box could be kept), zero past `y_count`.
    let g = m.graph.as_ref().unwrap();
    let outputs: Vec<&str> = g.output.iter().map(|o| o.name()).collect();
    assert_eq!(outputs, ["y", "y_count"]);
    assert_eq!(declared_dims(&g.output[0]), [6, 4]);
}

/// The fixed sizes a graph output declares.
fn declared_dims(vi: &nonzero_proto::onnx::ValueInfoProto) -> Vec<i64> {
    use nonzero_proto::onnx::tensor_shape_proto::dimension::Value;
    use nonzero_proto::onnx::type_proto;
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        panic!("{vi:?} is not a tensor");
    };
    let dims = &t.shape.as_ref().expect("a shape").dim;
    dims.iter()
        .map(|d| match d.value {
            Some(Value::DimValue(v)) => v,
            _ => panic!("{vi:?}: a size not fixed"),
        })
        .collect()
}

#[test]
fn a_score_threshold_is_the_fixed_forms_candidates() {
    let (m, report) = run_static(&mask_then_nms("m", true));
    let ops = main_listing(&m);
    // The masked scores (-inf where m is false) against the model's own threshold.
    assert!(
        ops.iter()
            .any(|n| n.starts_with("Greater(") && n.contains(",thr)")),
        "{ops:#?}"
    );
    assert!(report.left.is_empty(), "{:?}", report.left);
}

#[test]
fn an_nms_whose_rows_reach_an_unsafe_reader_keeps_the_exact_form() {
    // A running sum down NMS's rows would read the padding: NMS stays as the mask-then-NMS
    // rewrite left it, over every box, the masked ones scored -inf under a -inf threshold.
    let mut model_proto = ModelProto::decode(mask_then_nms("m", false).as_slice()).unwrap();
    let g = model_proto.graph.as_mut().unwrap();
    g.node
        .push(node("CumSum", &["sel", "zero_axis"], &["top"], vec![]));
    g.initializer.push(TensorProto {
        dims: vec![],
        ..int64s("zero_axis", &[0])
    });
    g.output.push(value("top", DataType::Int64, None));
    let (m, report) = run_static(&model_proto.encode_to_vec());
    let nms = the_nms(&m);
    assert_eq!(nms.input.len(), 5, "{nms:?}");
    assert_eq!(&nms.input[2..4], ["max", "iou"]);
    let left: Vec<String> = report
        .left
        .iter()
        .map(|l| format!("{} {:?}", l.op, l.reason))
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with("NonMaxSuppression"), "{left:?}");
    assert!(report.left[0].detail.contains("CumSum"), "{left:?}");
}

#[test]
fn boxes_and_scores_selected_by_different_masks_are_left() {
    let (m, report) = run_static(&mask_then_nms("m2", false));
    assert_eq!(the_nms(&m).input[..2], ["b3", "s3"]);
    let summary = report.static_mode.as_ref().unwrap();
    assert!(summary.rewrites.iter().all(|(k, _)| k != "mask-then-nms"));
}

#[test]
fn a_gather_of_a_selection_by_another_mask_keeps_the_remapped_indices() {
    let (m, report) = run_static(&mask_then_nms_read_by("m", false, "m2"));
    let summary = report.static_mode.as_ref().unwrap();
    let kinds: Vec<&str> = summary.rewrites.iter().map(|(k, _)| k.as_str()).collect();
    // The NonZeros of m (boxes[m], scores[m]) are one first.
    assert_eq!(kinds, ["duplicate", "mask-then-nms"]);
    // y still gathers boxes[m2] (compacted to a fixed capacity) at NMS's remapped column.
    let last = main_listing(&m).pop().unwrap();
    assert!(
        last.starts_with("Gather(read,") && last.ends_with("->y"),
        "{last}"
    );
}

/// A bare NonMaxSuppression over `[2, 5, 4]` boxes and `[2, 3, 5]` scores, at most 2 per batch
/// and class (`max_output` from a graph input when `max_input`).
fn bare_nms(max_input: bool) -> Vec<u8> {
    let mut inputs = vec![
        value("boxes", DataType::Float, Some(&["2", "5", "4"])),
        value("scores", DataType::Float, Some(&["2", "3", "5"])),
    ];
    let mut initializers = vec![float1("iou", 0.5)];
    if max_input {
        inputs.push(value("max", DataType::Int64, Some(&["1"])));
    } else {
        initializers.push(int64s("max", &[2]));
    }
    let g = graph(
        vec![node(
            "NonMaxSuppression",
            &["boxes", "scores", "max", "iou"],
            &["sel"],
            vec![int("center_point_box", 1)],
        )],
        inputs,
        &["sel"],
        initializers,
    );
    model(g, 13)
}

/// `--static` on a model whose inputs are all fixed.
fn run_bare(bytes: &[u8]) -> (ModelProto, crate::Report) {
    let (out, report) = optimize_with(bytes, &static_options(&[])).expect("static");
    (
        ModelProto::decode(out.as_slice()).expect("re-parse"),
        report,
    )
}

#[test]
fn a_bare_nms_becomes_a_greedy_loop_with_rows_for_every_batch_and_class() {
    for (max_input, rows) in [(false, 2 * 3 * 2), (true, 2 * 3 * 5)] {
        let (m, report) = run_bare(&bare_nms(max_input));
        let g = m.graph.as_ref().unwrap();
        let ops = main_listing(&m);
        assert!(
            !ops.iter().any(|n| n.starts_with("NonMaxSuppression")),
            "{ops:#?}"
        );
        assert_eq!(ops.iter().filter(|n| n.starts_with("Loop(")).count(), 1);
        // Every batch and class keeps at most K boxes: K = 2 from the constant, all 5 when the
        // bound is only known at run time.
        assert_eq!(
            declared_dims(&g.output[0]),
            [rows, 3],
            "max from an input: {max_input}"
        );
        assert_eq!(g.output[1].name(), "sel_count");
        assert!(report.left.is_empty(), "{:?}", report.left);
        let summary = report.static_mode.as_ref().unwrap();
        let line = &summary.rewrites.last().unwrap().1;
        assert!(line.contains("over [2, 3, 5] boxes"), "{line}");
    }
}

#[test]
fn an_nms_without_max_output_boxes_keeps_no_box() {
    // ONNX's default max_output_boxes_per_class is 0: an empty [0, 3], no Loop.
    let g = graph(
        vec![node(
            "NonMaxSuppression",
            &["boxes", "scores"],
            &["sel"],
            vec![],
        )],
        vec![
            value("boxes", DataType::Float, Some(&["1", "5", "4"])),
            value("scores", DataType::Float, Some(&["1", "1", "5"])),
        ],
        &["sel"],
        vec![],
    );
    let (m, report) = run_bare(&model(g, 13));
    assert_eq!(declared_dims(&m.graph.as_ref().unwrap().output[0]), [0, 3]);
    assert!(!main_listing(&m).iter().any(|n| n.starts_with("Loop(")));
    assert!(report.left.is_empty(), "{:?}", report.left);
}

/// Every float initializer value of `m`'s main graph.
fn float_constants(m: &ModelProto) -> Vec<f32> {
    let g = m.graph.as_ref().unwrap();
    g.initializer
        .iter()
        .filter(|t| t.data_type == Some(DataType::Float as i32))
        .flat_map(|t| {
            let raw = t.raw_data.clone().unwrap_or_default();
            let from_raw: Vec<f32> = raw
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            from_raw.into_iter().chain(t.float_data.clone())
        })
        .collect()
}

/// The NPU targets score the masked-out boxes with the lowest finite float, not -inf: onnx2tf's
/// flatbuffer_direct backend writes a -inf operand of Where as -3.4e38 but keeps a -inf
/// threshold, so that every masked box passed it (LiteRT counted all of them); RKNN, float16's
/// lowest (-65504). The default form keeps -inf.
#[test]
fn the_npu_targets_score_masked_boxes_with_no_infinity() {
    let bytes = mask_then_nms("m", false);
    let (generic, _) = run_static(&bytes);
    assert!(float_constants(&generic).contains(&f32::NEG_INFINITY));
    for target in [
        nonzero_emit_static::Target::Qnn,
        nonzero_emit_static::Target::Litert,
        nonzero_emit_static::Target::Rknn,
    ] {
        let options = Options {
            static_shapes: true,
            target,
            input_shapes: [
                ("boxes", vec![6, 4]),
                ("scores", vec![6]),
                ("m", vec![6]),
                ("m2", vec![6]),
            ]
            .into_iter()
            .map(|(n, d)| (n.to_string(), d))
            .collect(),
            ..Options::default()
        };
        let (out, report) = optimize_with(&bytes, &options).expect("static");
        assert!(report.left.is_empty(), "{:?}", report.left);
        let m = ModelProto::decode(out.as_slice()).expect("re-parse");
        let constants = float_constants(&m);
        assert!(
            constants.iter().all(|v| v.is_finite()),
            "{target:?}: {constants:?}"
        );
        // RKNN's converter corrects a constant below -3e38 to -10000 in the scores but not in
        // the threshold: it gets float16's lowest, which it keeps.
        let lowest = match target {
            nonzero_emit_static::Target::Rknn => -65504.0,
            _ => f32::MIN,
        };
        assert!(constants.contains(&lowest), "{target:?}: {constants:?}");
        assert!(
            target != nonzero_emit_static::Target::Rknn || !constants.contains(&f32::MIN),
            "{constants:?}"
        );
    }
}
