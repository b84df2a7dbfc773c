//! Static mode folds what the fixed shapes decide (nonzero-emit-static's `fold`): shape
//! arithmetic becomes initializers, and the nodes after it get fixed shapes. The values of each
//! op are unit-tested in nonzero-rewrite-analysis (`consts`); here, what the model becomes.

use super::*;
use crate::optimize_with;

/// The initializer `name` of `g`, as int64 values.
fn initializer_ints(g: &GraphProto, name: &str) -> Option<Vec<i64>> {
    let t = g
        .initializer
        .iter()
        .find(|t| t.name.as_deref() == Some(name))?;
    nonzero_rewrite_graph::graph::tensor_ints(t)
}

/// The declared shape of graph output `name`.
fn output_dims(g: &GraphProto, name: &str) -> Vec<i64> {
    let vi = g
        .output
        .iter()
        .find(|o| o.name.as_deref() == Some(name))
        .unwrap();
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref().unwrap().value.as_ref() else {
        panic!("{name} is not a tensor")
    };
    t.shape
        .as_ref()
        .unwrap()
        .dim
        .iter()
        .map(|d| match d.value {
            Some(dimension::Value::DimValue(v)) => v,
            _ => panic!("{name} has a size that is not fixed: {vi:?}"),
        })
        .collect()
}

/// torchvision's `batch_images`: each image padded up to a multiple of 32, its pads computed
/// in float from its shape (`ceil(h / 32) * 32 - h`), then a selection over the padded image.
fn padded_to_stride(input: &[&str]) -> Vec<u8> {
    let nodes = vec![
        node("Shape", &["x"], &["shape"], vec![]),
        node("Gather", &["shape", "two"], &["h"], vec![int("axis", 0)]),
        node(
            "Cast",
            &["h"],
            &["h_f"],
            vec![int("to", DataType::Float as i64)],
        ),
        node("Div", &["h_f", "stride"], &["q"], vec![]),
        node("Ceil", &["q"], &["up"], vec![]),
        node(
            "Cast",
            &["up"],
            &["up_i"],
            vec![int("to", DataType::Int64 as i64)],
        ),
        node("Mul", &["up_i", "stride_i"], &["padded"], vec![]),
        node("Sub", &["padded", "h"], &["extra"], vec![]),
        node(
            "Concat",
            &["zeros6", "extra", "zero1"],
            &["pads"],
            vec![int("axis", 0)],
        ),
        node("Pad", &["x", "pads"], &["p"], vec![]),
        node("Greater", &["p", "half"], &["mask"], vec![]),
        node("NonZero", &["mask"], &["y"], vec![]),
    ];
    let g = graph(
        nodes,
        vec![value("x", DataType::Float, Some(input))],
        &["y"],
        vec![
            int64s("two", &[2]),
            float_tensor("stride", &[], &[32.0]),
            TensorProto {
                dims: vec![],
                ..int64s("stride_i", &[32])
            },
            int64s("zeros6", &[0; 6]),
            int64s("zero1", &[0]),
            float_tensor("half", &[], &[0.5]),
        ],
    );
    model(g, 17)
}

#[test]
fn pads_computed_from_the_shape_become_an_initializer() {
    let bytes = padded_to_stride(&["1", "3", "H", "W"]);
    let options = static_options(&[("x", &[1, 3, 30, 20])]);
    let (out, report) = optimize_with(&bytes, &options).expect("static");
    let m = ModelProto::decode(out.as_slice()).unwrap();
    let g = m.graph.as_ref().unwrap();
    let ops: Vec<String> = main_listing(&m);
    let folded = [
        "shape", "h", "h_f", "q", "up", "up_i", "padded", "extra", "pads",
    ];
    for name in folded {
        let writer = g.node.iter().find(|n| n.output.iter().any(|o| o == name));
        assert!(writer.is_none(), "{name} was not folded: {ops:?}");
    }
    assert!(ops.contains(&"Pad(x,pads)->p".to_string()), "{ops:?}");
    // ceil(30 / 32) * 32 - 30 = 2 rows at the end of axis 2.
    assert_eq!(
        initializer_ints(g, "pads"),
        Some(vec![0, 0, 0, 0, 0, 0, 2, 0])
    );
    assert_eq!(output_dims(g, "y"), vec![4, 3 * 32 * 20]);
    let folded = report
        .static_mode
        .as_ref()
        .unwrap()
        .rewrites
        .iter()
        .find(|(k, _)| k == "folded");
    assert_eq!(
        folded.map(|(_, line)| line.as_str()),
        Some("9 nodes computed from constants and fixed shapes alone became 1 initializer")
    );
}

/// Without fixed shapes nothing is folded: the default mode leaves the arithmetic alone.
#[test]
fn the_default_mode_folds_nothing() {
    let (m, _) = run(&padded_to_stride(&["1", "3", "30", "20"]));
    assert!(
        main_listing(&m).iter().any(|o| o.starts_with("Shape(")),
        "{:?}",
        main_listing(&m)
    );
}

/// Resize's size is ONNX Runtime's: float32 `10 * 0.7f` is 7.0 (in double, 6.99999988).
#[test]
fn resize_sizes_are_float32_products() {
    let nodes = vec![
        node("Mul", &["scales_c", "one"], &["scales"], vec![]),
        node("Resize", &["x", "", "scales"], &["r"], vec![]),
        node("Greater", &["r", "one"], &["mask"], vec![]),
        node("NonZero", &["mask"], &["y"], vec![]),
    ];
    let g = graph(
        nodes,
        vec![value("x", DataType::Float, Some(&["1", "1", "H", "W"]))],
        &["y"],
        vec![
            float_tensor("scales_c", &[4], &[1.0, 1.0, 0.7, 0.7]),
            float_tensor("one", &[], &[1.0]),
        ],
    );
    let options = static_options(&[("x", &[1, 1, 10, 10])]);
    let (out, _) = optimize_with(&model(g, 17), &options).expect("static");
    let m = ModelProto::decode(out.as_slice()).unwrap();
    assert_eq!(output_dims(m.graph.as_ref().unwrap(), "y"), vec![4, 49]);
}

/// A value that depends on a Loop's iteration is not a constant; what the body computes from
/// the enclosing graph's shapes is.
#[test]
fn a_loop_iteration_is_not_a_constant() {
    let body = GraphProto {
        node: vec![
            node("Shape", &["x"], &["outer_shape"], vec![]),
            node("Add", &["i", "outer_shape"], &["moved"], vec![]),
            node("Identity", &["cond"], &["cond_out"], vec![]),
        ],
        input: vec![
            value("i", DataType::Int64, Some(&[])),
            value("cond", DataType::Bool, Some(&[])),
        ],
        output: vec![
            value("cond_out", DataType::Bool, None),
            value("moved", DataType::Int64, None),
        ],
        name: Some("body".into()),
        ..Default::default()
    };
    let g = graph(
        vec![
            node(
                "Loop",
                &["trips", "go"],
                &["moved_all"],
                vec![graph_attr("body", body)],
            ),
            node("Greater", &["x", "zero"], &["mask"], vec![]),
            node("NonZero", &["mask"], &["y"], vec![]),
        ],
        vec![value("x", DataType::Float, Some(&["n"]))],
        &["y", "moved_all"],
        vec![
            TensorProto {
                dims: vec![],
                ..int64s("trips", &[3])
            },
            TensorProto {
                data_type: Some(DataType::Bool as i32),
                int32_data: vec![1],
                int64_data: vec![],
                dims: vec![],
                ..int64s("go", &[])
            },
            float_tensor("zero", &[], &[0.0]),
        ],
    );
    let options = crate::Options {
        allow_dynamic: true,
        ..static_options(&[("x", &[5])])
    };
    let (out, _) = optimize_with(&model(g, 17), &options).expect("static");
    let m = ModelProto::decode(out.as_slice()).unwrap();
    let body = m
        .graph
        .as_ref()
        .unwrap()
        .node
        .iter()
        .find(|n| n.op_type.as_deref() == Some("Loop"))
        .unwrap();
    let body = body.attribute[0].g.as_ref().unwrap();
    let ops = listing(body);
    assert!(
        ops.contains(&"Add(i,outer_shape)->moved".to_string()),
        "{ops:?}"
    );
    assert!(!ops.iter().any(|o| o.starts_with("Shape(")), "{ops:?}");
    assert_eq!(initializer_ints(body, "outer_shape"), Some(vec![5]));
}

/// Einsum's and OneHot's shapes (Longformer's attention, Mixtral's expert mask) fix the
/// selections after them.
#[test]
fn einsum_and_one_hot_shapes() {
    let einsum = AttributeProto {
        name: Some("equation".into()),
        r#type: Some(nonzero_proto::onnx::attribute_proto::AttributeType::String as i32),
        s: Some(b"bij,bjk->bik".to_vec()),
        ..Default::default()
    };
    let g = graph(
        vec![
            node("Einsum", &["a", "b"], &["p"], vec![einsum]),
            node("Greater", &["p", "zero"], &["mask"], vec![]),
            node("NonZero", &["mask"], &["y"], vec![]),
            node("OneHot", &["idx", "depth", "off_on"], &["hot"], vec![]),
            node("NonZero", &["hot"], &["z"], vec![]),
        ],
        vec![
            value("a", DataType::Float, Some(&["B", "I", "J"])),
            value("b", DataType::Float, Some(&["B", "J", "K"])),
            value("idx", DataType::Int64, Some(&["T", "2"])),
        ],
        &["y", "z"],
        vec![
            float_tensor("zero", &[], &[0.0]),
            TensorProto {
                dims: vec![],
                ..int64s("depth", &[8])
            },
            int64s("off_on", &[0, 1]),
        ],
    );
    let options = static_options(&[("a", &[2, 3, 4]), ("b", &[2, 4, 5]), ("idx", &[6, 2])]);
    let (out, _) = optimize_with(&model(g, 17), &options).expect("static");
    let m = ModelProto::decode(out.as_slice()).unwrap();
    let g = m.graph.as_ref().unwrap();
    assert_eq!(output_dims(g, "y"), vec![3, 2 * 3 * 5]);
    assert_eq!(output_dims(g, "z"), vec![3, 6 * 2 * 8]);
}
