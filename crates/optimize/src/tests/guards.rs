//! What must not be rewritten, or only partly.

use super::*;
use crate::Kind;

fn chain(mask: ValueInfoProto, data: ValueInfoProto, gather_attrs: Vec<AttributeProto>) -> Vec<u8> {
    let (m, x) = (mask.name.clone().unwrap(), data.name.clone().unwrap());
    model(
        graph(
            vec![
                node("NonZero", &[&m], &["nz"], vec![]),
                node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
                node("GatherND", &[&x, "t"], &["y"], gather_attrs),
            ],
            vec![data, mask],
            &["y"],
            vec![],
        ),
        17,
    )
}

#[test]
fn unknown_rank_or_scalar_is_left_alone() {
    for (dims, reason) in [(None, "unknown-rank"), (Some(&[][..]), "scalar-input")] {
        let bytes = chain(
            value("m", DataType::Bool, dims),
            value("x", DataType::Float, Some(&["3"])),
            vec![],
        );
        let (out, report) = optimize(&bytes).unwrap();
        assert_eq!(out, bytes, "dims {dims:?}");
        assert!(report.rewrites.is_empty());
        assert_eq!(
            report.summary(),
            format!(
                "1 NonZero: 0 rewritten, 1 left\nleft: 1 {reason}\n\
                 0 rewrites; 0 nodes removed; 1 graph searched; model unchanged"
            )
        );
        assert_eq!(report.left.len(), 1);
        assert_eq!(report.left[0].reason.code(), reason);
        assert_eq!(report.left[0].node, "NonZero_nz");
    }
}

#[test]
fn a_model_without_nonzero_has_nothing_to_rewrite() {
    let bytes = model(
        graph(
            vec![node("Relu", &["x"], &["y"], vec![])],
            vec![value("x", DataType::Float, Some(&["3"]))],
            &["y"],
            vec![],
        ),
        17,
    );
    let (out, report) = optimize(&bytes).unwrap();
    assert_eq!(out, bytes);
    assert_eq!(
        report.summary(),
        "nothing to rewrite: the model has no NonZero (1 graph searched); model unchanged"
    );
}

#[test]
fn non_bool_mask_keeps_gather_nd() {
    let bytes = chain(
        value("m", DataType::Float, Some(&["3"])),
        value("x", DataType::Float, Some(&["3"])),
        vec![],
    );
    let (m, report) = run(&bytes);
    assert_eq!(
        main_listing(&m),
        ["nonzero.ArgWhere(m)->t", "GatherND(x,t)->y"]
    );
    assert_eq!(report.count(Kind::ArgWhere), 1);
}

#[test]
fn unproven_sizes_of_a_2d_mask_are_checked_at_run_time_others_keep_gather_nd() {
    // Named apart, a 2-D mask: the guarded form (If the sizes agree, BooleanMask, else the
    // original).
    let bytes = chain(
        value("m", DataType::Bool, Some(&["N", "K"])),
        value("x", DataType::Float, Some(&["M", "L", "4"])),
        vec![],
    );
    let (m, report) = run(&bytes);
    assert!(guarded(&m, &report, "y"), "{:?}", main_listing(&m));
    assert!(report.left.is_empty());
    // A 1-D mask needs no guard: its gather is BooleanMaskAxis (patterns/mask_axis.rs).
    let bytes = chain(
        value("m", DataType::Bool, Some(&["N"])),
        value("x", DataType::Float, Some(&["M", "4"])),
        vec![],
    );
    let (m, _) = run(&bytes);
    assert_eq!(main_listing(&m), ["nonzero.BooleanMaskAxis(x,m)->y"]);
    // Sizes fixed apart, or data of lower rank than the mask: the gather stays.
    for (mask, data) in [(&["3", "N"][..], &["4", "N"][..]), (&["3", "4"], &["3"])] {
        let bytes = chain(
            value("m", DataType::Bool, Some(mask)),
            value("x", DataType::Float, Some(data)),
            vec![],
        );
        let (m, _) = run(&bytes);
        assert_eq!(
            main_listing(&m),
            ["nonzero.ArgWhere(m)->t", "GatherND(x,t)->y"],
            "{mask:?} {data:?}"
        );
    }
}

#[test]
fn batch_dims_one_keeps_gather_nd() {
    let bytes = chain(
        value("m", DataType::Bool, Some(&["3"])),
        value("x", DataType::Float, Some(&["3", "2"])),
        vec![int("batch_dims", 1)],
    );
    let (m, _) = run(&bytes);
    assert_eq!(
        main_listing(&m),
        ["nonzero.ArgWhere(m)->t", "GatherND(x,t)->y"]
    );
}

#[test]
fn other_perm_is_left_alone() {
    let g = graph(
        vec![
            node("NonZero", &["x"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["y"], vec![ints("perm", &[0, 1])]),
        ],
        vec![value("x", DataType::Float, Some(&["3", "4"]))],
        &["y"],
        vec![],
    );
    let bytes = model(g, 13);
    assert_eq!(optimize(&bytes).unwrap().0, bytes);
}

#[test]
fn nonzero_with_two_readers_is_kept() {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["y"], vec![]),
            node("Shape", &["nz"], &["s"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["N"])),
            value("m", DataType::Bool, Some(&["N"])),
        ],
        &["y", "s", "nz"],
        vec![],
    );
    let (m, report) = run(&model(g, 13));
    assert_eq!(
        main_listing(&m),
        [
            "NonZero(m)->nz",
            "nonzero.BooleanMask(x,m)->y",
            "Shape(nz)->s"
        ]
    );
    assert_eq!(report.removed_nodes, 1);
}

#[test]
fn transposed_output_with_two_readers_keeps_argwhere() {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["y"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["N"])),
            value("m", DataType::Bool, Some(&["N"])),
        ],
        &["y", "t"],
        vec![],
    );
    let (m, report) = run(&model(g, 13));
    assert_eq!(
        main_listing(&m),
        ["nonzero.ArgWhere(m)->t", "nonzero.BooleanMask(x,m)->y"]
    );
    assert_eq!(report.rewrites.len(), 2);
}

/// `tf.boolean_mask(x, m, axis=1)`: the gather of a 1-D mask's positions along axis 1 is
/// BooleanMaskAxis (patterns/mask_axis.rs), axis kept.
#[test]
fn gather_on_axis_one_is_boolean_mask_axis() {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("Squeeze", &["t", "one"], &["sq"], vec![]),
            node("Gather", &["x", "sq"], &["y"], vec![int("axis", 1)]),
        ],
        vec![
            value("x", DataType::Float, Some(&["N", "N"])),
            value("m", DataType::Bool, Some(&["N"])),
        ],
        &["y"],
        vec![int64s("one", &[1])],
    );
    let (m, report) = run(&model(g, 13));
    assert_eq!(main_listing(&m), ["nonzero.BooleanMaskAxis(x,m)->y"]);
    let node = &m.graph.as_ref().unwrap().node[0];
    assert_eq!(crate::graph::int_attr(node, "axis"), Ok(Some(1)));
    assert_eq!(report.count(Kind::BooleanMaskAxis), 1);
    assert!(report.left.is_empty() && report.coordinates_used.is_empty());
}

#[test]
fn expand_to_another_tensors_shape_is_not_identity() {
    let g = graph(
        vec![
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("Squeeze", &["t", "one"], &["sq"], vec![]),
            node("Shape", &["other"], &["sh"], vec![]),
            node("Expand", &["sq", "sh"], &["e"], vec![]),
            node("Unsqueeze", &["e", "one"], &["u"], vec![]),
            node("GatherND", &["x", "u"], &["y"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["N"])),
            value("m", DataType::Bool, Some(&["N"])),
            value("other", DataType::Int64, Some(&["K"])),
        ],
        &["y"],
        vec![int64s("one", &[1])],
    );
    let (m, _) = run(&model(g, 13));
    assert_eq!(main_listing(&m)[0], "nonzero.ArgWhere(m)->t");
    assert_eq!(main_listing(&m).len(), 6);
}

/// The guarded form's branches: BooleanMask where the sizes agree, the default mode's earlier
/// output (ArgWhere, then the same gather) where not; a second run changes nothing.
#[test]
fn the_guarded_form_is_boolean_mask_or_the_original_and_stays_put() {
    let bytes = chain(
        value("m", DataType::Bool, Some(&["unk__1", "unk__2"])),
        value("x", DataType::Float, Some(&["unk__3", "unk__4", "3"])),
        vec![],
    );
    let (m, report) = run(&bytes);
    assert!(guarded(&m, &report, "y"));
    let g = m.graph.as_ref().unwrap();
    let the_if = g.node.last().unwrap();
    let branch = |name: &str| {
        let a = the_if.attribute.iter().find(|a| a.name() == name).unwrap();
        listing(a.g.as_ref().unwrap())
    };
    let then_branch = branch("then_branch");
    assert_eq!(then_branch.len(), 1);
    assert!(
        then_branch[0].starts_with("nonzero.BooleanMask(x,m)->"),
        "{then_branch:?}"
    );
    let else_branch = branch("else_branch");
    assert!(
        else_branch[0].starts_with("nonzero.ArgWhere(m)->"),
        "{else_branch:?}"
    );
    assert!(else_branch[1].starts_with("GatherND(x,"), "{else_branch:?}");
    // The condition: Shape(m) against Shape(x)[:2], no NonZero left anywhere.
    let outer = main_listing(&m);
    assert!(outer.iter().any(|n| n.starts_with("Shape(m)")), "{outer:?}");
    assert!(!outer.iter().any(|n| n.starts_with("NonZero")), "{outer:?}");
    assert_eq!(report.nonzero_nodes, 1);
    let (again, second) = run(&m.encode_to_vec());
    assert!(second.rewrites.is_empty(), "{:?}", second.rewrites);
    assert_eq!(main_listing(&again), outer);
}
