//! Proofs without `value_info`: the rewriter's own inference, and the traps it must respect.

use super::*;
use crate::{optimize_with, Fact, Kind, Options, Reason, Report};

/// A float initializer of these dims (values do not matter to the rewriter).
fn weights(name: &str, dims: &[i64]) -> TensorProto {
    let count: i64 = dims.iter().product();
    TensorProto {
        dims: dims.to_vec(),
        data_type: Some(DataType::Float as i32),
        name: Some(name.into()),
        raw_data: Some(vec![0; 4 * count as usize].into()),
        ..Default::default()
    }
}

/// `NonZero(mask) -> Transpose -> GatherND(data, .)`, output `y`.
fn gather_chain(mask: &str, data: &str) -> Vec<NodeProto> {
    vec![
        node("NonZero", &[mask], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
        node("GatherND", &[data, "t"], &["y"], vec![]),
    ]
}

pub(super) fn reasons(report: &Report) -> Vec<(String, Reason)> {
    report
        .left
        .iter()
        .map(|l| (l.op.clone(), l.reason))
        .collect()
}

/// An SSD-like head with no value_info: two Convs on a `[1, 3, H, W]` image, reshaped with
/// `-1` (once through Shape arithmetic), Softmax, a class column, `Greater`: the boxes'
/// first size (`2*H*W`) is proven equal to the scores' through the whole head.
#[test]
fn detection_head_without_value_info() {
    let conv = |w: &str, out: &str| {
        node(
            "Conv",
            &["x", w],
            &[out],
            vec![ints("pads", &[1, 1, 1, 1]), ints("kernel_shape", &[3, 3])],
        )
    };
    let nodes = vec![
        conv("w_cls", "cls"),
        conv("w_box", "box"),
        node("Reshape", &["cls", "cls_shape"], &["cls3"], vec![]),
        node("Softmax", &["cls3"], &["prob"], vec![int("axis", -1)]),
        node("Gather", &["prob", "one"], &["prob1"], vec![int("axis", 2)]),
        node("Squeeze", &["prob1", "zero_axis"], &["score"], vec![]),
        node("Greater", &["score", "threshold"], &["keep"], vec![]),
        node("Shape", &["box"], &["box_shape"], vec![]),
        node(
            "Gather",
            &["box_shape", "zero_idx"],
            &["batch"],
            vec![int("axis", 0)],
        ),
        node(
            "Concat",
            &["batch", "minus_one", "four"],
            &["box_target"],
            vec![int("axis", 0)],
        ),
        node("Reshape", &["box", "box_target"], &["box3"], vec![]),
        node("Squeeze", &["box3", "zero_axis"], &["boxes"], vec![]),
    ];
    let mut all = nodes;
    all.extend(gather_chain("keep", "boxes"));
    let scalar = |name: &str, v: i64| TensorProto {
        dims: vec![],
        ..int64s(name, &[v])
    };
    let g = graph(
        all,
        vec![value("x", DataType::Float, Some(&["1", "3", "H", "W"]))],
        &["y"],
        vec![
            weights("w_cls", &[6, 3, 3, 3]),
            weights("w_box", &[8, 3, 3, 3]),
            int64s("cls_shape", &[1, -1, 3]),
            scalar("one", 1),
            int64s("zero_axis", &[0]),
            int64s("zero_idx", &[0]),
            int64s("minus_one", &[-1]),
            int64s("four", &[4]),
            weights("threshold", &[]),
        ],
    );
    let (m, report) = run(&model(g, 17));
    assert_eq!(
        main_listing(&m).last().unwrap(),
        "nonzero.BooleanMask(boxes,keep)->y"
    );
    assert_eq!(report.count(Kind::BooleanMaskGatherNd), 1);
    assert!(report.rewrites[0].facts.contains(&Fact::SameSize {
        tensor: "keep".into(),
        axis: 0,
        other: "boxes".into(),
        other_axis: 0,
        size: "2*H*W".into(),
    }));
    assert!(report.left.is_empty(), "{:?}", report.left);
}

fn mask_of_x_model(
    extra_input: Option<ValueInfoProto>,
    mask_nodes: Vec<NodeProto>,
    x: &[&str],
) -> Vec<u8> {
    let mut nodes = mask_nodes;
    nodes.extend(gather_chain("mask", "x"));
    let mut inputs = vec![value("x", DataType::Float, Some(x))];
    inputs.extend(extra_input);
    model(graph(nodes, inputs, &["y"], vec![weights("zero", &[])]), 17)
}

/// "Computed element-wise from x" proves x's shape only when the other operand broadcasts
/// into x: a scalar does; a tensor of unknown shape may be the larger one.
#[test]
fn elementwise_from_x_only_when_the_other_operand_broadcasts_into_x() {
    let scalar = mask_of_x_model(
        None,
        vec![node("Greater", &["x", "zero"], &["mask"], vec![])],
        &[""],
    );
    let (m, _) = run(&scalar);
    assert_eq!(
        main_listing(&m),
        ["Greater(x,zero)->mask", "nonzero.BooleanMask(x,mask)->y"]
    );

    let other = value("z", DataType::Float, Some(&[""]));
    let both = mask_of_x_model(
        Some(other),
        vec![node("Greater", &["x", "z"], &["mask"], vec![])],
        &[""],
    );
    // Not proven: no BooleanMask, but BooleanMaskAxis, which needs no proof of a 1-D mask.
    let (m, report) = run(&both);
    let last = main_listing(&m).pop().unwrap();
    assert_eq!(last, "nonzero.BooleanMaskAxis(x,mask)->y");
    assert_eq!(report.count(crate::Kind::BooleanMaskGatherNd), 0);
}

/// Expand broadcasts both ways: `Expand(m, Shape(x))` has x's shape only where m's sizes are 1.
#[test]
fn expand_broadcasts_both_ways() {
    for (mask_dims, rewritten) in [(&["1"][..], true), (&["5"][..], false)] {
        let bytes = mask_of_x_model(
            Some(value("m", DataType::Bool, Some(mask_dims))),
            vec![
                node("Shape", &["x"], &["xs"], vec![]),
                node("Expand", &["m", "xs"], &["mask"], vec![]),
            ],
            &[""],
        );
        // Unproven, the 1-D mask's gather is BooleanMaskAxis (no proof needed) instead.
        let (m, report) = run(&bytes);
        let last = main_listing(&m).pop().unwrap();
        let op = if rewritten { "" } else { "Axis" };
        let want = format!("nonzero.BooleanMask{op}(x,mask)->y");
        assert_eq!(last, want, "{mask_dims:?}");
        assert!(report.left.is_empty());
    }
}

/// Reshape's `0` copies the input's size and `-1` takes what is left.
#[test]
fn reshape_zero_and_minus_one() {
    let bytes = model(
        graph(
            {
                let mut n = vec![
                    node("Reshape", &["a", "target"], &["x"], vec![]),
                    node("Reshape", &["b", "target"], &["b3"], vec![]),
                    node("Less", &["b3", "zero"], &["mask"], vec![]),
                ];
                n.extend(gather_chain("mask", "x"));
                n
            },
            vec![
                value("a", DataType::Float, Some(&["N", "6"])),
                value("b", DataType::Float, Some(&["N", "6"])),
            ],
            &["y"],
            vec![int64s("target", &[0, -1, 2]), weights("zero", &[])],
        ),
        17,
    );
    let (m, report) = run(&bytes);
    assert_eq!(
        main_listing(&m).pop().unwrap(),
        "nonzero.BooleanMask(x,mask)->y"
    );
    let sizes: Vec<String> = report.rewrites[0]
        .facts
        .iter()
        .filter_map(|f| match f {
            Fact::SameSize { size, .. } => Some(size.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(sizes, ["N", "3", "2"]);
}

/// Squeeze without axes removes every size-1 axis: with a symbolic size the rank is unknown.
#[test]
fn squeeze_without_axes() {
    for (dims, rank_known) in [(&["3", "1"][..], true), (&["N", "1"][..], false)] {
        let g = graph(
            vec![
                node("Squeeze", &["m"], &["s"], vec![]),
                node("NonZero", &["s"], &["nz"], vec![]),
                node("Transpose", &["nz"], &["y"], vec![ints("perm", &[1, 0])]),
            ],
            vec![value("m", DataType::Bool, Some(dims))],
            &["y"],
            vec![],
        );
        let (_, report) = run(&model(g, 17));
        assert_eq!(report.count(Kind::ArgWhere) == 1, rank_known, "{dims:?}");
        if !rank_known {
            assert_eq!(
                reasons(&report),
                [("NonZero".to_string(), Reason::UnknownRank)]
            );
        }
    }
}

/// The mask must be proven bool: an op the inference does not know gives no element type
/// (here its shape is declared, its type is not).
#[test]
fn mask_from_an_unknown_op_is_not_proven_bool() {
    let mut custom = node("Threshold", &["x"], &["mask"], vec![]);
    custom.domain = Some("custom".into());
    let mut m = ModelProto::decode(mask_of_x_model(None, vec![custom], &["4"]).as_slice()).unwrap();
    let g = m.graph.as_mut().unwrap();
    g.value_info
        .push(value("mask", DataType::Undefined, Some(&["4"])));
    let (m, report) = run(&m.encode_to_vec());
    assert_eq!(main_listing(&m)[2], "GatherND(x,t)->y");
    assert_eq!(
        reasons(&report),
        [("GatherND".to_string(), Reason::MaskNotBool)]
    );
}

/// A value_info that contradicts the inference: neither is trusted, the chain stays whole.
#[test]
fn value_info_disagreeing_with_inference_leaves_the_chain() {
    let mut bytes_model = ModelProto::decode(
        mask_of_x_model(
            None,
            vec![node("Greater", &["x", "zero"], &["mask"], vec![])],
            &["3"],
        )
        .as_slice(),
    )
    .unwrap();
    let g = bytes_model.graph.as_mut().unwrap();
    g.value_info
        .push(value("mask", DataType::Bool, Some(&["4"])));
    let bytes = bytes_model.encode_to_vec();
    let (out, report) = optimize(&bytes).unwrap();
    assert_eq!(out, bytes);
    assert_eq!(
        reasons(&report),
        [("NonZero".to_string(), Reason::Conflict)]
    );
    assert!(
        report.left[0]
            .detail
            .contains("declared [4] but inferred [3]"),
        "{}",
        report.left[0].detail
    );
}

/// Downstream of a contradiction, declarations are not trusted either.
#[test]
fn declarations_downstream_of_a_conflict_are_not_trusted() {
    let nodes = vec![
        node("Greater", &["x", "zero"], &["first"], vec![]),
        node("Not", &["first"], &["mask"], vec![]),
    ];
    let mut m = ModelProto::decode(mask_of_x_model(None, nodes, &["3"]).as_slice()).unwrap();
    let g = m.graph.as_mut().unwrap();
    g.value_info
        .push(value("first", DataType::Bool, Some(&["4"])));
    g.value_info
        .push(value("mask", DataType::Bool, Some(&["3"])));
    let bytes = m.encode_to_vec();
    let (out, report) = optimize(&bytes).unwrap();
    assert_eq!(out, bytes);
    assert_eq!(
        reasons(&report),
        [("NonZero".to_string(), Reason::Conflict)]
    );
    assert!(report.left[0].detail.contains("computed from first"));
}

/// Options: the nonzero domain for what is left (rank >= 1 only), and the CUDA provider.
#[test]
fn nonzero_domain_and_cuda_provider() {
    let g = graph(
        vec![
            node("NonZero", &["a"], &["na"], vec![]),
            node("NonZero", &["s"], &["ns"], vec![]),
            node("NonZero", &["u"], &["nu"], vec![]),
        ],
        vec![
            value("a", DataType::Float, Some(&["N", "2"])),
            value("s", DataType::Float, Some(&[])),
            value("u", DataType::Float, None),
        ],
        &["na", "ns", "nu"],
        vec![],
    );
    let bytes = model(g, 17);
    let domain = Options {
        nonzero_domain: true,
        ..Options::default()
    };
    let (out, report) = optimize_with(&bytes, &domain).unwrap();
    let m = ModelProto::decode(out.as_slice()).unwrap();
    assert_eq!(
        main_listing(&m),
        ["nonzero.NonZero(a)->na", "NonZero(s)->ns", "NonZero(u)->nu"]
    );
    assert!(m
        .opset_import
        .iter()
        .any(|o| o.domain.as_deref() == Some("nonzero")));
    assert_eq!(report.moved_to_domain, 1);
    let summary = report.summary();
    assert!(summary.starts_with("3 NonZeros: 0 rewritten, 2 left, 1 moved to domain nonzero\nleft: 1 unknown-rank, 1 scalar-input"), "{summary}");

    let cuda = Options {
        provider: crate::Provider::Cuda,
        nonzero_domain: true,
        ..Default::default()
    };
    let (out, report) = optimize_with(&bytes, &cuda).unwrap();
    assert_eq!(out, bytes);
    assert!(report.left.iter().all(|l| l.reason == Reason::Provider) && report.left.len() == 3);
    assert!(report
        .summary()
        .contains("provider cuda: nothing rewritten"));
}
