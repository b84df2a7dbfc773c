//! The inference through the ops real detectors put before NonZero: Range over a feature
//! map's size (anchor grids), a view that splits channels, and ops whose sizes are unknown but
//! whose rank is not.

use super::*;
use crate::Kind;

fn float_scalar(name: &str, v: f32) -> TensorProto {
    TensorProto {
        dims: vec![],
        data_type: Some(DataType::Float as i32),
        name: Some(name.into()),
        raw_data: Some(v.to_le_bytes().to_vec().into()),
        ..Default::default()
    }
}

/// `NonZero(mask) -> Transpose -> GatherND(data, .)` -> `y`, after `nodes`.
fn with_chain(mut nodes: Vec<NodeProto>, mask: &str, data: &str) -> Vec<NodeProto> {
    nodes.extend([
        node("NonZero", &[mask], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
        node("GatherND", &[data, "t"], &["y"], vec![]),
    ]);
    nodes
}

/// Anchors over a feature map: `Range(0, float(W), 1)` has W elements, as does a reduction of
/// the map to its last axis; a view `[0, -1, 2, 0]` of `[1, 6, H, W]` is `[1, 3*H, 2, W]`.
#[test]
fn range_over_a_size_and_a_channel_view() {
    let nodes = with_chain(
        vec![
            node("Shape", &["x"], &["xs"], vec![]),
            node("Gather", &["xs", "three"], &["w"], vec![int("axis", 0)]),
            node(
                "Cast",
                &["w"],
                &["wf"],
                vec![int("to", DataType::Float as i64)],
            ),
            node("Range", &["zero_f", "wf", "one_f"], &["grid"], vec![]),
            node("Greater", &["grid", "zero_f"], &["mask"], vec![]),
            node("Reshape", &["x", "view"], &["x5"], vec![]),
            node(
                "ReduceSum",
                &["x5", "reduced_axes"],
                &["data"],
                vec![int("keepdims", 0)],
            ),
        ],
        "mask",
        "data",
    );
    let g = graph(
        nodes,
        vec![value("x", DataType::Float, Some(&["1", "6", "H", "W"]))],
        &["y"],
        vec![
            scalar("three", 3),
            float_scalar("zero_f", 0.0),
            float_scalar("one_f", 1.0),
            int64s("view", &[0, -1, 2, 0]),
            int64s("reduced_axes", &[0, 1, 2]),
        ],
    );
    let (m, report) = run(&model(g, 17));
    assert_eq!(
        main_listing(&m).last().unwrap(),
        "nonzero.BooleanMask(data,mask)->y",
        "{:?}",
        report.left
    );
    assert_eq!(report.count(Kind::BooleanMaskGatherNd), 1);
}

/// A Resize to sizes computed at run time keeps its rank: the NonZero behind it is proven
/// rank 4 (ArgWhere), though the sizes are unknown (the GatherND on the input is kept).
#[test]
fn resize_to_unknown_sizes_keeps_the_rank() {
    let nodes = with_chain(
        vec![
            node("Shape", &["sizes_from"], &["sizes"], vec![]),
            node("Resize", &["x", "", "", "sizes"], &["r"], vec![]),
            node("Greater", &["r", "zero_f"], &["mask"], vec![]),
        ],
        "mask",
        "x",
    );
    let zero = float_scalar("zero_f", 0.0);
    let g = graph(
        nodes,
        vec![
            value("x", DataType::Float, Some(&["1", "3", "H", "W"])),
            value("sizes_from", DataType::Float, None),
        ],
        &["y"],
        vec![zero],
    );
    // The sizes are not proven: compared at run time.
    let (m, report) = run(&model(g, 17));
    assert!(guarded(&m, &report, "y"), "{:?}", main_listing(&m));
    assert!(report.left.is_empty());
}

/// An If's output has what both branches agree on: a mask computed from x in both is x's shape.
#[test]
fn if_outputs_what_both_branches_agree_on() {
    let branch = |op: &str, out: &str, data_shape_kept: bool| {
        let other = if data_shape_kept { "zero_f" } else { "row" };
        graph(
            vec![node(op, &["x", other], &[out], vec![])],
            vec![],
            &[out],
            vec![],
        )
    };
    for (kept, rewritten) in [(true, true), (false, false)] {
        let nodes = with_chain(
            vec![node(
                "If",
                &["c"],
                &["mask"],
                vec![
                    graph_attr("then_branch", branch("Greater", "a", true)),
                    graph_attr("else_branch", branch("Less", "b", kept)),
                ],
            )],
            "mask",
            "x",
        );
        let zero = float_scalar("zero_f", 0.0);
        let g = graph(
            nodes,
            vec![
                value("c", DataType::Bool, Some(&[])),
                value("x", DataType::Float, Some(&["N", "1"])),
                value("row", DataType::Float, Some(&["5"])),
            ],
            &["y"],
            vec![zero],
        );
        let (m, _) = run(&model(g, 17));
        let last = main_listing(&m).pop().unwrap();
        assert_eq!(
            last == "nonzero.BooleanMask(x,mask)->y",
            rewritten,
            "{last}"
        );
    }
}

/// `zeros(B, L, 4)` and a view `[L, 2, -1]` with `L` a value computed at run time (Longformer's
/// global slots): the shapes' other entries are known, only `L`'s axis is fresh. A Slice of
/// `[:, :L]` keeps the other axes too. Before, each whole output was fresh.
#[test]
fn a_shape_with_one_value_in_it_keeps_its_other_entries() {
    use nonzero_rewrite_analysis::infer::{BodyInputs, ShapeTable};
    let g = graph(
        vec![
            node("ReduceMax", &["n"], &["most"], vec![int("keepdims", 1)]),
            node(
                "Concat",
                &["two", "most", "four"],
                &["zeros_shape"],
                vec![int("axis", 0)],
            ),
            node("ConstantOfShape", &["zeros_shape"], &["zeros"], vec![]),
            node(
                "Concat",
                &["most", "two", "minus_one"],
                &["view"],
                vec![int("axis", 0)],
            ),
            node("Reshape", &["x", "view"], &["viewed"], vec![]),
            node("Slice", &["zeros", "zero", "most", "one"], &["cut"], vec![]),
        ],
        vec![
            value("n", DataType::Int64, Some(&["3"])),
            value("x", DataType::Float, Some(&["6", "4"])),
        ],
        &["zeros", "viewed", "cut"],
        vec![
            int64s("two", &[2]),
            int64s("four", &[4]),
            int64s("minus_one", &[-1]),
            int64s("zero", &[0]),
            int64s("one", &[1]),
        ],
    );
    let index = nonzero_rewrite_graph::graph::GraphIndex::new(&g);
    let shapes = ShapeTable::for_graph(
        &g,
        &index,
        Some(&ShapeTable::scope(Some(17))),
        &BodyInputs::Declared,
    );
    let sizes = |name: &str| -> Vec<Option<i64>> {
        let dims = shapes.info(name).and_then(|i| i.dims.clone()).expect(name);
        dims.iter().map(|d| d.as_static()).collect()
    };
    assert_eq!(sizes("zeros"), [Some(2), None, Some(4)]);
    // The -1 takes what an unknown entry leaves: unknown too.
    assert_eq!(sizes("viewed"), [None, Some(2), None]);
    assert_eq!(sizes("cut"), [Some(2), None, Some(4)]);
}
