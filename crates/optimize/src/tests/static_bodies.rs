//! Static mode inside If bodies (nonzero-emit-static's `scope`): each branch is rewritten with the
//! fixed shapes of the graphs around it, a padded branch output is refused by name, the names
//! written inside a branch shadow nothing outside it, an If the fixed shapes decide becomes its
//! branch, and the default mode's output is lowered with one compaction per mask. Loop bodies:
//! loop_bodies.rs. The values are checked on ONNX Runtime, OpenVINO and IREE by
//! tests/python/test_static.py and tests/static, on the torch_patterns `if_*` and `loop_*`
//! exports.

use super::*;
use crate::{optimize_with, OptimizeError, Options};
use std::collections::HashSet;

/// A body with no inputs (an If branch) computing `outputs`.
fn branch(nodes: Vec<NodeProto>, outputs: &[&str]) -> GraphProto {
    graph(nodes, vec![], outputs, vec![])
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
fn symbolic_sizes_are_refused_before_any_body() {
    let why = match optimize_with(&if_selection_max(), &static_options(&[])) {
        Err(OptimizeError::Static(why)) => why,
        other => panic!("{other:?}"),
    };
    assert!(why.contains("input 'x' has symbolic sizes"), "{why}");
}

/// An If whose branches return NonZero's coordinates as `y`; `read_on`: `y` is read by a Neg
/// (its output `z` the graph's), else `y` is the graph output.
fn if_of_coordinates(read_on: bool) -> Vec<u8> {
    let mut nodes = vec![node(
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
                branch(vec![node("NonZero", &["w"], &["b"], vec![])], &["b"]),
            ),
        ],
    )];
    if read_on {
        nodes.push(node("Neg", &["y"], &["z"], vec![]));
    }
    let g = graph(
        nodes,
        vec![
            value("x", DataType::Float, Some(&["2", "3"])),
            value("w", DataType::Float, Some(&["4", "3"])),
            value("c", DataType::Bool, Some(&[])),
        ],
        &[if read_on { "z" } else { "y" }],
        vec![],
    );
    model(g, 17)
}

#[test]
fn a_padded_body_output_read_on_is_refused_by_name() {
    // The If's output is read by another node: its length would change, and no `_count`
    // output could carry it there.
    let why = match optimize_with(&if_of_coordinates(true), &static_options(&[])) {
        Err(OptimizeError::Static(why)) => why,
        other => panic!("{other:?}"),
    };
    assert!(why.contains("padding-unsafe"), "{why}");
    assert!(
        why.contains("the padded 'a' is an output of main/If_y.then_branch"),
        "{why}"
    );
    assert!(
        why.contains("the padded 'b' is an output of main/If_y.else_branch"),
        "{why}"
    );
}

#[test]
fn an_ifs_selections_as_the_graph_output_join_into_one_count() {
    let (out, report) =
        optimize_with(&if_of_coordinates(false), &static_options(&[])).expect("static");
    assert!(report.left.is_empty(), "{:?}", report.left);
    let m = ModelProto::decode(out.as_slice()).expect("re-parse");
    let g = m.graph.as_ref().unwrap();
    let names: Vec<&str> = g.output.iter().map(|o| o.name()).collect();
    assert_eq!(names, ["y", "y_count"]);
    // Both branches fully static: the If became both and a Where per output, the then
    // branch's 6 coordinates padded on to the else branch's 12.
    assert!(!g.node.iter().any(|n| n.op_type() == "If"));
    let chosen = |out: &str| {
        let w = g.node.iter().find(|n| n.output[0] == out).unwrap();
        assert_eq!(w.op_type(), "Where");
        (w.input[1].clone(), w.input[2].clone())
    };
    assert_eq!(chosen("y"), ("a".to_string(), "b".to_string()));
    assert_eq!(
        chosen("y_count"),
        ("a_count".to_string(), "b_count".to_string())
    );
    let pad = g.node.iter().find(|n| n.output[0] == "a").unwrap();
    assert_eq!(pad.op_type(), "Pad");
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
    // The condition is folded first (`Equal(Shape(x)[0], 5)` becomes an initializer).
    for (rows, taken, rewrites) in [(5, "then_branch", 3), (6, "else_branch", 2)] {
        let options = static_options(&[("x", &[rows, 4]), ("m", &[rows])]);
        let (bytes, report) = optimize_with(&if_on_a_size(), &options).expect("static");
        let m = ModelProto::decode(bytes.as_slice()).unwrap();
        let (mut ops, mut written) = (vec![], HashSet::new());
        ops_and_outputs(m.graph.as_ref().unwrap(), &mut ops, &mut written);
        assert!(!ops.iter().any(|o| o == "If" || o == "NonZero"), "{ops:?}");
        let s = report.static_mode.as_ref().unwrap();
        assert_eq!(s.rewrites.len(), rewrites, "{:?}", s.rewrites);
        assert_eq!(
            s.rewrites[0],
            (
                "folded".to_string(),
                "3 nodes computed from constants and fixed shapes alone became 1 initializer"
                    .to_string()
            )
        );
        assert_eq!(s.rewrites[1].0, "known-branch");
        assert_eq!(
            s.rewrites[1].1,
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
