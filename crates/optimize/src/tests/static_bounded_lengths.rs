//! A length the shapes bound (emit-static's capped/bounded.rs): `max(m.sum(1))` of a bool `m`
//! is at most m's row length, which is then its capacity, with no `--capacity` given. A NonZero
//! of what its Range reaches reads the padding as false. Only that form is bounded: a sum of
//! values that are not 0 or 1 is not, and keeps asking for a capacity. Values on ONNX Runtime:
//! tests/python/test_static_bounded_lengths.py.

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_rewrite_analysis::findings::Reason;

/// `m` [3, 6] of `elem` cast to int64, its row sums maxed, `arange` of that compared with the
/// sums, then `tail` reading `local` ([3, L] bool); `y` is the graph's output.
fn global_indices(elem: DataType, tail: Vec<NodeProto>) -> Vec<u8> {
    let mut nodes = vec![
        node("Cast", &["m"], &["m64"], vec![int("to", 7)]),
        node(
            "ReduceSum",
            &["m64", "axes"],
            &["num"],
            vec![int("keepdims", 0)],
        ),
        node("ReduceMax", &["num"], &["most"], vec![int("keepdims", 0)]),
        node("Range", &["zero", "most", "one"], &["slots"], vec![]),
        node("Unsqueeze", &["num", "axes"], &["num_col"], vec![]),
        node("Less", &["slots", "num_col"], &["local"], vec![]),
    ];
    nodes.extend(tail);
    let g = graph(
        nodes,
        vec![value("m", elem, Some(&["3", "6"]))],
        &["y"],
        vec![scalar("zero", 0), scalar("one", 1), int64s("axes", &[1])],
    );
    model(g, 17)
}

fn selected() -> Vec<NodeProto> {
    vec![
        node("NonZero", &["local"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["y"], vec![ints("perm", &[1, 0])]),
    ]
}

#[test]
fn the_most_selected_of_any_row_runs_to_the_row_length() {
    let (_, report) = optimize_with(
        &global_indices(DataType::Bool, selected()),
        &static_options(&[]),
    )
    .expect("static with no capacity given");
    assert_eq!(report.nonzero_left(), 0);
    assert!(report.left.is_empty(), "{:?}", report.left);
    let capped: Vec<&String> = report
        .static_mode
        .as_ref()
        .expect("a static report")
        .rewrites
        .iter()
        .filter(|(kind, _)| kind == "capped-length")
        .map(|(_, line)| line)
        .collect();
    assert_eq!(capped.len(), 1, "{capped:?}");
    assert!(
        capped[0].contains("runs to that mask's size along the row, 6,")
            && capped[0].contains("1 NonZero along it reads the padding masked to zero"),
        "{}",
        capped[0]
    );
}

#[test]
fn a_sum_of_other_values_is_not_bounded_and_asks_for_a_capacity() {
    // int64 values: a row's sum may pass its length.
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) =
        optimize_with(&global_indices(DataType::Int64, selected()), &options).expect("written");
    let range = report.left.iter().find(|l| l.op == "Range").expect("named");
    assert_eq!(range.reason, Reason::ValueDependentShape);
    assert!(
        range.detail.contains("give --capacity N"),
        "{}",
        range.detail
    );
}

#[test]
fn a_bounded_length_read_as_a_value_is_refused_by_name() {
    // The coordinates times the length: it stands for the count only as a size.
    let tail = vec![
        node("NonZero", &["local"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
        node("Mul", &["t", "most"], &["y"], vec![]),
    ];
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) =
        optimize_with(&global_indices(DataType::Bool, tail), &options).expect("written");
    let range = report.left.iter().find(|l| l.op == "Range").expect("named");
    assert_eq!(range.reason, Reason::ValueDependentShape);
    assert!(
        range
            .detail
            .contains("the most selected of any row (at most 6)")
            && range.detail.contains("Mul"),
        "{}",
        range.detail
    );
}

#[test]
fn a_softmax_along_the_slots_is_masked_and_a_sum_along_them_is_refused() {
    // Softmax along the slots: fully static, the report names the masked reader.
    let softmax = vec![
        node("Cast", &["local"], &["local_f"], vec![int("to", 1)]),
        node("Softmax", &["local_f"], &["y"], vec![int("axis", -1)]),
    ];
    let (_, report) = optimize_with(
        &global_indices(DataType::Bool, softmax),
        &static_options(&[]),
    )
    .expect("static");
    assert!(report.left.is_empty(), "{:?}", report.left);
    let lines = &report.static_mode.as_ref().unwrap().rewrites;
    assert!(
        lines.iter().any(|(kind, line)| kind == "capped-length"
            && line.contains("1 Softmax along it reads the padding masked to their identity")),
        "{lines:?}"
    );
    // A sum along them is not a masked reader (yet): the length stays dynamic, named.
    let sum = vec![
        node("Cast", &["local"], &["local_f"], vec![int("to", 1)]),
        node(
            "ReduceSum",
            &["local_f", "axes"],
            &["y"],
            vec![int("keepdims", 0)],
        ),
    ];
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) =
        optimize_with(&global_indices(DataType::Bool, sum), &options).expect("written");
    let range = report.left.iter().find(|l| l.op == "Range").expect("named");
    assert!(range.detail.contains("ReduceSum"), "{}", range.detail);
}

/// `softmax(cat((local, window), -1))`, then `reader` on the joined scores `p`: the slots'
/// padding is the joined axis's middle segment, masked before the softmax.
fn joined(reader: Vec<NodeProto>, frames_first: bool) -> Vec<u8> {
    let parts: &[&str] = if frames_first {
        &["local_f", "window"]
    } else {
        &["window", "local_f"]
    };
    let mut tail = vec![
        node("Cast", &["local"], &["local_f"], vec![int("to", 1)]),
        node("Concat", parts, &["joined"], vec![int("axis", -1)]),
        node("Softmax", &["joined"], &["p"], vec![int("axis", -1)]),
        node("Unsqueeze", &["most", "zero_1d"], &["most_1d"], vec![]),
    ];
    tail.extend(reader);
    let mut g = graph_of(global_indices(DataType::Bool, tail));
    g.input
        .push(value("window", DataType::Float, Some(&["3", "2"])));
    g.initializer
        .extend([int64s("zero_1d", &[0]), int64s("last", &[-1])]);
    model(g, 17)
}

fn graph_of(bytes: Vec<u8>) -> GraphProto {
    ModelProto::decode(bytes.as_slice())
        .expect("a model")
        .graph
        .expect("a graph")
}

#[test]
fn slots_joined_with_fixed_scores_are_masked_in_the_middle_and_cut_at_the_length() {
    // `p[:, :L]`: the slots alone, padded as before the join; fully static.
    let slots = vec![node(
        "Slice",
        &["p", "zero_1d", "most_1d", "last"],
        &["y"],
        vec![],
    )];
    let (_, report) = optimize_with(&joined(slots, true), &static_options(&[])).expect("static");
    assert!(report.left.is_empty(), "{:?}", report.left);
    let lines = &report.static_mode.as_ref().unwrap().rewrites;
    assert!(
        lines.iter().any(|(kind, line)| kind == "capped-length"
            && line.contains("1 Softmax along it reads the padding masked")
            && line.contains("'y' padded to 6 with 'y_count'")),
        "{lines:?}"
    );
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    // The frames after a fixed part, or a Slice past the frames into the tail: refused by name.
    let refusals = [
        (
            joined(vec![node("Identity", &["p"], &["y"], vec![])], false),
            "with the frames not first",
        ),
        (
            joined(
                vec![node(
                    "Slice",
                    &["p", "zero_1d", "last", "last"],
                    &["y"],
                    vec![],
                )],
                true,
            ),
            "a Slice of the joined axis other than its frames or its tail",
        ),
        (
            joined(
                vec![node(
                    "ReduceSum",
                    &["p", "last"],
                    &["y"],
                    vec![int("keepdims", 0)],
                )],
                true,
            ),
            "not an op a joined axis may pass",
        ),
    ];
    for (bytes, why) in refusals {
        let (_, report) = optimize_with(&bytes, &options).expect("written");
        let range = report.left.iter().find(|l| l.op == "Range").expect("named");
        assert!(range.detail.contains(why), "{why}: {}", range.detail);
    }
}

/// `v[i, j]` for `i, j` the local coordinates, over `v = slots * x` ([3, L]) flattened with the
/// batch (`Flatten(v[..., None], axis)`) and gathered at `low + high * v.shape[1]`.
fn read_at_linear_index(flatten_axis: i64, low: &str, high: &str) -> Vec<u8> {
    let tail = vec![
        node("NonZero", &["local"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["at"], vec![ints("perm", &[1, 0])]),
        node("Gather", &["at", "zero"], &["i"], vec![int("axis", 1)]),
        node("Gather", &["at", "one"], &["j"], vec![int("axis", 1)]),
        node("Cast", &["slots"], &["slots_f"], vec![int("to", 1)]),
        node("Unsqueeze", &["slots_f", "zero_1d"], &["row"], vec![]),
        node("Mul", &["row", "x"], &["v"], vec![]),
        node("Unsqueeze", &["v", "last"], &["v3"], vec![]),
        node(
            "Flatten",
            &["v3"],
            &["flat"],
            vec![int("axis", flatten_axis)],
        ),
        node("Shape", &["v"], &["v_shape"], vec![]),
        node(
            "Gather",
            &["v_shape", "axes"],
            &["stride"],
            vec![int("axis", 0)],
        ),
        node("Mul", &[high, "stride"], &["high_rows"], vec![]),
        node("Add", &[low, "high_rows"], &["linear"], vec![]),
        node("Gather", &["flat", "linear"], &["y"], vec![int("axis", 0)]),
    ];
    let mut g = graph_of(global_indices(DataType::Bool, tail));
    g.input.push(value("x", DataType::Float, Some(&["3", "1"])));
    g.initializer
        .extend([int64s("zero_1d", &[0]), int64s("last", &[-1])]);
    model(g, 17)
}

#[test]
fn frames_read_at_the_linear_index_of_their_coordinates_and_refusals() {
    let (_, report) =
        optimize_with(&read_at_linear_index(2, "j", "i"), &static_options(&[])).expect("static");
    assert!(report.left.is_empty(), "{:?}", report.left);
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    // The columns swapped (`i + j * L`), or the slots flattened with the axis after them.
    for (bytes, why) in [
        (read_at_linear_index(2, "i", "j"), "other than `j + i * L`"),
        (
            read_at_linear_index(1, "j", "i"),
            "merges the padded axis with the axes after it",
        ),
    ] {
        let (_, report) = optimize_with(&bytes, &options).expect("written");
        let range = report.left.iter().find(|l| l.op == "Range").expect("named");
        assert!(range.detail.contains(why), "{why}: {}", range.detail);
    }
}
