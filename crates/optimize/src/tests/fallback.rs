//! Issue 25: the fallback functions that let a rewritten model run without the library.

use super::*;
use crate::{optimize_with, OptimizeError, Options};
use nonzero_proto::onnx::FunctionProto;

/// `y = x[mask]` (NonZero -> Transpose -> GatherND) and `c = argwhere(mask)` at `opset`.
fn masked(opset: i64, ir_version: i64) -> Vec<u8> {
    let g = graph(
        vec![
            node("NonZero", &["mask"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["y"], vec![]),
            node("NonZero", &["mask"], &["nz2"], vec![]),
            node("Transpose", &["nz2"], &["c"], vec![ints("perm", &[1, 0])]),
        ],
        vec![
            value("x", DataType::Float, Some(&["N", "3"])),
            value("mask", DataType::Bool, Some(&["N", "3"])),
        ],
        &["y", "c"],
        vec![],
    );
    let mut m = ModelProto::decode(model(g, opset).as_slice()).unwrap();
    m.ir_version = Some(ir_version);
    m.encode_to_vec()
}

fn body(f: &FunctionProto) -> Vec<String> {
    listing(&GraphProto {
        node: f.node.clone(),
        ..Default::default()
    })
}

#[test]
fn every_nonzero_op_written_gets_a_standard_op_function_at_the_models_opset() {
    let (m, report) = run(&masked(17, 8));
    assert_eq!(
        main_listing(&m),
        [
            "nonzero.BooleanMask(x,mask)->y",
            "nonzero.ArgWhere(mask)->c"
        ]
    );
    assert_eq!(report.fallback_functions, 2);
    let names: Vec<_> = m.functions.iter().map(|f| (f.domain(), f.name())).collect();
    assert_eq!(names, [("nonzero", "ArgWhere"), ("nonzero", "BooleanMask")]);
    assert_eq!(
        body(&m.functions[0]),
        ["NonZero(X)->coordinates", "Transpose(coordinates)->Y"]
    );
    assert_eq!(
        body(&m.functions[1]),
        [
            "NonZero(M)->coordinates",
            "Transpose(coordinates)->indices",
            "GatherND(X,indices)->Y"
        ]
    );
    for f in &m.functions {
        assert_eq!(f.opset_import.len(), 1);
        assert_eq!(f.opset_import[0].domain(), "");
        assert_eq!(f.opset_import[0].version, Some(17));
    }
}

#[test]
fn ir_version_is_raised_to_8_and_never_past_what_the_model_had() {
    for (given, want) in [(4, 8), (7, 8), (8, 8), (9, 9), (10, 10)] {
        let (m, _) = run(&masked(13, given));
        assert_eq!(m.ir_version, Some(want), "IR {given}");
    }
}

#[test]
fn no_fallback_leaves_the_functions_out() {
    let options = Options {
        no_fallback: true,
        ..Default::default()
    };
    let (out, report) = optimize_with(&masked(17, 7), &options).unwrap();
    let m = ModelProto::decode(out.as_slice()).unwrap();
    assert!(m.functions.is_empty());
    assert_eq!(m.ir_version, Some(7));
    assert_eq!(report.fallback_functions, 0);
}

#[test]
fn below_opset_11_boolean_mask_falls_back_to_compress() {
    let f = nonzero_rewrite_graph::library::function("BooleanMask", 10).unwrap();
    assert_eq!(body(&f), ["Compress(X,M)->Y"]);
    assert_eq!(
        body(&nonzero_rewrite_graph::library::function("BooleanMask", 11).unwrap()),
        [
            "NonZero(M)->coordinates",
            "Transpose(coordinates)->indices",
            "GatherND(X,indices)->Y"
        ]
    );
    assert!(nonzero_rewrite_graph::library::function("NonZero", 8).is_none());
}

#[test]
fn optimizing_an_optimized_model_changes_nothing() {
    let (once, _) = crate::optimize(&masked(17, 8)).unwrap();
    let (twice, report) = crate::optimize(&once).unwrap();
    assert_eq!(twice, once);
    assert_eq!(report.nonzero_nodes, 0, "function bodies are never counted");
    assert_eq!(
        report.graphs, 1,
        "function bodies of the nonzero domain are never searched"
    );
}

#[test]
fn a_nonzero_function_that_is_not_ours_is_refused() {
    let (once, _) = crate::optimize(&masked(17, 8)).unwrap();
    let mut m = ModelProto::decode(once.as_slice()).unwrap();
    m.functions[1].node.pop();
    m.functions[1].node[1].output = vec!["Y".into()];
    let err = crate::optimize(&m.encode_to_vec()).unwrap_err();
    assert_eq!(
        err,
        OptimizeError::Invalid(
            "the model defines the function nonzero.BooleanMask, which is not the fallback this rewriter writes for it; the domain 'nonzero' is the library's".into()
        )
    );
}
