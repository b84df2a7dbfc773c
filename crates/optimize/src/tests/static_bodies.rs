//! Static mode inside If and Loop bodies (crate::static_mode::scope): each body is rewritten
//! where its tensors' shapes are fixed (from the graphs around it), a padded body output is
//! refused by name, and the names written inside a body shadow nothing outside it. The values
//! are checked on ONNX Runtime by tests/python/test_static_bodies.py.

use super::*;
use crate::{optimize_with, OptimizeError, Options, Reason};
use std::collections::HashSet;

/// A body with no inputs (an If branch) computing `outputs`.
fn branch(nodes: Vec<NodeProto>, outputs: &[&str]) -> GraphProto {
    graph(nodes, vec![], outputs, vec![])
}

/// Every op of `g` and its bodies, and every tensor they write (asserted written once).
fn ops_and_outputs(g: &GraphProto, ops: &mut Vec<String>, written: &mut HashSet<String>) {
    for n in &g.node {
        ops.push(n.op_type.clone().unwrap_or_default());
        for o in n.output.iter().filter(|o| !o.is_empty()) {
            assert!(written.insert(o.clone()), "{o} is written twice");
        }
        for a in &n.attribute {
            for b in a.g.iter().chain(&a.graphs) {
                ops_and_outputs(b, ops, written);
            }
        }
    }
}

/// `If(c)`: then `x[m].max(0)`, else `x.min(0)`; x [n, 4], m [n].
fn if_selection_max() -> Vec<u8> {
    let then_branch = branch(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["rows"], vec![]),
            node(
                "ReduceMax",
                &["rows"],
                &["top"],
                vec![ints("axes", &[0]), int("keepdims", 0)],
            ),
        ],
        &["top"],
    );
    let else_branch = branch(
        vec![node(
            "ReduceMin",
            &["x"],
            &["low"],
            vec![ints("axes", &[0]), int("keepdims", 0)],
        )],
        &["low"],
    );
    let g = graph(
        vec![node(
            "If",
            &["c"],
            &["y"],
            vec![
                graph_attr("then_branch", then_branch),
                graph_attr("else_branch", else_branch),
            ],
        )],
        vec![
            value("x", DataType::Float, Some(&["n", "4"])),
            value("m", DataType::Bool, Some(&["n"])),
            value("c", DataType::Bool, Some(&[])),
        ],
        &["y"],
        vec![],
    );
    model(g, 17)
}

#[test]
fn an_if_branch_is_rewritten_with_the_outer_shapes() {
    let options = static_options(&[("x", &[5, 4]), ("m", &[5])]);
    let (bytes, report) = optimize_with(&if_selection_max(), &options).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let (mut ops, mut written) = (vec![], HashSet::new());
    ops_and_outputs(m.graph.as_ref().unwrap(), &mut ops, &mut written);
    assert!(!ops.iter().any(|o| o == "NonZero"), "{ops:?}");
    assert!(ops.iter().any(|o| o == "ScatterElements"), "{ops:?}");
    let s = report.static_mode.as_ref().unwrap();
    assert_eq!(s.rewrites.len(), 1, "{:?}", s.rewrites);
    let (kind, line) = &s.rewrites[0];
    assert_eq!(kind, "fixed-capacity");
    assert!(line.starts_with("in main/If_y.then_branch: "), "{line}");
    assert!(s.count_outputs.is_empty(), "the If's output keeps its size");
    assert!(report.left.is_empty(), "{:?}", report.left);
    assert_eq!(report.graphs, 3);
}

#[test]
fn a_body_whose_shapes_are_not_fixed_is_reported() {
    // Without --input-shape x's rows stay symbolic: refused for the symbol, before any body.
    let why = match optimize_with(&if_selection_max(), &static_options(&[])) {
        Err(OptimizeError::Static(why)) => why,
        other => panic!("{other:?}"),
    };
    assert!(why.contains("symbolic sizes"), "{why}");
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
    let g = graph(
        vec![node(
            "Loop",
            &["trips", "", "x"],
            &["y", "sizes"],
            vec![graph_attr("body", body)],
        )],
        vec![
            value("trips", DataType::Int64, Some(&[])),
            value("x", DataType::Float, Some(&["3"])),
        ],
        &["y", "sizes"],
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
    let g = graph(
        vec![node(
            "Loop",
            &["trips", "", "zero"],
            &["y"],
            vec![graph_attr("body", body)],
        )],
        vec![
            value("trips", DataType::Int64, Some(&[])),
            value("x", DataType::Float, Some(&["n"])),
        ],
        &["y"],
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
fn a_padded_body_output_is_refused_by_name() {
    // The branch returns the coordinates themselves: their length is the If's output length,
    // which no `_count` output could carry.
    let g = graph(
        vec![node(
            "If",
            &["c"],
            &["y"],
            vec![
                graph_attr(
                    "then_branch",
                    branch(vec![node("NonZero", &["x"], &["a"], vec![])], &["a"]),
                ),
                graph_attr(
                    "else_branch",
                    branch(vec![node("NonZero", &["x"], &["b"], vec![])], &["b"]),
                ),
            ],
        )],
        vec![
            value("x", DataType::Float, Some(&["2", "3"])),
            value("c", DataType::Bool, Some(&[])),
        ],
        &["y"],
        vec![],
    );
    let why = match optimize_with(&model(g, 17), &static_options(&[])) {
        Err(OptimizeError::Static(why)) => why,
        other => panic!("{other:?}"),
    };
    assert!(why.contains("padding-unsafe"), "{why}");
    assert!(
        why.contains("the padded a is an output of main/If_y.then_branch"),
        "{why}"
    );
    assert!(
        why.contains("the padded b is an output of main/If_y.else_branch"),
        "{why}"
    );
}

#[test]
fn names_written_in_a_body_shadow_nothing_outside() {
    // The outer graph already has a tensor named as the body's first rewrite would name its
    // nodes: the body's names must differ from it (ONNX forbids a body redefining an outer
    // name, and ONNX Runtime refuses the model).
    let mut bytes = if_selection_max();
    let mut m = ModelProto::decode(bytes.as_slice()).unwrap();
    let g = m.graph.as_mut().unwrap();
    let taken = "NonZero_nz/cumsum";
    g.node.insert(0, node("Identity", &["x"], &[taken], vec![]));
    g.output.push(value(taken, DataType::Float, None));
    bytes = m.encode_to_vec();
    let options = static_options(&[("x", &[5, 4]), ("m", &[5])]);
    let (out, _) = optimize_with(&bytes, &options).expect("static");
    let m = ModelProto::decode(out.as_slice()).unwrap();
    let (mut ops, mut written) = (vec![], HashSet::new());
    ops_and_outputs(m.graph.as_ref().unwrap(), &mut ops, &mut written);
    assert!(written.contains(taken));
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
    let g = graph(
        vec![node(
            "Loop",
            &["trips", "", "zero"],
            &["y"],
            vec![graph_attr("body", body)],
        )],
        vec![
            value("trips", DataType::Int64, Some(&[])),
            value("x", DataType::Float, Some(&["n", "4"])),
        ],
        &["y"],
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
    assert_eq!(crate::static_mode::inputs::declared(y), Some(vec![]));
    let Some(type_proto::Value::TensorType(t)) = y.r#type.as_ref().unwrap().value.as_ref() else {
        panic!("{y:?}")
    };
    assert_eq!(t.elem_type, Some(DataType::Float as i32));
}

/// `If(Equal(Shape(x)[0], 5))`: then `x[m].max(0)`, else `x.min(0)`; x `[n, 4]`, m `[n]`.
fn if_on_a_size() -> Vec<u8> {
    let mut m = ModelProto::decode(if_selection_max().as_slice()).unwrap();
    let g = m.graph.as_mut().unwrap();
    g.input.retain(|i| i.name.as_deref() != Some("c"));
    let test = [
        node("Shape", &["x"], &["xs"], vec![]),
        node("Gather", &["xs", "zero"], &["n_rows"], vec![int("axis", 0)]),
        node("Equal", &["n_rows", "five"], &["c"], vec![]),
    ];
    g.node.splice(0..0, test);
    g.initializer.push(TensorProto {
        name: Some("zero".into()),
        data_type: Some(DataType::Int64 as i32),
        int64_data: vec![0],
        ..Default::default()
    });
    g.initializer.push(int64s("five", &[5]));
    m.encode_to_vec()
}

#[test]
fn an_if_the_fixed_shapes_decide_becomes_its_branch() {
    // x fixed to 5 rows: the condition is true, and the then branch takes the If's place (its
    // selection is then the main graph's); with 6 rows, the else branch (no NonZero at all).
    for (rows, taken, rewrites) in [(5, "then_branch", 2), (6, "else_branch", 1)] {
        let options = static_options(&[("x", &[rows, 4]), ("m", &[rows])]);
        let (bytes, report) = optimize_with(&if_on_a_size(), &options).expect("static");
        let m = ModelProto::decode(bytes.as_slice()).unwrap();
        let (mut ops, mut written) = (vec![], HashSet::new());
        ops_and_outputs(m.graph.as_ref().unwrap(), &mut ops, &mut written);
        assert!(!ops.iter().any(|o| o == "If" || o == "NonZero"), "{ops:?}");
        let s = report.static_mode.as_ref().unwrap();
        assert_eq!(s.rewrites.len(), rewrites, "{:?}", s.rewrites);
        assert_eq!(s.rewrites[0].0, "known-branch");
        assert_eq!(
            s.rewrites[0].1,
            format!("If If_y: the shapes fix its condition, and its {taken} takes its place")
        );
        let last = m.graph.as_ref().unwrap().node.last().unwrap();
        assert_eq!(last.output, ["y"]);
    }
}

#[test]
fn lowered_selections_of_one_mask_share_one_compaction() {
    // Two BooleanMasks of one mask (the default mode's output for x[m] and y[m]) lower to a
    // NonZero each; they are merged, as the export had one NonZero for both gathers.
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["a"], vec![]),
            node("GatherND", &["y", "t"], &["b"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["n", "4"])),
            value("y", DataType::Float, Some(&["n"])),
            value("m", DataType::Bool, Some(&["n"])),
        ],
        &["a", "b"],
        vec![],
    );
    let (rewritten, _) = optimize_with(&model(g, 17), &Options::default()).unwrap();
    let first = ModelProto::decode(rewritten.as_slice()).unwrap();
    let masks = main_listing(&first)
        .iter()
        .filter(|l| l.starts_with("nonzero.BooleanMask"))
        .count();
    assert_eq!(masks, 2);
    let options = static_options(&[("x", &[5, 4]), ("y", &[5]), ("m", &[5])]);
    let (bytes, report) = optimize_with(&rewritten, &options).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let s = report.static_mode.as_ref().unwrap();
    assert_eq!(s.lowered, 2);
    let compactions = s
        .rewrites
        .iter()
        .filter(|(k, _)| k == "fixed-capacity")
        .count();
    assert_eq!(compactions, 1, "{:?}", s.rewrites);
    let scatters = main_listing(&m)
        .iter()
        .filter(|l| l.starts_with("ScatterElements"))
        .count();
    assert_eq!(scatters, 1);
}
