//! Each exporter chain, graph in -> exact graph out.

use super::*;
use crate::Kind;

#[test]
fn nonzero_transpose_becomes_argwhere() {
    let g = graph(
        vec![
            node("NonZero", &["x"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["y"], vec![ints("perm", &[1, 0])]),
        ],
        vec![value("x", DataType::Float, Some(&["N", "4"]))],
        &["y"],
        vec![],
    );
    let (m, report) = run(&model(g, 17));
    assert_eq!(main_listing(&m), ["nonzero.ArgWhere(x)->y"]);
    assert_eq!(report.count(Kind::ArgWhere), 1);
    assert_eq!(report.removed_nodes, 1);
    assert!(m
        .opset_import
        .iter()
        .any(|o| o.domain.as_deref() == Some("nonzero") && o.version == Some(1)));
    assert_eq!(
        report.summary(),
        "1 NonZero: 1 rewritten, 0 left\n\
         coordinates used by: 1 output\n\
         1 rewrite: 1 NonZero -> Transpose as ArgWhere; 1 node removed; 1 graph searched\n\
         1 fallback function added (the model also runs without the library)"
    );
}

#[test]
fn x_of_mask_becomes_boolean_mask() {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["y"], vec![int("batch_dims", 0)]),
        ],
        vec![
            value("x", DataType::Float, Some(&["N", "M", "3"])),
            value("m", DataType::Bool, Some(&["N", "M"])),
        ],
        &["y"],
        vec![],
    );
    let (m, report) = run(&model(g, 18));
    assert_eq!(main_listing(&m), ["nonzero.BooleanMask(x,m)->y"]);
    assert_eq!(report.count(Kind::BooleanMaskGatherNd), 1);
    assert_eq!(report.removed_nodes, 2);
}

#[test]
fn boxes_by_score_through_greater() {
    let g = graph(
        vec![
            node("Greater", &["s", "t"], &["gt"], vec![]),
            node("NonZero", &["gt"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["idx"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["b", "idx"], &["y"], vec![]),
        ],
        vec![
            value("b", DataType::Float, Some(&["N", "4"])),
            value("s", DataType::Float, Some(&["N"])),
        ],
        &["y"],
        vec![TensorProto {
            data_type: Some(DataType::Float as i32),
            name: Some("t".into()),
            float_data: vec![0.5],
            ..Default::default()
        }],
    );
    let (m, _) = run(&model(g, 11));
    assert_eq!(
        main_listing(&m),
        ["Greater(s,t)->gt", "nonzero.BooleanMask(b,gt)->y"]
    );
}

#[test]
fn masked_select_expand_variant() {
    let g = graph(
        vec![
            node("Shape", &["x"], &["sh"], vec![]),
            node("Expand", &["m", "sh"], &["me"], vec![]),
            node("NonZero", &["me"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["y"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["N", "4"])),
            value("m", DataType::Bool, Some(&["4"])),
        ],
        &["y"],
        vec![],
    );
    let (m, _) = run(&model(g, 17));
    assert_eq!(
        main_listing(&m),
        [
            "Shape(x)->sh",
            "Expand(m,sh)->me",
            "nonzero.BooleanMask(x,me)->y"
        ]
    );
}

/// The dynamo exporter's `boxes[scores > t]` (torch 2.x, opset 18), as exported.
#[test]
fn dynamo_one_d_mask_chain() {
    let g = graph(
        vec![
            node("Greater", &["s", "thr"], &["gt"], vec![]),
            node("NonZero", &["gt"], &["v1"], vec![]),
            node("Transpose", &["v1"], &["v2"], vec![ints("perm", &[1, 0])]),
            node("Squeeze", &["v2", "one"], &["v4"], vec![]),
            node("Max", &["v4"], &["v6"], vec![]),
            node("Shape", &["v6"], &["v7"], vec![int("start", 0)]),
            node("Expand", &["v4", "v7"], &["v8"], vec![]),
            node("Unsqueeze", &["v8", "minus_one"], &["v10"], vec![]),
            node(
                "GatherND",
                &["b", "v10"],
                &["y"],
                vec![int("batch_dims", 0)],
            ),
        ],
        vec![
            value("b", DataType::Float, Some(&["s0", "4"])),
            value("s", DataType::Float, Some(&["s0"])),
        ],
        &["y"],
        vec![
            int64s("one", &[1]),
            int64s("minus_one", &[-1]),
            TensorProto {
                data_type: Some(DataType::Float as i32),
                name: Some("thr".into()),
                float_data: vec![0.5],
                ..Default::default()
            },
        ],
    );
    let (m, report) = run(&model(g, 18));
    assert_eq!(
        main_listing(&m),
        ["Greater(s,thr)->gt", "nonzero.BooleanMask(b,gt)->y"]
    );
    assert_eq!(report.removed_nodes, 7);
    let inits: Vec<_> = m
        .graph
        .as_ref()
        .unwrap()
        .initializer
        .iter()
        .map(|t| t.name.clone().unwrap())
        .collect();
    assert_eq!(inits, ["thr"]);
}

/// TorchScript's `b[torch.where(s > t)[0]]`: Split(axis=1) -> Squeeze(1) -> Gather(axis=0).
#[test]
fn torchscript_split_squeeze_gather() {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("Constant", &[], &["split"], vec![]),
            node("Split", &["t", "one"], &["col"], vec![int("axis", 1)]),
            node("Squeeze", &["col", "one"], &["sq"], vec![]),
            node("Gather", &["b", "sq"], &["y"], vec![int("axis", 0)]),
        ],
        vec![
            value("b", DataType::Float, Some(&["N", "4"])),
            value("m", DataType::Bool, Some(&["N"])),
        ],
        &["y"],
        vec![int64s("one", &[1])],
    );
    let (m, report) = run(&model(g, 13));
    // The Constant was dead before the rewrite and is not ours to remove.
    assert_eq!(
        main_listing(&m),
        ["Constant()->split", "nonzero.BooleanMask(b,m)->y"]
    );
    assert_eq!(report.count(Kind::BooleanMaskGather), 1);
}

/// Opset 11: Squeeze's axes are an attribute; dynamo-style Slice of the single column.
#[test]
fn slice_squeeze_gather_with_attribute_axes() {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![]),
            node("Slice", &["t", "zero", "one", "one"], &["col"], vec![]),
            node("Squeeze", &["col"], &["sq"], vec![ints("axes", &[1])]),
            node("Gather", &["b", "sq"], &["y"], vec![]),
        ],
        vec![
            value("b", DataType::Float, Some(&["7", "2", "2"])),
            value("m", DataType::Bool, Some(&["7"])),
        ],
        &["y"],
        vec![int64s("zero", &[0]), int64s("one", &[1])],
    );
    let (m, _) = run(&model(g, 11));
    assert_eq!(main_listing(&m), ["nonzero.BooleanMask(b,m)->y"]);
    assert!(m.graph.unwrap().initializer.is_empty());
}

/// A 2-D mask's columns (nonzero(as_tuple=True)) cannot be one BooleanMask: ArgWhere feeds them.
#[test]
fn two_d_columns_get_argwhere() {
    let g = graph(
        vec![
            node("NonZero", &["x"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("Split", &["t", "ones"], &["c0", "c1"], vec![int("axis", 1)]),
            node("Squeeze", &["c0", "one"], &["r"], vec![]),
            node("Squeeze", &["c1", "one"], &["c"], vec![]),
        ],
        vec![value("x", DataType::Float, Some(&["3", "4"]))],
        &["r", "c"],
        vec![int64s("ones", &[1, 1]), int64s("one", &[1])],
    );
    let (m, _) = run(&model(g, 13));
    assert_eq!(
        main_listing(&m),
        [
            "nonzero.ArgWhere(x)->t",
            "Split(t,ones)->c0,c1",
            "Squeeze(c0,one)->r",
            "Squeeze(c1,one)->c"
        ]
    );
}

#[test]
fn nonzero_inside_if_branch() {
    let branch = |out: &str| {
        graph(
            vec![
                node("NonZero", &["m"], &[&format!("{out}_nz")], vec![]),
                node(
                    "Transpose",
                    &[&format!("{out}_nz")],
                    &[out],
                    vec![ints("perm", &[1, 0])],
                ),
            ],
            vec![],
            &[out],
            vec![],
        )
    };
    let g = graph(
        vec![node(
            "If",
            &["c"],
            &["y"],
            vec![
                graph_attr("then_branch", branch("a")),
                graph_attr("else_branch", branch("b")),
            ],
        )],
        vec![
            value("c", DataType::Bool, Some(&[])),
            value("m", DataType::Bool, Some(&["N"])),
        ],
        &["y"],
        vec![],
    );
    let (m, report) = run(&model(g, 13));
    assert_eq!(report.count(Kind::ArgWhere), 2);
    assert_eq!(report.graphs, 3);
    let node = &m.graph.unwrap().node[0];
    for a in &node.attribute {
        let out = &a.g.as_ref().unwrap().output[0].name.clone().unwrap();
        assert_eq!(
            listing(a.g.as_ref().unwrap()),
            [format!("nonzero.ArgWhere(m)->{out}")]
        );
    }
}
