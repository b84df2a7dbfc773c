//! Loop bodies: a carried value's shape is trusted where the body keeps it (by induction,
//! crate::infer::bodies), the iteration number and condition are scalars, and static mode
//! rewrites a body where its shapes are fixed, naming what it cannot.

use super::*;
use crate::{optimize, optimize_with, Reason};
use std::collections::HashSet;

/// A main graph of one Loop node over `body`, reading `loop_inputs` and writing `outputs`,
/// which are the graph's outputs.
fn loop_graph(
    body: GraphProto,
    loop_inputs: &[&str],
    outputs: &[&str],
    inputs: Vec<ValueInfoProto>,
    initializers: Vec<TensorProto>,
) -> GraphProto {
    let looped = node("Loop", loop_inputs, outputs, vec![graph_attr("body", body)]);
    graph(vec![looped], inputs, outputs, initializers)
}

/// A Loop body over a carried bool `v` (initially `[3]`): NonZero(v) -> Transpose, then
/// `v_out = next(v)`.
fn loop_over_carried(next: NodeProto) -> Vec<u8> {
    let body = graph(
        vec![
            node("NonZero", &["v"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("Identity", &["c"], &["c_out"], vec![]),
            next,
        ],
        vec![
            value("i", DataType::Int64, Some(&[])),
            value("c", DataType::Bool, Some(&[])),
            value("v", DataType::Bool, Some(&["3"])),
        ],
        &["c_out", "v_out", "t"],
        vec![],
    );
    let g = loop_graph(
        body,
        &["n", "", "v0"],
        &["v_final", "ts"],
        vec![
            value("n", DataType::Int64, Some(&[])),
            value("v0", DataType::Bool, Some(&["3"])),
        ],
        vec![],
    );
    model(g, 17)
}

/// Loop-carried values may change shape between iterations: their declared shapes are not
/// used. Where the body keeps the initial value's shape, that shape is proven by induction.
#[test]
fn loop_carried_values_are_trusted_where_the_body_keeps_their_shape() {
    // v grows each iteration (Concat(v, v)): v's rank is not proven, the NonZero stays.
    let growing = loop_over_carried(node(
        "Concat",
        &["v", "v"],
        &["v_out"],
        vec![int("axis", 0)],
    ));
    let (out, report) = optimize(&growing).unwrap();
    assert_eq!(out, growing);
    assert_eq!(
        super::inference::reasons(&report),
        [("NonZero".to_string(), Reason::UnknownRank)]
    );
    assert_eq!(report.left[0].graph, "main/Loop_v_final.body");
    // v keeps its shape (Not(v)): [3] every iteration, and the chain becomes ArgWhere.
    let kept = loop_over_carried(node("Not", &["v"], &["v_out"], vec![]));
    let (_, report) = optimize(&kept).unwrap();
    assert!(
        super::inference::reasons(&report).is_empty(),
        "{:?}",
        report.left
    );
    assert_eq!(report.count(crate::Kind::ArgWhere), 1);
    assert_eq!(report.rewrites[0].graph, "main/Loop_v_final.body");
}

#[test]
fn a_carried_value_that_grows_is_reported() {
    // A Loop's carried value that grows each iteration has no fixed shape: its NonZero
    // stays, named in the body.
    let body = graph(
        vec![
            node("NonZero", &["acc"], &["nz"], vec![]),
            node("Size", &["nz"], &["sz"], vec![]),
            node(
                "Concat",
                &["acc", "acc"],
                &["acc_out"],
                vec![int("axis", 0)],
            ),
            node("Identity", &["cond"], &["cond_out"], vec![]),
        ],
        vec![
            value("i", DataType::Int64, Some(&[])),
            value("cond", DataType::Bool, Some(&[])),
            value("acc", DataType::Float, Some(&["3"])),
        ],
        &["cond_out", "acc_out", "sz"],
        vec![],
    );
    let g = loop_graph(
        body,
        &["trips", "", "x"],
        &["y", "sizes"],
        vec![
            value("trips", DataType::Int64, Some(&[])),
            value("x", DataType::Float, Some(&["3"])),
        ],
        vec![],
    );
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) = optimize_with(&model(g, 17), &options).expect("allowed");
    assert_eq!(report.left.len(), 1, "{:?}", report.left);
    let left = &report.left[0];
    assert_eq!(left.reason, Reason::ShapeNotFixed);
    assert_eq!(left.graph, "main/Loop_y.body");
    assert!(
        left.detail.contains("the shape of acc is not fixed"),
        "{}",
        left.detail
    );
}

#[test]
fn a_count_in_a_loop_body_becomes_a_sum_of_the_outer_mask() {
    // Per iteration, acc += the number of nonzeros of the outer x (Size of the coordinates,
    // over the rank 1): the count use of an outer tensor, rewritten inside the body.
    let body = graph(
        vec![
            node("NonZero", &["x"], &["nz"], vec![]),
            node("Size", &["nz"], &["sz"], vec![]),
            node("Add", &["acc", "sz"], &["acc_out"], vec![]),
            node("Identity", &["cond"], &["cond_out"], vec![]),
        ],
        vec![
            value("i", DataType::Int64, Some(&[])),
            value("cond", DataType::Bool, Some(&[])),
            value("acc", DataType::Int64, Some(&[])),
        ],
        &["cond_out", "acc_out"],
        vec![],
    );
    let g = loop_graph(
        body,
        &["trips", "", "zero"],
        &["y"],
        vec![
            value("trips", DataType::Int64, Some(&[])),
            value("x", DataType::Float, Some(&["n"])),
        ],
        vec![TensorProto {
            name: Some("zero".into()),
            data_type: Some(DataType::Int64 as i32),
            int64_data: vec![0],
            ..Default::default()
        }],
    );
    let (bytes, report) =
        optimize_with(&model(g, 17), &static_options(&[("x", &[6])])).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let (mut ops, mut written) = (vec![], HashSet::new());
    ops_and_outputs(m.graph.as_ref().unwrap(), &mut ops, &mut written);
    assert!(!ops.iter().any(|o| o == "NonZero"), "{ops:?}");
    let s = report.static_mode.as_ref().unwrap();
    let kinds: Vec<&str> = s.rewrites.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(kinds, ["count"], "{:?}", s.rewrites);
    assert!(s.rewrites[0].1.starts_with("in main/Loop_y.body: "));
}

#[test]
fn a_loop_iteration_number_is_a_scalar() {
    // acc += x[i][x[i] > 0].max(): the row Gather(x, i) has a fixed shape because the
    // iteration number is a scalar by Loop's definition (its declared shape is not needed).
    let body = graph(
        vec![
            node("Gather", &["x", "i"], &["row"], vec![int("axis", 0)]),
            node("Greater", &["row", "zero"], &["m"], vec![]),
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["row", "t"], &["sel"], vec![]),
            node(
                "ReduceMax",
                &["sel"],
                &["top"],
                vec![ints("axes", &[0]), int("keepdims", 0)],
            ),
            node("Add", &["acc", "top"], &["acc_out"], vec![]),
            node("Identity", &["cond"], &["cond_out"], vec![]),
        ],
        vec![
            value("i", DataType::Int64, None),
            value("cond", DataType::Bool, None),
            value("acc", DataType::Float, None),
        ],
        &["cond_out", "acc_out"],
        vec![],
    );
    let g = loop_graph(
        body,
        &["trips", "", "zero"],
        &["y"],
        vec![
            value("trips", DataType::Int64, Some(&[])),
            value("x", DataType::Float, Some(&["n", "4"])),
        ],
        vec![TensorProto {
            name: Some("zero".into()),
            data_type: Some(DataType::Float as i32),
            float_data: vec![0.0],
            ..Default::default()
        }],
    );
    let (bytes, report) =
        optimize_with(&model(g, 17), &static_options(&[("x", &[3, 4])])).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let (mut ops, mut written) = (vec![], HashSet::new());
    ops_and_outputs(m.graph.as_ref().unwrap(), &mut ops, &mut written);
    assert!(!ops.iter().any(|o| o == "NonZero"), "{ops:?}");
    let s = report.static_mode.as_ref().unwrap();
    assert_eq!(s.rewrites.len(), 1, "{:?}", s.rewrites);
    assert!(s.rewrites[0]
        .1
        .starts_with("in main/Loop_y.body: fixed capacity: NonZero NonZero_nz became [1, 4]"));
    // The Loop keeps acc a float scalar: the static model declares its output so (IREE's
    // importer types a Loop's results from the declarations).
    let y = &m.graph.as_ref().unwrap().output[0];
    assert_eq!(nonzero_emit_static::inputs::declared(y), Some(vec![]));
    let Some(type_proto::Value::TensorType(t)) = y.r#type.as_ref().unwrap().value.as_ref() else {
        panic!("{y:?}")
    };
    assert_eq!(t.elem_type, Some(DataType::Float as i32));
}

#[test]
fn nested_loops_are_proven_once_each() {
    // 24 Loops, each inside the last's body. Each carries `a`, which grows (so every proof takes
    // two rounds), and `b`, which it keeps and passes to the next Loop as both its initial
    // values. A proof does not prove the Loops nested in it (2^24 rounds else): this finishes,
    // and the innermost NonZero, of a grown value, is reported, unproven.
    let carried = |level: usize| {
        vec![
            value("i", DataType::Int64, Some(&[])),
            value("c", DataType::Bool, Some(&[])),
            value(&format!("a{level}"), DataType::Float, Some(&["3"])),
            value(&format!("b{level}"), DataType::Float, Some(&["3"])),
        ]
    };
    let steps = |level: usize| {
        let (a, b) = (format!("a{level}"), format!("b{level}"));
        vec![
            node(
                "Concat",
                &[&a, &a],
                &[&format!("{a}_out")],
                vec![int("axis", 0)],
            ),
            node("Identity", &[&b], &[&format!("{b}_out")], vec![]),
            node("Identity", &["c"], &["c_out"], vec![]),
        ]
    };
    let outputs = |level: usize| [format!("a{level}_out"), format!("b{level}_out")];
    let mut nodes = vec![
        node("NonZero", &["a24"], &["nz"], vec![]),
        node("Size", &["nz"], &["count"], vec![]),
    ];
    nodes.extend(steps(24));
    let [a, b] = outputs(24);
    let mut body = graph(nodes, carried(24), &["c_out", &a, &b, "count"], vec![]);
    for level in (1..24).rev() {
        let inner = format!("b{level}");
        let looped = node(
            "Loop",
            &["n", "", &inner, &inner],
            &[
                &format!("a{}_final", level + 1),
                &format!("b{}_final", level + 1),
                &format!("counts{level}"),
            ],
            vec![graph_attr("body", body)],
        );
        let mut nodes = vec![looped];
        nodes.extend(steps(level));
        let [a, b] = outputs(level);
        body = graph(nodes, carried(level), &["c_out", &a, &b], vec![]);
    }
    let g = loop_graph(
        body,
        &["n", "", "x", "x"],
        &["a_final", "b_final"],
        vec![
            value("n", DataType::Int64, Some(&[])),
            value("x", DataType::Float, Some(&["3"])),
        ],
        vec![],
    );
    let (_, report) = optimize(&model(g, 17)).unwrap();
    assert_eq!(report.left.len(), 1, "{:?}", report.left);
    assert_eq!(report.left[0].reason, Reason::UnknownRank);
    assert_eq!(report.graphs, 25);
}
