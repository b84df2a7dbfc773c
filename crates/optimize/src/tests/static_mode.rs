//! Static mode (nonzero-emit-static): what it refuses and why, what it writes. The values are
//! checked on ONNX Runtime, OpenVINO and IREE by tests/python/test_static.py and tests/static.

use super::*;
use crate::{optimize_with, Options, Reason};
use nonzero_proto::onnx::tensor_proto::DataType;

/// `NonZero(x)` of a float `[n, 3]` input, as the graph output `y`.
fn bare_nonzero(opset: i64) -> Vec<u8> {
    let mut g = graph(
        vec![node("NonZero", &["x"], &["y"], vec![])],
        vec![value("x", DataType::Float, Some(&["n", "3"]))],
        &["y"],
        vec![],
    );
    g.output[0] = value("y", DataType::Int64, Some(&["2", "nnz"]));
    model(g, opset)
}

#[test]
fn every_input_needs_a_fixed_shape() {
    let why = static_error(&bare_nonzero(17), &static_options(&[]));
    assert!(
        why.contains("input 'x' has symbolic sizes at axis 0 ('n')"),
        "{why}"
    );
    assert!(why.contains("--input-shape"), "{why}");
    let why = static_error(&bare_nonzero(17), &static_options(&[("z", &[2, 3])]));
    assert!(
        why.contains("the model has no input named 'z' (its inputs: x)"),
        "{why}"
    );
    let why = static_error(&bare_nonzero(17), &static_options(&[("x", &[2])]));
    assert!(why.contains("1 size given, but 'x' has rank 2"), "{why}");
    let why = static_error(&bare_nonzero(17), &static_options(&[("x", &[2, 4])]));
    assert!(
        why.contains("size 4 at axis 1, but the model fixes it to 3"),
        "{why}"
    );
}

#[test]
fn bad_options_are_refused_by_name() {
    let mut options = static_options(&[("x", &[2, 3])]);
    options.capacity = Some(0);
    let why = static_error(&bare_nonzero(17), &options);
    assert!(why.contains("capacity must be at least 1, got 0"), "{why}");
    options.capacity = None;
    options.nonzero_domain = true;
    let why = static_error(&bare_nonzero(17), &options);
    assert!(why.contains("choose one"), "{why}");
}

#[test]
fn bare_nonzero_becomes_padded_coordinates_and_a_count() {
    let mut options = static_options(&[("x", &[2, 3])]);
    options.capacity = Some(4);
    let (bytes, report) = optimize_with(&bare_nonzero(17), &options).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let g = m.graph.as_ref().unwrap();
    assert!(g
        .node
        .iter()
        .all(|n| n.domain.as_deref().unwrap_or("").is_empty()));
    assert!(!g
        .node
        .iter()
        .any(|n| n.op_type.as_deref() == Some("NonZero")));
    let outputs: Vec<&str> = g.output.iter().filter_map(|o| o.name.as_deref()).collect();
    assert_eq!(outputs, ["y", "y_count"]);
    let declared = |i: usize| nonzero_emit_static::inputs::declared(&g.output[i]);
    assert_eq!(
        declared(0),
        Some(vec![Some(2), Some(4)]),
        "y padded to the capacity"
    );
    assert_eq!(declared(1), Some(vec![]), "y_count is a scalar");
    let s = report.static_mode.as_ref().unwrap();
    assert_eq!(
        s.count_outputs,
        [("y".to_string(), "y_count".to_string(), 1)]
    );
    assert_eq!(s.input_shapes, [("x".to_string(), vec![2, 3])]);
    assert_eq!(report.nonzero_left(), 0);
    let json = report.to_json();
    assert!(
        json.contains(r#""count_outputs": {"y": {"count": "y_count", "axis": 1}}"#),
        "{json}"
    );
}

#[test]
fn below_opset_11_nonzero_stays_with_its_reason() {
    let options = static_options(&[("x", &[2, 3])]);
    let why = static_error(&bare_nonzero(10), &options);
    assert!(why.contains("NonZero"), "{why}");
    assert!(why.contains("opset-too-old"), "{why}");
    let mut allowed = options.clone();
    allowed.allow_dynamic = true;
    let (bytes, report) = optimize_with(&bare_nonzero(10), &allowed).expect("allowed");
    assert_eq!(report.left[0].reason, Reason::OpsetTooOld);
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    assert_eq!(
        m.opset_import[0].version,
        Some(10),
        "the opset is never raised"
    );
    assert!(main_listing(&m).contains(&"NonZero(x)->y".to_string()));
}

#[test]
fn a_count_output_name_in_use_is_an_error() {
    let g = graph(
        vec![
            node("NonZero", &["x"], &["y"], vec![]),
            node("Relu", &["x"], &["y_count"], vec![]),
        ],
        vec![value("x", DataType::Float, Some(&["2", "3"]))],
        &["y", "y_count"],
        vec![],
    );
    let why = static_error(&model(g, 17), &static_options(&[]));
    assert!(
        why.contains("already has a tensor named 'y_count'"),
        "{why}"
    );
}

#[test]
fn unsafe_readers_and_value_dependent_ops_are_named() {
    // The coordinates' maximum reads the padding: refused, and so is the maximum of a
    // NonMaxSuppression's rows. Unique's output count and a Reshape to a shape taken from an
    // input's values are data-dependent.
    let g = graph(
        vec![
            node("NonZero", &["x"], &["nz"], vec![]),
            node("ReduceMax", &["nz"], &["top"], vec![int("keepdims", 0)]),
            node("Reshape", &["x", "shape"], &["r"], vec![]),
            node(
                "NonMaxSuppression",
                &["boxes", "scores", "max"],
                &["sel"],
                vec![],
            ),
            node(
                "ReduceMax",
                &["sel"],
                &["top_sel"],
                vec![int("keepdims", 0)],
            ),
            node("Unique", &["x"], &["u"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["2", "3"])),
            value("shape", DataType::Int64, Some(&["1"])),
            value("boxes", DataType::Float, Some(&["1", "4", "4"])),
            value("scores", DataType::Float, Some(&["1", "1", "4"])),
        ],
        &["top", "r", "top_sel", "u"],
        vec![int64s("max", &[2])],
    );
    let why = static_error(&model(g, 17), &static_options(&[]));
    assert!(why.contains("4 nodes are still dynamic"), "{why}");
    assert!(
        why.contains("NonMaxSuppression NonMaxSuppression_sel in main: padding-unsafe (ReduceMax ReduceMax_top_sel reads the padded sel"),
        "{why}"
    );
    assert!(why.contains("Unique"), "{why}");
    assert!(why.contains("NonZero"), "{why}");
    assert!(why.contains("padding-unsafe"), "{why}");
    assert!(why.contains("ReduceMax"), "{why}");
    assert!(why.contains("Reshape"), "{why}");
    assert!(why.contains("value-dependent-shape"), "{why}");
    assert!(why.contains("NonMaxSuppression"), "{why}");
    assert!(why.contains("data-dependent"), "{why}");
}

#[test]
fn library_ops_are_lowered_and_the_domain_goes() {
    // x[m] through GatherND: the default mode writes nonzero.BooleanMask and its function;
    // static mode on that output lowers it back and leaves standard ops only.
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["idx"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "idx"], &["y"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["n", "4"])),
            value("m", DataType::Bool, Some(&["n"])),
        ],
        &["y"],
        vec![],
    );
    let (rewritten, _) = optimize_with(&model(g, 17), &Options::default()).unwrap();
    let first = ModelProto::decode(rewritten.as_slice()).unwrap();
    assert!(main_listing(&first)
        .iter()
        .any(|l| l.starts_with("nonzero.BooleanMask")));
    let options = static_options(&[("x", &[5, 4]), ("m", &[5])]);
    let (bytes, report) = optimize_with(&rewritten, &options).unwrap();
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    assert_eq!(report.static_mode.as_ref().unwrap().lowered, 1);
    assert!(m.functions.is_empty());
    assert!(m
        .opset_import
        .iter()
        .all(|o| o.domain.as_deref().unwrap_or("").is_empty()));
    let listing = main_listing(&m);
    assert!(listing
        .iter()
        .all(|l| !l.starts_with("nonzero.") && !l.starts_with("NonZero")));
    let outputs = output_names(&m);
    assert_eq!(outputs, ["y", "y_count"]);
}

#[test]
fn boolean_mask_axis_and_masked_writes_lower_too() {
    // tf.boolean_mask(x, m, axis=1) with dims named apart (BooleanMaskAxis), and x[m] = x[m] * 2
    // (BooleanMask, MaskedScatter): their bodies are chains static mode knows.
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("Squeeze", &["t", "one"], &["sq"], vec![]),
            node("Gather", &["x", "sq"], &["y"], vec![int("axis", 1)]),
            node("NonZero", &["w"], &["wz"], vec![]),
            node("Transpose", &["wz"], &["wt"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["v", "wt"], &["rows"], vec![]),
            node("Mul", &["rows", "two"], &["twice"], vec![]),
            node("ScatterND", &["v", "wt", "twice"], &["z"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["A", "B", "3"])),
            value("m", DataType::Bool, Some(&["C"])),
            value("v", DataType::Float, Some(&["4", "5"])),
            value("w", DataType::Bool, Some(&["4", "5"])),
        ],
        &["y", "z"],
        vec![
            int64s("one", &[1]),
            TensorProto {
                data_type: Some(DataType::Float as i32),
                name: Some("two".into()),
                float_data: vec![2.0],
                ..Default::default()
            },
        ],
    );
    let (rewritten, report) = optimize_with(&model(g, 17), &Options::default()).unwrap();
    assert_eq!(report.count(crate::Kind::BooleanMaskAxis), 1);
    assert_eq!(report.count(crate::Kind::MaskedScatter), 1);
    let options = static_options(&[("x", &[2, 6, 3]), ("m", &[6])]);
    let (bytes, report) = optimize_with(&rewritten, &options).unwrap();
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    assert_eq!(report.static_mode.as_ref().unwrap().lowered, 3);
    assert!(m.functions.is_empty());
    assert!(main_listing(&m)
        .iter()
        .all(|l| !l.starts_with("nonzero.") && !l.starts_with("NonZero")));
    let outputs = output_names(&m);
    assert_eq!(outputs, ["y", "z", "y_count"]);
}

/// `x[m] = x[m] / v` as exported: ScatterND(x, T, Reshape(Div(GatherND(x, T), v), [-1])), T
/// the coordinates of m; x and m `[4]`, v a scalar of x's type.
fn masked_division(elem: DataType) -> Vec<u8> {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["rows"], vec![]),
            node("Div", &["rows", "v"], &["quotient"], vec![]),
            node("Reshape", &["quotient", "flat"], &["u"], vec![]),
            node("ScatterND", &["x", "t", "u"], &["y"], vec![]),
        ],
        vec![
            value("x", elem, Some(&["4"])),
            value("m", DataType::Bool, Some(&["4"])),
            value("v", elem, Some(&[])),
        ],
        &["y"],
        vec![int64s("flat", &[-1])],
    );
    model(g, 17)
}

#[test]
fn an_integer_division_of_the_selection_stays() {
    // Float: Where(m, x / v, x), exact (a division by zero gives inf or NaN, and only where m
    // selects is it kept).
    let (_, report) =
        optimize_with(&masked_division(DataType::Float), &static_options(&[])).expect("static");
    let kinds = rewrite_kinds(&report);
    assert_eq!(kinds, ["masked-write"]);
    // Integers: the Where form would divide the elements m leaves, and the padding's 0 / v
    // too; ONNX Runtime refuses an integer division by zero, which the original, selecting
    // nothing, never does. The NonZero stays, named.
    let why = static_error(&masked_division(DataType::Int64), &static_options(&[]));
    assert!(why.contains("padding-unsafe"), "{why}");
    assert!(
        why.contains("Div Div_quotient reads the padded rows"),
        "{why}"
    );
}

#[test]
fn an_output_after_elementwise_work_is_padded_again_with_the_fill() {
    // exp(x[m]) and x[m] + 1 hold 1 in their padding: a Where writes +0 there (docs/static.md's
    // fill), as after an MLP. A Cast keeps the fill and needs none.
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["rows"], vec![]),
            node("Exp", &["rows"], &["y"], vec![]),
            node("Add", &["rows", "one"], &["z"], vec![]),
            node(
                "Cast",
                &["rows"],
                &["c"],
                vec![int("to", DataType::Double as i64)],
            ),
        ],
        vec![
            value("m", DataType::Bool, Some(&["5"])),
            value("x", DataType::Float, Some(&["5"])),
        ],
        &["y", "z", "c"],
        vec![float_tensor("one", &[], &[1.0])],
    );
    let (bytes, report) =
        crate::optimize_with(&model(g, 17), &static_options(&[])).expect("static");
    assert!(report.left.is_empty(), "{:?}", report.left);
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let g = m.graph.as_ref().unwrap();
    let writer = |name: &str| {
        g.node
            .iter()
            .find(|n| n.output[0] == name)
            .and_then(|n| n.op_type.clone())
            .unwrap()
    };
    assert_eq!(writer("y"), "Where");
    assert_eq!(writer("z"), "Where");
    assert_eq!(writer("c"), "Cast");
}
