//! Issue 29: invalid models are refused before anything is rewritten, and NonZero is rewritten
//! only under opsets whose definitions the rewriter knows.

use super::*;
use crate::versions::NEWEST_KNOWN_OPSET;
use crate::{Kind, OptimizeError, Reason};
use nonzero_proto::onnx::FunctionProto;

/// `y = Transpose(NonZero(x))`, the simplest rewritable chain, plus `extra` nodes.
fn chain(extra: Vec<NodeProto>, outputs: &[&str]) -> GraphProto {
    let mut nodes = vec![
        node("NonZero", &["x"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["y"], vec![ints("perm", &[1, 0])]),
    ];
    nodes.extend(extra);
    graph(
        nodes,
        vec![value("x", DataType::Float, Some(&["N", "4"]))],
        outputs,
        vec![],
    )
}

fn refused(bytes: &[u8]) -> String {
    match optimize(bytes) {
        Err(OptimizeError::Invalid(why)) => why,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn a_name_defined_twice_is_refused_naming_both_definitions() {
    let g = chain(vec![node("Relu", &["x"], &["y"], vec![])], &["y"]);
    let why = refused(&model(g, 17));
    assert!(why.contains("the name 'y' is defined twice"), "{why}");
    assert!(
        why.contains("Transpose_y") && why.contains("Relu_y"),
        "{why}"
    );
    assert!(why.starts_with("main: "), "{why}");
    // The message reaches users whole, with what happened.
    let shown = optimize(&model(
        chain(vec![node("Relu", &["x"], &["y"], vec![])], &["y"]),
        17,
    ))
    .unwrap_err()
    .to_string();
    assert!(
        shown.starts_with("invalid model, nothing rewritten: main: "),
        "{shown}"
    );
}

#[test]
fn an_input_nothing_defines_is_refused_naming_node_and_name() {
    let g = chain(vec![node("Add", &["y", "ghost"], &["z"], vec![])], &["z"]);
    let why = refused(&model(g, 17));
    assert!(why.contains("node Add_z (Add) reads 'ghost'"), "{why}");
}

#[test]
fn a_cycle_is_refused() {
    let g = chain(
        vec![
            node("Relu", &["b"], &["a"], vec![]),
            node("Relu", &["a"], &["b"], vec![]),
        ],
        &["y"],
    );
    let why = refused(&model(g, 17));
    assert!(why.contains("cycle through node Relu_"), "{why}");
}

#[test]
fn a_default_domain_op_without_an_onnx_import_is_refused() {
    let mut m = ModelProto::decode(model(chain(vec![], &["y"]), 17).as_slice()).unwrap();
    m.opset_import = vec![OperatorSetIdProto {
        domain: Some("com.example".into()),
        version: Some(1),
    }];
    let why = refused(&m.encode_to_vec());
    assert!(
        why.contains(
            "node NonZero_nz is the default-domain op NonZero, but no ai.onnx opset is imported"
        ),
        "{why}"
    );
}

#[test]
fn nodes_out_of_order_but_acyclic_are_rewritten_as_before() {
    let mut g = chain(vec![], &["y"]);
    g.node.reverse();
    let (m, report) = run(&model(g, 17));
    assert_eq!(report.count(Kind::ArgWhere), 1);
    assert_eq!(main_listing(&m), ["nonzero.ArgWhere(x)->y"]);
}

#[test]
fn outer_scope_names_read_by_a_branch_are_valid_and_an_undefined_one_is_not() {
    let branch = |read: &str| {
        graph(
            vec![node("Identity", &[read], &["b"], vec![])],
            vec![],
            &["b"],
            vec![],
        )
    };
    let with_if = |read: &str| {
        let mut g = chain(
            vec![node(
                "If",
                &["c"],
                &["r"],
                vec![
                    graph_attr("then_branch", branch(read)),
                    graph_attr("else_branch", branch("x")),
                ],
            )],
            &["y", "r"],
        );
        g.input.push(value("c", DataType::Bool, Some(&[])));
        model(g, 17)
    };
    let (_, report) = run(&with_if("y"));
    assert_eq!(report.count(Kind::ArgWhere), 1);
    let why = refused(&with_if("nowhere"));
    assert!(
        why.starts_with("main/If_r.then_branch: node Identity_b (Identity) reads 'nowhere'"),
        "{why}"
    );
}

#[test]
fn a_branch_that_reads_a_later_node_of_its_graph_counts_in_the_cycle_check() {
    // If reads (inside its branch) the Relu's output, and the Relu reads the If's: a cycle
    // that only the captured name shows.
    let branch = graph(
        vec![node("Identity", &["late"], &["b"], vec![])],
        vec![],
        &["b"],
        vec![],
    );
    let mut g = chain(
        vec![
            node(
                "If",
                &["c"],
                &["r"],
                vec![
                    graph_attr("then_branch", branch.clone()),
                    graph_attr("else_branch", branch),
                ],
            ),
            node("Relu", &["r"], &["late"], vec![]),
        ],
        &["y", "late"],
    );
    g.input.push(value("c", DataType::Bool, Some(&[])));
    let why = refused(&model(g, 17));
    assert!(why.contains("cycle"), "{why}");
}

#[test]
fn an_invalid_function_body_is_refused() {
    let function = FunctionProto {
        name: Some("F".into()),
        domain: Some("local".into()),
        input: vec!["a".into()],
        output: vec!["out".into()],
        node: vec![node("Add", &["a", "undefined_in_body"], &["out"], vec![])],
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        ..Default::default()
    };
    let mut m = ModelProto::decode(model(chain(vec![], &["y"]), 17).as_slice()).unwrap();
    m.functions.push(function);
    let why = refused(&m.encode_to_vec());
    assert!(
        why.starts_with("function local.F: node Add_out (Add) reads 'undefined_in_body'"),
        "{why}"
    );
}

fn left_reason(opset: i64) -> (Report, ModelProto) {
    let bytes = model(chain(vec![], &["y"]), opset);
    let (out, report) = optimize(&bytes).expect("a valid model");
    assert_eq!(
        out, bytes,
        "opset {opset}: the model must come back unchanged"
    );
    (report, ModelProto::decode(out.as_slice()).unwrap())
}

#[test]
fn nonzero_under_an_opset_that_does_not_define_it_is_left_with_the_opset_named() {
    for (opset, detail) in [
        (
            8,
            "opset 8 does not define NonZero (ONNX defines it from opset 9)".to_string(),
        ),
        (
            99,
            format!("opset 99 is newer than this rewriter knows (newest: {NEWEST_KNOWN_OPSET})"),
        ),
        (
            NEWEST_KNOWN_OPSET + 1,
            format!(
                "opset {} is newer than this rewriter knows (newest: {NEWEST_KNOWN_OPSET})",
                NEWEST_KNOWN_OPSET + 1
            ),
        ),
    ] {
        let (report, _) = left_reason(opset);
        assert_eq!(report.rewrites.len(), 0, "opset {opset}");
        assert_eq!(report.left.len(), 1, "opset {opset}");
        assert_eq!(report.left[0].reason, Reason::UnknownOpset);
        assert_eq!(report.left[0].detail, detail);
        assert!(
            report.summary().contains("1 unknown-opset"),
            "{}",
            report.summary()
        );
    }
}

#[test]
fn every_known_opset_from_9_rewrites_the_chain() {
    for opset in 9..=NEWEST_KNOWN_OPSET {
        let (m, report) = run(&model(chain(vec![], &["y"]), opset));
        assert_eq!(report.count(Kind::ArgWhere), 1, "opset {opset}");
        assert_eq!(
            main_listing(&m),
            ["nonzero.ArgWhere(x)->y"],
            "opset {opset}"
        );
    }
}

#[test]
fn the_nonzero_domain_move_also_stops_at_unknown_opsets() {
    let bytes = model(chain(vec![], &["y"]), 99);
    let options = crate::Options {
        nonzero_domain: true,
        ..Default::default()
    };
    let (out, report) = crate::optimize_with(&bytes, &options).unwrap();
    assert_eq!(out, bytes);
    assert_eq!(report.moved_to_domain, 0);
}

#[test]
fn a_function_under_its_own_unknown_opset_is_not_rewritten() {
    let function = FunctionProto {
        name: Some("F".into()),
        domain: Some("local".into()),
        input: vec!["x".into()],
        output: vec!["t".into()],
        node: vec![
            node("NonZero", &["x"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
        ],
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(99),
        }],
        ..Default::default()
    };
    let mut m = ModelProto::decode(model(chain(vec![], &["y"]), 17).as_slice()).unwrap();
    m.functions.push(function);
    let (out, report) = run(&m.encode_to_vec());
    assert_eq!(report.count(Kind::ArgWhere), 1, "the main graph's chain");
    assert_eq!(report.left.len(), 1);
    assert_eq!(report.left[0].graph, "function local.F");
    assert_eq!(report.left[0].reason, Reason::UnknownOpset);
    assert_eq!(
        listing(&nonzero_proto::onnx::GraphProto {
            node: out.functions[0].node.clone(),
            ..Default::default()
        }),
        ["NonZero(x)->nz", "Transpose(nz)->t"]
    );
}
