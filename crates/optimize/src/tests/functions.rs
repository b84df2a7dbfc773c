//! Model-local functions: searched like subgraphs, rewritten only where the proof holds at
//! every call site, with `nonzero` added to the function's opset_import.

use super::*;
use crate::Reason;
use nonzero_proto::onnx::FunctionProto;

/// `F(x) = x[IsNaN(x)]`, called on `a` and on `b`.
fn model_with_function(b: ValueInfoProto) -> Vec<u8> {
    let function = FunctionProto {
        name: Some("F".into()),
        domain: Some("local".into()),
        input: vec!["x".into()],
        output: vec!["y".into()],
        node: vec![
            node("IsNaN", &["x"], &["mask"], vec![]),
            node("NonZero", &["mask"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["y"], vec![]),
        ],
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(17),
        }],
        ..Default::default()
    };
    let call = |input: &str, out: &str| NodeProto {
        domain: Some("local".into()),
        ..node("F", &[input], &[out], vec![])
    };
    let g = graph(
        vec![call("a", "ya"), call("b", "yb")],
        vec![value("a", DataType::Float, Some(&["N"])), b],
        &["ya", "yb"],
        vec![],
    );
    let mut m = ModelProto::decode(model(g, 17).as_slice()).unwrap();
    m.functions.push(function);
    m.opset_import.push(OperatorSetIdProto {
        domain: Some("local".into()),
        version: Some(1),
    });
    m.encode_to_vec()
}

#[test]
fn function_rewritten_when_every_call_site_proves_it() {
    let (m, report) = run(&model_with_function(value(
        "b",
        DataType::Float,
        Some(&["3", "2"]),
    )));
    let f = &m.functions[0];
    let body: Vec<String> = listing(&GraphProto {
        node: f.node.clone(),
        ..Default::default()
    });
    assert_eq!(body, ["IsNaN(x)->mask", "nonzero.BooleanMask(x,mask)->y"]);
    assert!(f
        .opset_import
        .iter()
        .any(|o| o.domain.as_deref() == Some("nonzero") && o.version == Some(1)));
    assert!(m
        .opset_import
        .iter()
        .any(|o| o.domain.as_deref() == Some("nonzero")));
    assert_eq!(report.rewrites[0].graph, "function local.F");
    assert_eq!(report.nonzero_rewritten(), 1);
}

#[test]
fn function_left_when_one_call_site_does_not_prove_it() {
    let bytes = model_with_function(value("b", DataType::Float, None));
    let (out, report) = optimize(&bytes).unwrap();
    assert_eq!(out, bytes);
    let left: Vec<(&str, Reason)> = report
        .left
        .iter()
        .map(|l| (l.graph.as_str(), l.reason))
        .collect();
    assert_eq!(left, [("function local.F", Reason::UnknownRank)]);
}
