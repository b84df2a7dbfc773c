//! Padded rows through row-wise work (issue 37, item 2; emit-static's padding/rows.rs and
//! scatter.rs): an expert's MLP on the selected tokens, weighted, then `index_add` back. The
//! values are checked on ONNX Runtime, OpenVINO and IREE by tests/static (the moe_router
//! exports); here, what the model becomes.

use super::*;
use crate::optimize_with;

/// `out = zeros.index_add(0, tokens, Gemm(hidden[tokens]) * weight[tokens, None])` over the
/// tokens whose score is positive, as TorchScript writes it (`y` is the MLP's rows, also an
/// output when `mlp_out`).
fn expert(mlp_out: bool) -> Vec<u8> {
    expert_of_width(mlp_out, 2)
}

/// [`expert`] with rows of `width` (1 or 2) elements.
fn expert_of_width(mlp_out: bool, width: usize) -> Vec<u8> {
    let (w, b) = ([1.0, 2.0, 3.0, 4.0], [0.5, -0.5]);
    let w = if width == 1 { &w[..1] } else { &w[..] };
    let b = &b[..width];
    let width_dim = width.to_string();
    let nodes = vec![
        node("Greater", &["score", "zero"], &["mask"], vec![]),
        node("NonZero", &["mask"], &["nz"], vec![]),
        node(
            "Transpose",
            &["nz"],
            &["coords"],
            vec![ints("perm", &[1, 0])],
        ),
        node("Reshape", &["coords", "minus_one"], &["tokens"], vec![]),
        node(
            "Gather",
            &["hidden", "tokens"],
            &["rows"],
            vec![int("axis", 0)],
        ),
        node("Gemm", &["rows", "w", "b"], &["y"], vec![int("transB", 1)]),
        node("GatherND", &["weight", "coords"], &["wsel"], vec![]),
        node("Unsqueeze", &["wsel", "one"], &["wcol"], vec![]),
        node("Mul", &["y", "wcol"], &["upd"], vec![]),
        node("Unsqueeze", &["tokens", "one"], &["tcol"], vec![]),
        node("Shape", &["upd"], &["upd_shape"], vec![]),
        node("Expand", &["tcol", "upd_shape"], &["idx"], vec![]),
        node(
            "ScatterElements",
            &["base", "idx", "upd"],
            &["out"],
            vec![int("axis", 0)],
        ),
    ];
    let outputs: &[&str] = if mlp_out { &["out", "y"] } else { &["out"] };
    let g = graph(
        nodes,
        vec![
            value("score", DataType::Float, Some(&["t"])),
            value("weight", DataType::Float, Some(&["t"])),
            value("hidden", DataType::Float, Some(&["t", &width_dim])),
            value("base", DataType::Float, Some(&["t", &width_dim])),
        ],
        outputs,
        vec![
            float_tensor("zero", &[], &[0.0]),
            float_tensor("w", &[width as i64, width as i64], w),
            float_tensor("b", &[width as i64], b),
            int64s("minus_one", &[-1]),
            int64s("one", &[1]),
        ],
    );
    model(g, 17)
}

/// The expert's inputs fixed at 5 tokens.
fn expert_options() -> crate::Options {
    static_options(&[
        ("score", &[5]),
        ("weight", &[5]),
        ("hidden", &[5, 2]),
        ("base", &[5, 2]),
    ])
}

fn op_count(g: &GraphProto, op: &str) -> usize {
    g.node
        .iter()
        .filter(|n| n.op_type.as_deref() == Some(op))
        .count()
}

#[test]
fn an_experts_rows_are_written_back_through_a_dropped_slot() {
    let options = expert_options();
    let (bytes, report) = optimize_with(&expert(false), &options).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let g = m.graph.as_ref().unwrap();
    assert_eq!(op_count(g, "NonZero"), 0, "{:?}", main_listing(&m));
    // The write reads the data with one slot appended, and the slot is sliced off after it
    // (the compaction has its own ScatterElements: the write is the one the Slice reads).
    let last = g.node.iter().find(|n| n.output[0] == "out").unwrap();
    assert_eq!(last.op_type.as_deref(), Some("Slice"));
    let scatter = g
        .node
        .iter()
        .find(|n| n.output[0] == last.input[0])
        .unwrap();
    assert_eq!(scatter.op_type.as_deref(), Some("ScatterElements"));
    let widened = g
        .node
        .iter()
        .find(|n| n.output[0] == scatter.input[0])
        .unwrap();
    assert_eq!(widened.op_type.as_deref(), Some("Concat"));
    assert_eq!(widened.input[0], "base");
    let redirect = g
        .node
        .iter()
        .find(|n| n.output[0] == scatter.input[1])
        .unwrap();
    assert_eq!(redirect.op_type.as_deref(), Some("Where"));
    let s = report.static_mode.as_ref().unwrap();
    assert!(s.count_outputs.is_empty(), "{:?}", s.count_outputs);
}

/// Rows of one element: the index's Expand is to its own sizes (`[n, 1]`), and the indices
/// stay an index_add's spread coordinates, which the write takes.
#[test]
fn an_experts_rows_of_one_element_are_written_back_too() {
    let options = static_options(&[
        ("score", &[5]),
        ("weight", &[5]),
        ("hidden", &[5, 1]),
        ("base", &[5, 1]),
    ]);
    let (_, report) = optimize_with(&expert_of_width(false, 1), &options).expect("static");
    assert_eq!(report.nonzero_left(), 0, "{:?}", report.left_lines());
}

#[test]
fn an_output_after_an_mlp_is_padded_again_with_the_fill() {
    let options = expert_options();
    let (bytes, report) = optimize_with(&expert(true), &options).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let g = m.graph.as_ref().unwrap();
    let s = report.static_mode.as_ref().unwrap();
    assert_eq!(
        s.count_outputs,
        vec![("y".to_string(), "y_count".to_string(), 0)]
    );
    // y's padding held Gemm's bias: a Where writes +0 there.
    let y = g.node.iter().find(|n| n.output[0] == "y").unwrap();
    assert_eq!(
        y.op_type.as_deref(),
        Some("Where"),
        "{:?}",
        main_listing(&m)
    );
    let gemm = g
        .node
        .iter()
        .find(|n| n.op_type.as_deref() == Some("Gemm"))
        .unwrap();
    assert_eq!(y.input[2], gemm.output[0]);
}

#[test]
fn padded_updates_at_other_indices_stay_dynamic() {
    let mut m = ModelProto::decode(expert(false).as_slice()).unwrap();
    let g = m.graph.as_mut().unwrap();
    // The write's indices no longer come from the selection: its padded rows would land at
    // real rows.
    let scatter = g
        .node
        .iter_mut()
        .find(|n| n.op_type.as_deref() == Some("ScatterElements"))
        .unwrap();
    scatter.input[1] = "fixed_idx".into();
    g.input
        .push(value("fixed_idx", DataType::Int64, Some(&["c", "2"])));
    let mut options = expert_options();
    options.input_shapes.insert("fixed_idx".into(), vec![5, 2]);
    options.allow_dynamic = true;
    let (_, report) =
        optimize_with(&m.encode_to_vec(), &options).expect("written with --allow-dynamic");
    let why = &report.left[0];
    assert!(
        format!("{why:?}")
            .contains("writes padded rows at indices that are not this selection's coordinates"),
        "{why:?}"
    );
}

/// Mixtral's expert as TorchScript writes it: `idx, top_x = where(mask[e])` over a
/// `[slots, tokens]` mask, the weights read at the linear index `top_x * slots + idx` of the
/// flattened `[tokens, slots]` weights, the MLP's `chunk(2, -1)` as Slices, index_add.
#[test]
fn a_linear_index_of_swapped_columns_and_a_chunked_mlp() {
    let nodes = vec![
        node("Equal", &["selected", "expert"], &["mask"], vec![]),
        node("NonZero", &["mask"], &["nz"], vec![]),
        node(
            "Transpose",
            &["nz"],
            &["coords"],
            vec![ints("perm", &[1, 0])],
        ),
        node(
            "Gather",
            &["coords", "zero_i"],
            &["slot"],
            vec![int("axis", 1)],
        ),
        node(
            "Gather",
            &["coords", "one_i"],
            &["token"],
            vec![int("axis", 1)],
        ),
        node("Mul", &["token", "slots"], &["row_start"], vec![]),
        node("Add", &["slot", "row_start"], &["linear"], vec![]),
        node("Reshape", &["weights", "minus_one"], &["flat"], vec![]),
        node("Gather", &["flat", "linear"], &["w"], vec![int("axis", 0)]),
        node("Unsqueeze", &["w", "one"], &["wcol"], vec![]),
        node(
            "Gather",
            &["hidden", "token"],
            &["rows"],
            vec![int("axis", 0)],
        ),
        node("MatMul", &["rows", "up"], &["h"], vec![]),
        node(
            "Slice",
            &["h", "zero", "two", "minus_one"],
            &["gate"],
            vec![],
        ),
        node("Mul", &["gate", "wcol"], &["upd"], vec![]),
        node("Unsqueeze", &["token", "one"], &["tcol"], vec![]),
        node("Shape", &["upd"], &["upd_shape"], vec![]),
        node("Expand", &["tcol", "upd_shape"], &["idx"], vec![]),
        node(
            "ScatterElements",
            &["base", "idx", "upd"],
            &["out"],
            vec![int("axis", 0)],
        ),
    ];
    let scalar = |name: &str, v: i64| TensorProto {
        dims: vec![],
        ..int64s(name, &[v])
    };
    let g = graph(
        nodes,
        vec![
            value("selected", DataType::Int64, Some(&["2", "t"])),
            value("weights", DataType::Float, Some(&["t", "2"])),
            value("hidden", DataType::Float, Some(&["t", "2"])),
            value("base", DataType::Float, Some(&["t", "2"])),
        ],
        &["out"],
        vec![
            scalar("expert", 1),
            scalar("zero_i", 0),
            scalar("one_i", 1),
            scalar("slots", 2),
            int64s("minus_one", &[-1]),
            int64s("one", &[1]),
            int64s("zero", &[0]),
            int64s("two", &[2]),
            float_tensor("up", &[2, 4], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
        ],
    );
    let options = static_options(&[
        ("selected", &[2, 5]),
        ("weights", &[5, 2]),
        ("hidden", &[5, 2]),
        ("base", &[5, 2]),
    ]);
    let (bytes, report) = optimize_with(&model(g, 17), &options).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    assert_eq!(op_count(m.graph.as_ref().unwrap(), "NonZero"), 0);
    assert!(report.left.is_empty(), "{:?}", report.left);
}

/// `rows = data[mask]` as TorchScript writes it (`GatherND(data, Transpose(NonZero(mask)))`)
/// after the node writing `mask`, then `after`.
fn selected_rows(mask: NodeProto, data: &str, after: Vec<NodeProto>) -> Vec<NodeProto> {
    let mut nodes = vec![
        mask,
        node("NonZero", &["mask"], &["nz"], vec![]),
        node(
            "Transpose",
            &["nz"],
            &["coords"],
            vec![ints("perm", &[1, 0])],
        ),
        node("GatherND", &[data, "coords"], &["rows"], vec![]),
    ];
    nodes.extend(after);
    nodes
}

/// Softmax and CumSum along the other axis keep each row its own; along the padded axis they
/// would mix the padding in, and the NonZero stays dynamic.
#[test]
fn softmax_and_cumsum_along_another_axis_only() {
    let along = |axis: i64| {
        let g = graph(
            selected_rows(
                node("Greater", &["score", "zero"], &["mask"], vec![]),
                "x",
                vec![
                    node("Softmax", &["rows"], &["p"], vec![int("axis", axis)]),
                    node("CumSum", &["p", "cum_axis"], &["y"], vec![]),
                ],
            ),
            vec![
                value("score", DataType::Float, Some(&["t"])),
                value("x", DataType::Float, Some(&["t", "3"])),
            ],
            &["y"],
            vec![
                float_tensor("zero", &[], &[0.0]),
                TensorProto {
                    dims: vec![],
                    ..int64s("cum_axis", &[axis])
                },
            ],
        );
        let mut options = static_options(&[("score", &[4]), ("x", &[4, 3])]);
        options.allow_dynamic = true;
        optimize_with(&model(g, 17), &options).expect("written").1
    };
    let report = along(1);
    assert!(report.left.is_empty(), "{:?}", report.left);
    let s = report.static_mode.as_ref().unwrap();
    assert_eq!(
        s.count_outputs,
        vec![("y".to_string(), "y_count".to_string(), 0)]
    );
    let report = along(0);
    assert!(
        format!("{:?}", report.left).contains("Softmax"),
        "{:?}",
        report.left
    );
}

/// BART's `hidden[eos_mask].view(batch, -1, h)[:, -1]`: the selected rows in equal groups, the
/// last of each, becomes a Gather of the padded rows at `(g + 1) * (count / G) - 1`.
#[test]
fn the_last_row_of_equal_groups_is_picked_by_position() {
    let g = graph(
        selected_rows(
            node("Equal", &["ids", "eos"], &["mask"], vec![]),
            "hidden",
            vec![
                node("Reshape", &["rows", "groups"], &["grouped"], vec![]),
                node("Gather", &["grouped", "last"], &["y"], vec![int("axis", 1)]),
            ],
        ),
        vec![
            value("ids", DataType::Int64, Some(&["b", "s"])),
            value("hidden", DataType::Float, Some(&["b", "s", "4"])),
        ],
        &["y"],
        vec![
            TensorProto {
                dims: vec![],
                ..int64s("eos", &[2])
            },
            int64s("groups", &[2, -1, 4]),
            TensorProto {
                dims: vec![],
                ..int64s("last", &[-1])
            },
        ],
    );
    let options = static_options(&[("ids", &[2, 5]), ("hidden", &[2, 5, 4])]);
    let (bytes, report) = optimize_with(&model(g, 17), &options).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).unwrap();
    let g = m.graph.as_ref().unwrap();
    assert_eq!(op_count(g, "NonZero"), 0);
    assert!(report
        .static_mode
        .as_ref()
        .unwrap()
        .count_outputs
        .is_empty());
    let y = g.node.iter().find(|n| n.output[0] == "y").unwrap();
    assert_eq!(
        y.op_type.as_deref(),
        Some("Gather"),
        "{:?}",
        main_listing(&m)
    );
    assert!(
        !g.node.iter().any(|n| n.output[0] == "grouped"),
        "the Reshape is gone"
    );
}
