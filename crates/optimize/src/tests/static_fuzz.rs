//! What the fuzz target `optimize_static` found (docs/reliability.md, "Static mode under the
//! fuzzer"): each a minimal model, its crash input under fuzz/seeds/optimize_static/.

use super::*;
use crate::{optimize_with, Options, Reason};
use nonzero_emit_static::inputs::declared;

fn static_model(bytes: &[u8], options: &Options) -> ModelProto {
    let (out, _) = optimize_with(bytes, options).expect("made static");
    ModelProto::decode(out.as_slice()).expect("parses")
}

/// `y = Transpose(NonZero(x))`, x float `[a, b]`: the exporters' `torch.nonzero`.
fn nonzero_transposed() -> GraphProto {
    graph(
        vec![
            node("NonZero", &["x"], &["c"], vec![]),
            node("Transpose", &["c"], &["y"], vec![ints("perm", &[1, 0])]),
        ],
        vec![value("x", DataType::Float, Some(&["a", "b"]))],
        &["y"],
        vec![],
    )
}

/// A `value_info` written before the rewrites (an exporter's `[2, u0]` for NonZero's output)
/// is declared with the fixed shape the rewrites give it, as the graph outputs are.
/// Found at once, by the seed fuzz/seeds/optimize_static/nonzero_dynamo18.
#[test]
fn a_value_info_of_a_compacted_nonzero_gets_its_fixed_shape() {
    let mut g = nonzero_transposed();
    g.value_info
        .push(value("c", DataType::Int64, Some(&["2", "u0"])));
    let options = static_options(&[("x", &[3, 4])]);
    let m = static_model(&model(g, 17), &options);
    let g = m.graph.as_ref().unwrap();
    let infos: Vec<_> = g
        .value_info
        .iter()
        .map(|vi| (vi.name.clone(), declared(vi)))
        .collect();
    assert_eq!(
        infos,
        [(Some("c".to_string()), Some(vec![Some(2), Some(12)]))]
    );
    assert_eq!(declared(&g.output[0]), Some(vec![Some(12), Some(2)]));
    // Made static again, it is the same model.
    let again = static_model(&m.encode_to_vec(), &options);
    assert_eq!(again, m);
}

/// A `value_info` that contradicts the inference (int64 coordinates declared float, of no
/// shape) leaves it and what is computed from it unproven: nothing else is dynamic, so those
/// declarations are reported `shape-not-fixed`, not written as if static.
/// fuzz/seeds/optimize_static/regress_contradicting_value_info.
#[test]
fn a_declaration_the_inference_contradicts_is_not_written_as_static() {
    let mut g = nonzero_transposed();
    g.value_info.push(value("c", DataType::Float, None));
    let bytes = model(g, 17);
    let options = static_options(&[("x", &[3, 4])]);
    let why = match optimize_with(&bytes, &options) {
        Err(crate::OptimizeError::Static(why)) => why,
        other => panic!("expected a static-mode error, got {other:?}"),
    };
    let tail = "is declared with no tensor shape; the inference proves no fixed shape for it, or contradicts its declaration)";
    assert_eq!(
        why,
        format!("2 nodes are still dynamic, nothing written (--allow-dynamic writes it anyway):\n  Transpose Transpose_y in main: shape-not-fixed ('y' {tail}\n  Add NonZero_c/Add_2 in main: shape-not-fixed ('c' {tail}\nstill dynamic: 1 Add shape-not-fixed, 1 Transpose shape-not-fixed")
    );
    let written = Options {
        allow_dynamic: true,
        ..options
    };
    let (_, report) = optimize_with(&bytes, &written).expect("written anyway");
    let left: Vec<_> = report
        .left
        .iter()
        .map(|l| (l.node.as_str(), l.reason))
        .collect();
    assert_eq!(
        left,
        [
            ("Transpose_y", Reason::ShapeNotFixed),
            ("NonZero_c/Add_2", Reason::ShapeNotFixed)
        ]
    );
}

/// A Reshape of a Constant node's output: the linear-index matcher read the input of the node
/// before its Reshapes without checking it had one (a panic). Found by the fuzz target in the
/// CI run of 2026-11-27; its input is fuzz/seeds/optimize_static/reshape_of_constant.
#[test]
fn a_reshape_of_a_constant_node_is_not_a_linear_index() {
    let tensor = TensorProto {
        dims: vec![4],
        data_type: Some(DataType::Float as i32),
        float_data: vec![1.0, 0.0, 2.0, 0.0],
        ..Default::default()
    };
    let constant = NodeProto {
        output: vec!["c".into()],
        op_type: Some("Constant".into()),
        attribute: vec![AttributeProto {
            name: Some("value".into()),
            r#type: Some(nonzero_proto::onnx::attribute_proto::AttributeType::Tensor as i32),
            t: Some(tensor),
            ..Default::default()
        }],
        ..Default::default()
    };
    let g = graph(
        vec![
            constant,
            node("Reshape", &["c", "shape"], &["r"], vec![]),
            node("Add", &["r", "x"], &["s"], vec![]),
            node("NonZero", &["s"], &["y"], vec![]),
        ],
        vec![value("x", DataType::Float, Some(&["2", "2"]))],
        &["y"],
        vec![int64s("shape", &[2, 2])],
    );
    let (_, report) = optimize_with(&model(g, 17), &static_options(&[])).expect("static");
    assert!(report.left.is_empty(), "{:?}", report.left);
}

/// An NMS over 2^32 boxes: the fixed form multiplied `B * C * N * N` unchecked (an overflow
/// panic); its lists now count against the padded limit, and the NMS stays dynamic with that
/// reason. Found by the fuzz target in the CI run of 2026-11-27 (mask_nms_ts17 with n = 2^32);
/// its input is fuzz/seeds/optimize_static/nms_past_the_limit.
#[test]
fn an_nms_past_the_padded_limit_stays_dynamic_and_says_why() {
    let g = graph(
        vec![node(
            "NonMaxSuppression",
            &["boxes", "scores", "most"],
            &["y"],
            vec![],
        )],
        vec![
            value("boxes", DataType::Float, Some(&["1", "n", "4"])),
            value("scores", DataType::Float, Some(&["1", "1", "n"])),
        ],
        &["y"],
        vec![int64s("most", &[10])],
    );
    let n = 1i64 << 32;
    let options = Options {
        allow_dynamic: true,
        ..static_options(&[("boxes", &[1, n, 4]), ("scores", &[1, 1, n])])
    };
    let (_, report) = optimize_with(&model(g, 17), &options).expect("written anyway");
    let left: Vec<_> = report
        .left
        .iter()
        .map(|l| (l.node.as_str(), l.reason, l.detail.as_str()))
        .collect();
    assert_eq!(
        left,
        [(
            "NonMaxSuppression_y",
            Reason::DataDependent,
            "NonMaxSuppression: its scores [1, 1, 4294967296] hold more than static mode's limit of 2^31 elements (docs/static.md, \"Capacity\")"
        )]
    );
}
