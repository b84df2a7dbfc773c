//! Writes at a full index grid (`x[:, j] = v` as TorchScript writes it: ScatterND at
//! `Concat(Range(Shape(x)[0]) reshaped, j expanded)`; rewrite-match's `writes::grid`) become
//! `Where(mask, v, x)` under --static, reading no Shape of x: so a selection's padded rows may
//! pass them (VITS's spline fixing its first and last knots), and a masked write of those rows
//! back into the data reads no padding (emit-static's padding/listed.rs). The values are
//! checked on ONNX Runtime by tests/static/test_partly_static.py (VITS with partial selections).

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::AttributeProto;

/// ConstantOfShape's `value`: one float.
fn fill(v: f32) -> AttributeProto {
    AttributeProto {
        name: Some("value".into()),
        r#type: Some(nonzero_proto::onnx::attribute_proto::AttributeType::Tensor as i32),
        t: Some(float_tensor("", &[1], &[v])),
        ..Default::default()
    }
}

/// TorchScript's `data[:, column] = fill` for a 2-D `data` (names prefixed by `p`): the row
/// positions `Range(0, Shape(data)[0], 1)` as `[n, 1]`, the column expanded to them, both given
/// a last axis and concatenated; the updates ConstantOfShape of the grid's shape.
fn column_write(p: &str, data: &str, column: &str, value: f32, out: &str) -> Vec<NodeProto> {
    let t = |s: &str| format!("{p}_{s}");
    let (shape, n, rows, grid, col, i0, i1, idx, gshape, upd) = (
        t("shape"),
        t("n"),
        t("rows"),
        t("grid"),
        t("col"),
        t("i0"),
        t("i1"),
        t("idx"),
        t("gshape"),
        t("upd"),
    );
    vec![
        node("Shape", &[data], &[&shape], vec![]),
        node("Gather", &[&shape, "zero_i"], &[&n], vec![int("axis", 0)]),
        node("Range", &["zero_i", &n, "one_i"], &[&rows], vec![]),
        node("Reshape", &[&rows, "column_shape"], &[&grid], vec![]),
        node("Shape", &[&grid], &[&gshape], vec![]),
        node("Expand", &[column, &gshape], &[&col], vec![]),
        node("Unsqueeze", &[&grid, "last"], &[&i0], vec![]),
        node("Unsqueeze", &[&col, "last"], &[&i1], vec![]),
        node("Concat", &[&i0, &i1], &[&idx], vec![int("axis", -1)]),
        node("ConstantOfShape", &[&gshape], &[&upd], vec![fill(value)]),
        node("ScatterND", &[data, &idx, &upd], &[out], vec![]),
    ]
}

fn inits() -> Vec<TensorProto> {
    vec![
        scalar("zero_i", 0),
        scalar("one_i", 1),
        int64s("column_shape", &[-1, 1]),
        int64s("last", &[-1]),
        int64s("first", &[0]),
        int64s("minus_one", &[-1]),
    ]
}

/// The Where that writes `output`, and its mask's sizes and values.
fn written_by_where(m: &ModelProto, output: &str) -> (Vec<i64>, Vec<u8>) {
    let g = m.graph.as_ref().unwrap();
    let node = g
        .node
        .iter()
        .find(|n| n.output.first().map(String::as_str) == Some(output))
        .expect("a node writes the output");
    assert_eq!(
        node.op_type.as_deref(),
        Some("Where"),
        "{:?}",
        main_listing(m)
    );
    let mask = g
        .initializer
        .iter()
        .find(|t| t.name.as_deref() == Some(node.input[0].as_str()))
        .expect("the mask is an initializer");
    let raw = mask.raw_data.as_deref().unwrap_or_default().to_vec();
    (mask.dims.clone(), raw)
}

#[test]
fn a_column_written_at_a_full_grid_becomes_where() {
    // x[:, 1] = 7 and then x[:, -1] = 3 on a fixed [4, 3] x.
    let mut nodes = column_write("a", "x", "first_plus_one", 7.0, "y");
    nodes.extend(column_write("b", "y", "minus_one", 3.0, "z"));
    let mut initializers = inits();
    initializers.push(int64s("first_plus_one", &[1]));
    let g = graph(
        nodes,
        vec![value("x", DataType::Float, Some(&["4", "3"]))],
        &["z"],
        initializers,
    );
    let (bytes, report) = optimize_with(&model(g, 17), &static_options(&[])).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let listing = main_listing(&m);
    assert!(
        !listing.iter().any(|n| ["ScatterND(", "Range(", "Shape("]
            .iter()
            .any(|op| n.starts_with(op))),
        "{listing:?}"
    );
    assert_eq!(written_by_where(&m, "y"), (vec![1, 3], vec![0, 1, 0]));
    // -1 is the last column.
    assert_eq!(written_by_where(&m, "z"), (vec![1, 3], vec![0, 0, 1]));
    let lines: Vec<&str> = report
        .static_mode
        .as_ref()
        .unwrap()
        .rewrites
        .iter()
        .filter(|(kind, _)| kind == "grid-write")
        .map(|(_, line)| line.as_str())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].contains("writes x[:, 1]"), "{lines:?}");
    assert!(lines[1].contains("writes y[:, 2]"), "{lines:?}");
}

#[test]
fn a_column_past_the_axis_is_left_to_scatter_nd() {
    // x[:, 3] on 3 columns: ScatterND refuses it at run time; no Where may write it.
    let mut initializers = inits();
    initializers.push(int64s("three", &[3]));
    let g = graph(
        column_write("a", "x", "three", 7.0, "y"),
        vec![value("x", DataType::Float, Some(&["4", "3"]))],
        &["y"],
        initializers,
    );
    let (bytes, _) = optimize_with(&model(g, 17), &static_options(&[])).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    assert!(
        main_listing(&m).iter().any(|n| n.starts_with("ScatterND(")),
        "{:?}",
        main_listing(&m)
    );
}

/// `rows = x[m]` as TorchScript writes it: NonZero, Transpose, GatherND.
fn selected_rows() -> Vec<NodeProto> {
    vec![
        node("NonZero", &["m"], &["nz"], vec![]),
        node(
            "Transpose",
            &["nz"],
            &["coords"],
            vec![ints("perm", &[1, 0])],
        ),
        node("GatherND", &["x", "coords"], &["rows"], vec![]),
    ]
}

/// `rows = x[m]; rows[:, 0] = -5; out = zeros_like(x); out[m] = rows` as TorchScript writes it,
/// x `[6, 3]`, m `[6]` (a row mask, spread over each row for the write); `rows` too is an
/// output when `rows_out`.
fn rows_written_back(rows_out: bool) -> Vec<u8> {
    let mut nodes = selected_rows();
    nodes.extend(column_write("k", "rows", "first", -5.0, "knotted"));
    nodes.extend([
        node("Shape", &["x"], &["xs"], vec![]),
        node("ConstantOfShape", &["xs"], &["zeros"], vec![fill(0.0)]),
        node("Unsqueeze", &["m", "last"], &["mu"], vec![]),
        node("Expand", &["mu", "xs"], &["wm"], vec![]),
        node("NonZero", &["wm"], &["wnz"], vec![]),
        node("Transpose", &["wnz"], &["wt"], vec![ints("perm", &[1, 0])]),
        node("Reshape", &["knotted", "minus_one"], &["u"], vec![]),
        node("ScatterND", &["zeros", "wt", "u"], &["out"], vec![]),
    ]);
    let outputs: &[&str] = if rows_out {
        &["out", "knotted"]
    } else {
        &["out"]
    };
    let g = graph(
        nodes,
        vec![
            value("x", DataType::Float, Some(&["6", "3"])),
            value("m", DataType::Bool, Some(&["6"])),
        ],
        outputs,
        inits(),
    );
    model(g, 17)
}

#[test]
fn padded_rows_pass_a_column_write_and_are_written_back() {
    let (bytes, report) =
        optimize_with(&rows_written_back(false), &static_options(&[])).expect("fully static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let mut ops = vec![];
    ops_and_outputs(m.graph.as_ref().unwrap(), &mut ops, &mut Default::default());
    // (Its compaction has a Range of constant bounds; fully static, or optimize_with fails.)
    for dynamic in ["NonZero", "ScatterND"] {
        assert!(!ops.iter().any(|o| o == dynamic), "{dynamic} in {ops:?}");
    }
    let kinds = rewrite_kinds(&report);
    assert!(
        kinds.contains(&"grid-write") && kinds.contains(&"masked-write"),
        "{kinds:?}"
    );
    // The written rows as an output too: padded, with their count, and the fill again past it
    // (the column write put -5 in the padding).
    let (bytes, _) =
        optimize_with(&rows_written_back(true), &static_options(&[])).expect("fully static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let outputs = output_names(&m);
    assert_eq!(outputs, ["out", "knotted", "knotted_count"]);
}

#[test]
fn a_gather_of_a_written_list_at_another_index_stays() {
    // The update list read at indices that are not a running count (a negative one reads from
    // the end, the padding): refused, named.
    let mut nodes = selected_rows();
    nodes.extend([
        node("Reshape", &["rows", "minus_one"], &["flat"], vec![]),
        node(
            "Slice",
            &["x", "first", "first_plus_one"],
            &["head"],
            vec![],
        ),
        node("Reshape", &["head", "minus_one"], &["head_flat"], vec![]),
        node(
            "Concat",
            &["head_flat", "flat"],
            &["listed"],
            vec![int("axis", 0)],
        ),
        node(
            "Gather",
            &["listed", "minus_one"],
            &["y"],
            vec![int("axis", 0)],
        ),
    ]);
    let g = graph(
        nodes,
        vec![
            value("x", DataType::Float, Some(&["6"])),
            value("m", DataType::Bool, Some(&["6"])),
        ],
        &["y"],
        {
            let mut i = inits();
            i.push(int64s("first_plus_one", &[1]));
            i
        },
    );
    let why = static_error(&model(g, 17), &static_options(&[]));
    assert!(why.contains("padding-unsafe"), "{why}");
    assert!(
        why.contains("Gather Gather_y reads padded rows at minus_one"),
        "{why}"
    );
}

#[test]
fn made_static_twice_the_model_is_the_same() {
    // The masked write's row spread reads the data's Shape: folded in the first run, not left
    // for the second (which the fuzz target optimize_static found on this model).
    let options = static_options(&[("x", &[6, 3]), ("m", &[6])]);
    let (once, _) = optimize_with(&rows_written_back(true), &options).expect("static");
    let (twice, _) = optimize_with(&once, &static_options(&[])).expect("static again");
    assert!(once == twice, "{} bytes, then {}", once.len(), twice.len());
}

#[test]
fn positions_cast_through_bool_are_not_a_grid() {
    // Range(0, n) through Cast(bool) and back is [0, 1, 1, ..]: not every row's position, so the
    // write is not a grid write, and the padded rows' Shape it reads stays refused.
    let mut nodes = selected_rows();
    let mut write = column_write("k", "rows", "first", -5.0, "y");
    let reshape = write
        .iter_mut()
        .find(|n| n.op_type.as_deref() == Some("Reshape"))
        .unwrap();
    reshape.input[0] = "k_rows_again".into();
    let range = write
        .iter()
        .position(|n| n.op_type.as_deref() == Some("Range"))
        .unwrap();
    let casts = [
        node(
            "Cast",
            &["k_rows"],
            &["k_rows_bool"],
            vec![int("to", DataType::Bool as i64)],
        ),
        node(
            "Cast",
            &["k_rows_bool"],
            &["k_rows_again"],
            vec![int("to", DataType::Int64 as i64)],
        ),
    ];
    write.splice(range + 1..range + 1, casts);
    nodes.extend(write);
    let g = graph(
        nodes,
        vec![
            value("x", DataType::Float, Some(&["6", "3"])),
            value("m", DataType::Bool, Some(&["6"])),
        ],
        &["y"],
        inits(),
    );
    let why = static_error(&model(g, 17), &static_options(&[]));
    assert!(why.contains("padding-unsafe"), "{why}");
    // The write stays a ScatterND, at indices built from the padded rows.
    assert!(
        why.contains("ScatterND ScatterND_y reads the padded k_idx"),
        "{why}"
    );
}
