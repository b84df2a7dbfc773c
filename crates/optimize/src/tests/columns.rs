//! Coordinates taken apart into columns and put back (issue 25 b, c, d): dynamo's
//! `Concat` of every column, TorchScript's linear index over `Flatten(x)`, and the near misses
//! that must stay as they are.

use super::*;
use crate::Kind;

/// dynamo's `x[torch.where(c)]`: column i is `Slice(t, [i], [i+1], axes=[1]) -> Squeeze(1) ->
/// Unsqueeze(-1)` (or `Gather(t, i, axis=1) -> Unsqueeze(-1)`), put back by `Concat(axis=-1)`
/// in the order given.
fn dynamo_where(order: [usize; 2], by_gather: bool) -> Vec<u8> {
    let mut nodes = vec![
        node("NonZero", &["c"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
    ];
    for i in 0..2 {
        let (i0, i1) = (format!("i{i}"), format!("i{}", i + 1));
        let (col, sq, un) = (format!("col{i}"), format!("sq{i}"), format!("un{i}"));
        if by_gather {
            nodes.push(node("Gather", &["t", &i0], &[&sq], vec![int("axis", 1)]));
        } else {
            nodes.push(node("Slice", &["t", &i0, &i1, "i1"], &[&col], vec![]));
            nodes.push(node("Squeeze", &[&col, "i1"], &[&sq], vec![]));
        }
        nodes.push(node("Unsqueeze", &[&sq, "minus1"], &[&un], vec![]));
    }
    let (a, b) = (format!("un{}", order[0]), format!("un{}", order[1]));
    nodes.push(node("Concat", &[&a, &b], &["idx"], vec![int("axis", -1)]));
    nodes.push(node("GatherND", &["x", "idx"], &["y"], vec![]));
    let (i0, i1) = if by_gather {
        (scalar("i0", 0), scalar("i1", 1))
    } else {
        (int64s("i0", &[0]), int64s("i1", &[1]))
    };
    let g = graph(
        nodes,
        vec![
            value("x", DataType::Float, Some(&["N", "K", "3"])),
            value("c", DataType::Bool, Some(&["N", "K"])),
        ],
        &["y"],
        vec![i0, i1, int64s("i2", &[2]), int64s("minus1", &[-1])],
    );
    model(g, 18)
}

#[test]
fn dynamo_concat_of_every_column_is_the_coordinates() {
    for by_gather in [false, true] {
        let (m, report) = run(&dynamo_where([0, 1], by_gather));
        assert_eq!(
            main_listing(&m),
            ["nonzero.BooleanMask(x,c)->y"],
            "{by_gather}"
        );
        assert_eq!(report.count(Kind::BooleanMaskGatherNd), 1);
        assert!(report.left.is_empty());
    }
}

#[test]
fn columns_put_back_out_of_order_are_not_the_coordinates() {
    let (m, report) = run(&dynamo_where([1, 0], false));
    assert_eq!(report.count(Kind::BooleanMaskGatherNd), 0);
    assert!(main_listing(&m)
        .iter()
        .any(|n| n.starts_with("GatherND(x,idx)")));
    assert_eq!(report.count(Kind::ArgWhere), 1);
}

/// TorchScript's `x[torch.where(c)]` for x `[N, K] + rest` and c `[N, K]`: `Split` into the two
/// columns, `r * Shape(x)[stride_axis] + c`, `Gather(Flatten(x, axis=flatten_axis))`, then the
/// two Reshapes to `[-1] + rest` and `[nnz] + rest`.
fn torchscript_where(rest: &[&str], stride_axis: i64, flatten_axis: i64) -> Vec<u8> {
    torchscript_where_in(&["N", "K"], rest, stride_axis, flatten_axis)
}

fn torchscript_where_in(
    lead: &[&str],
    rest: &[&str],
    stride_axis: i64,
    flatten_axis: i64,
) -> Vec<u8> {
    let mut x_dims = lead.to_vec();
    x_dims.extend_from_slice(rest);
    let tail = if rest.is_empty() {
        vec![]
    } else {
        vec!["tail"]
    };
    let mut first_target = vec!["minus1"];
    first_target.extend(tail.iter().copied());
    let mut final_target = vec!["count"];
    final_target.extend(tail.iter().copied());
    let mut nodes = vec![
        node("NonZero", &["c"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
        node("Split", &["t", "ones"], &["r2", "c2"], vec![int("axis", 1)]),
        node("Squeeze", &["r2", "one"], &["r"], vec![]),
        node("Squeeze", &["c2", "one"], &["col"], vec![]),
        node("Shape", &["x"], &["sx"], vec![]),
        node(
            "Gather",
            &["sx", "stride_at"],
            &["stride"],
            vec![int("axis", 0)],
        ),
        node(
            "Flatten",
            &["x"],
            &["flat"],
            vec![int("axis", flatten_axis)],
        ),
        node("Mul", &["r", "stride"], &["rw"], vec![]),
        node("Add", &["col", "rw"], &["linear"], vec![]),
        node(
            "Gather",
            &["flat", "linear"],
            &["picked"],
            vec![int("axis", 0)],
        ),
        node("Shape", &["linear"], &["count"], vec![]),
    ];
    if !rest.is_empty() {
        nodes.push(node(
            "Gather",
            &["sx", "two"],
            &["tail"],
            vec![int("axis", 0)],
        ));
    }
    nodes.push(node(
        "Concat",
        &first_target,
        &["target1"],
        vec![int("axis", 0)],
    ));
    nodes.push(node("Reshape", &["picked", "target1"], &["p1"], vec![]));
    nodes.push(node(
        "Concat",
        &final_target,
        &["target2"],
        vec![int("axis", 0)],
    ));
    nodes.push(node("Reshape", &["p1", "target2"], &["y"], vec![]));
    let g = graph(
        nodes,
        vec![
            value("x", DataType::Float, Some(&x_dims)),
            value("c", DataType::Bool, Some(&["N", "K"])),
        ],
        &["y"],
        vec![
            int64s("ones", &[1, 1]),
            int64s("one", &[1]),
            int64s("two", &[2]),
            int64s("minus1", &[-1]),
            scalar("stride_at", stride_axis),
        ],
    );
    model(g, 17)
}

#[test]
fn torchscript_linear_index_is_a_boolean_mask() {
    for rest in [&["3"][..], &["D"][..], &[][..]] {
        let (m, report) = run(&torchscript_where(rest, 1, 2));
        assert_eq!(
            main_listing(&m),
            ["nonzero.BooleanMask(x,c)->y"],
            "{rest:?}"
        );
        assert_eq!(report.count(Kind::BooleanMaskLinear), 1);
        assert_eq!(report.count(Kind::ArgWhere), 0);
        assert!(report.left.is_empty() && report.coordinates_used.is_empty());
    }
}

#[test]
fn a_linear_index_with_another_stride_or_flatten_is_kept() {
    // Stride Shape(x)[0] instead of [1], or Flatten at axis 1: other elements, or other rows.
    for (stride_axis, flatten_axis) in [(0, 2), (1, 1)] {
        let (m, report) = run(&torchscript_where(&["3"], stride_axis, flatten_axis));
        assert_eq!(
            report.count(Kind::BooleanMaskLinear),
            0,
            "{stride_axis} {flatten_axis}"
        );
        assert!(main_listing(&m)
            .iter()
            .any(|n| n.starts_with("Gather(flat,linear)")));
    }
}

#[test]
fn a_linear_index_over_data_of_unproven_size_is_kept_with_the_reason() {
    // tf2onnx-style names: x's dims are named apart from c's.
    let (m, report) = run(&torchscript_where_in(&["unk__1", "unk__2"], &["3"], 1, 2));
    assert_eq!(report.count(Kind::BooleanMaskLinear), 0);
    assert!(main_listing(&m)
        .iter()
        .any(|n| n.starts_with("Gather(flat,linear)")));
    let left: Vec<_> = report
        .left
        .iter()
        .map(|l| (l.op.as_str(), l.reason.code()))
        .collect();
    assert_eq!(left, [("Gather", "sizes-not-proven")]);
}
