//! Input that is not a model, or not one we may rewrite.

use super::*;
use crate::{OptimizeError, MAX_SUBGRAPH_DEPTH};

fn argwhere_model() -> Vec<u8> {
    model(
        graph(
            vec![
                node("NonZero", &["x"], &["nz"], vec![]),
                node("Transpose", &["nz"], &["y"], vec![ints("perm", &[1, 0])]),
            ],
            vec![value("x", DataType::Float, Some(&["N", "4"]))],
            &["y"],
            vec![],
        ),
        17,
    )
}

#[test]
fn empty_and_garbage_are_refused() {
    assert_eq!(optimize(b""), Err(OptimizeError::Incomplete("ir_version")));
    let err = optimize(b"this is not a model\xff\xff\xff").unwrap_err();
    assert!(matches!(err, OptimizeError::NotAModel(_)), "{err:?}");
    assert!(err.to_string().starts_with("not an ONNX model"), "{err}");
}

#[test]
fn every_truncation_is_an_error_or_a_model() {
    let bytes = argwhere_model();
    for len in 0..bytes.len() {
        if let Ok((out, _)) = optimize(&bytes[..len]) {
            ModelProto::decode(out.as_slice()).expect("output re-parses");
        }
    }
    // Cut inside the graph: the graph field's length prefix no longer fits.
    assert!(optimize(&bytes[..bytes.len() - 3]).is_err());
}

#[test]
fn other_nonzero_domain_version_is_refused() {
    let mut m = ModelProto::decode(argwhere_model().as_slice()).unwrap();
    m.opset_import.push(OperatorSetIdProto {
        domain: Some("nonzero".into()),
        version: Some(2),
    });
    assert_eq!(
        optimize(&m.encode_to_vec()),
        Err(OptimizeError::DomainVersion(2))
    );
}

#[test]
fn deep_subgraph_nesting_is_refused() {
    let mut g = graph(vec![], vec![], &[], vec![]);
    for _ in 0..=MAX_SUBGRAPH_DEPTH {
        g = graph(
            vec![node(
                "If",
                &["c"],
                &["y"],
                vec![graph_attr("then_branch", g)],
            )],
            vec![],
            &[],
            vec![],
        );
    }
    assert_eq!(optimize(&model(g, 13)), Err(OptimizeError::TooDeep));
}

/// A Slice whose `starts` hold more values than its `ends`, where the ends are known only as
/// sizes (`Shape` of a tensor of fewer axes): the inference indexed the sizes by the starts'
/// positions and panicked. Found by the fuzz target `optimize`;
/// fuzz/seeds/optimize/regress_slice_bounds_of_other_lengths is its input.
#[test]
fn slice_bounds_of_other_lengths_are_not_a_panic() {
    let g = graph(
        vec![
            node("Shape", &["v"], &["ends"], vec![]),
            node("Slice", &["x", "starts", "ends"], &["s"], vec![]),
            node("NonZero", &["s"], &["y"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["N", "4"])),
            value("v", DataType::Float, Some(&["N"])),
        ],
        &["y"],
        vec![int64s("starts", &[0, 0])],
    );
    let (m, report) = run(&model(g, 17));
    // The Slice's shape is left unknown; the rest of the graph is analysed and reported.
    assert_eq!(report.nonzero_nodes, 1);
    assert!(m.graph.is_some());
}

/// A Pad that removes more than the axis holds gives a negative size (ONNX Runtime refuses the
/// model when it runs). A Slice of it clamped its bounds to `[0, -6]`, and `clamp` panics when
/// the bounds cross, in a release build too. Negative sizes are now unknown sizes.
/// fuzz/seeds/optimize/regress_negative_size_through_slice is this model.
#[test]
fn a_negative_size_is_not_a_panic() {
    let g = graph(
        vec![
            node("Pad", &["x", "pads"], &["p"], vec![]),
            node("Slice", &["p", "starts", "ends"], &["s"], vec![]),
            node("NonZero", &["s"], &["y"], vec![]),
        ],
        vec![value("x", DataType::Float, Some(&["4"]))],
        &["y"],
        vec![
            int64s("pads", &[-10, 0]),
            int64s("starts", &[0]),
            int64s("ends", &[4]),
        ],
    );
    let (_, report) = run(&model(g, 17));
    assert_eq!(report.nonzero_nodes, 1);
}

/// Sizes whose product passes int64. The inference multiplied ConstantOfShape's sizes
/// unchecked (`attempt to multiply with overflow` in a debug build, a wrapped count in a
/// release one); an Expand to `[0, 2^40, 2^40]` holds no element, but the folding's strides
/// for it would be 2^80. Found by the fuzz target `optimize` in CI;
/// fuzz/seeds/optimize/regress_constant_of_shape_past_int64 is its input.
#[test]
fn sizes_past_int64_are_not_a_panic() {
    let g = graph(
        vec![
            node("ConstantOfShape", &["huge"], &["c"], vec![]),
            node("Shape", &["c"], &["c_shape"], vec![]),
            node("Expand", &["one", "empty"], &["e"], vec![]),
            node("Shape", &["e"], &["e_shape"], vec![]),
            node(
                "Concat",
                &["c_shape", "e_shape"],
                &["sizes"],
                vec![int("axis", 0)],
            ),
            node("Mul", &["x", "sizes"], &["m"], vec![]),
            node("NonZero", &["m"], &["y"], vec![]),
        ],
        vec![value("x", DataType::Int64, Some(&["5"]))],
        &["y"],
        vec![
            int64s("huge", &[1 << 32, 1 << 32]),
            int64s("one", &[1]),
            int64s("empty", &[0, 1 << 40, 1 << 40]),
        ],
    );
    let (_, report) = run(&model(g, 17));
    assert_eq!(report.nonzero_nodes, 1);
}
