//! Issue 25, item g: masked writes (`ScatterND` at a mask's coordinates) become MaskedFill or
//! MaskedScatter (patterns/masked_write.rs), in the exporters' forms; what they cannot take stays
//! `ArgWhere -> ScatterND` with the ScatterND under `coordinates_used`.

use super::*;
use crate::Kind;

const CHAIN: [&str; 2] = ["nonzero.", "ScatterND"];

/// `NonZero(mask) -> Transpose -> t`, then `tail`; inputs x [N, 3] float, m [N] bool, v [3].
fn write_graph(
    mask: &str,
    tail: Vec<NodeProto>,
    inputs: Vec<ValueInfoProto>,
    inits: Vec<TensorProto>,
) -> Vec<u8> {
    let mut nodes = vec![
        node("NonZero", &[mask], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
    ];
    nodes.extend(tail);
    model(graph(nodes, inputs, &["y"], inits), 17)
}

fn rows_inputs() -> Vec<ValueInfoProto> {
    vec![
        value("x", DataType::Float, Some(&["N", "3"])),
        value("m", DataType::Bool, Some(&["N"])),
        value("v", DataType::Float, Some(&["3"])),
    ]
}

fn no_chain_left(m: &ModelProto) -> bool {
    !main_listing(m).iter().any(|n| {
        n.starts_with("NonZero(")
            || n.starts_with("ScatterND(")
            || n.starts_with(CHAIN[0]) && n.contains("ArgWhere")
    })
}

#[test]
fn a_row_written_over_whole_selected_rows_becomes_masked_fill() {
    // dynamo's y[m] = v: the row mask expanded to x's shape; the updates v expanded to
    // [ReduceSum(m), 3] and flattened.
    let bytes = write_graph(
        "big",
        vec![
            node("Unsqueeze", &["m", "minus_one"], &["mu"], vec![]),
            node("Shape", &["x"], &["xs"], vec![]),
            node("Expand", &["mu", "xs"], &["big"], vec![]),
            node(
                "Cast",
                &["m"],
                &["mi"],
                vec![int("to", DataType::Int64 as i64)],
            ),
            node("ReduceSum", &["mi"], &["count"], vec![int("keepdims", 1)]),
            node(
                "Concat",
                &["count", "three"],
                &["shape"],
                vec![int("axis", 0)],
            ),
            node("Expand", &["v", "shape"], &["ve"], vec![]),
            node("Reshape", &["ve", "minus_one"], &["u"], vec![]),
            node("ScatterND", &["x", "t", "u"], &["y"], vec![]),
        ],
        rows_inputs(),
        vec![int64s("minus_one", &[-1]), int64s("three", &[3])],
    );
    let (m, report) = run(&bytes);
    // The mask is spread again from m, by the form ONNX Runtime runs faster for rows of 3
    // (nonzero-rewrite-graph's `forms`); the export's own Expand goes with the coordinates.
    assert_eq!(
        main_listing(&m),
        [
            "Constant()->y.nonzero_spread/constant_0",
            "Reshape(m,y.nonzero_spread/constant_0)->y.nonzero_spread/reshape_1",
            "Constant()->y.nonzero_spread/constant_2",
            "Expand(y.nonzero_spread/reshape_1,y.nonzero_spread/constant_2)->y.nonzero_spread/expand_3",
            "Transpose(y.nonzero_spread/expand_3)->y.nonzero_spread/transpose_4",
            "Shape(x)->y.nonzero_spread/shape_5",
            "Reshape(y.nonzero_spread/transpose_4,y.nonzero_spread/shape_5)->y.nonzero_spread/reshape_6",
            "nonzero.MaskedFill(x,y.nonzero_spread/reshape_6,v)->y",
        ]
    );
    assert!(no_chain_left(&m), "{:?}", main_listing(&m));
    assert_eq!(report.count(Kind::MaskedFill), 1);
    assert!(report.coordinates_used.is_empty() && report.left.is_empty());
    assert!(
        report
            .summary()
            .starts_with("1 NonZero: 1 rewritten, 0 left\n"),
        "{}",
        report.summary()
    );
}

#[test]
fn masked_scatter_reads_its_source_itself() {
    // x.masked_scatter(m, s): ScatterND(x, ., Slice(Reshape(s, [-1]), 0, nnz)).
    let bytes = write_graph(
        "m",
        vec![
            node("Shape", &["t"], &["ts"], vec![]),
            node("Slice", &["ts", "zero", "one"], &["nnz"], vec![]),
            node("Reshape", &["s", "minus_one"], &["flat"], vec![]),
            node("Slice", &["flat", "zero", "nnz"], &["u"], vec![]),
            node("ScatterND", &["x", "t", "u"], &["y"], vec![]),
        ],
        vec![
            value("x", DataType::Int64, Some(&["A", "B"])),
            value("m", DataType::Bool, Some(&["A", "B"])),
            value("s", DataType::Int64, Some(&["C", "D"])),
        ],
        vec![
            int64s("zero", &[0]),
            int64s("one", &[1]),
            int64s("minus_one", &[-1]),
        ],
    );
    let (m, report) = run(&bytes);
    assert_eq!(main_listing(&m), ["nonzero.MaskedScatter(x,m,s)->y"]);
    assert_eq!(report.count(Kind::MaskedScatter), 1);
}

#[test]
fn the_op_of_the_selected_rows_becomes_boolean_mask_then_masked_scatter() {
    // x[m] = x[m] * 2 over a mask of x's shape.
    let bytes = write_graph(
        "m",
        vec![
            node("GatherND", &["x", "t"], &["rows"], vec![]),
            node("Mul", &["rows", "two"], &["u"], vec![]),
            node("ScatterND", &["x", "t", "u"], &["y"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["3", "4"])),
            value("m", DataType::Bool, Some(&["3", "4"])),
        ],
        vec![TensorProto {
            data_type: Some(DataType::Float as i32),
            name: Some("two".into()),
            float_data: vec![2.0],
            ..Default::default()
        }],
    );
    let (m, report) = run(&bytes);
    assert_eq!(
        main_listing(&m),
        [
            "nonzero.BooleanMask(x,m)->rows",
            "Mul(rows,two)->u",
            "nonzero.MaskedScatter(x,m,u)->y"
        ]
    );
    assert_eq!(report.count(Kind::MaskedScatter), 1);
    assert_eq!(report.count(Kind::BooleanMaskGatherNd), 1);
}

#[test]
fn any_other_update_list_is_written_in_order() {
    // Wherever the original runs, ScatterND's shape rule gives u exactly nnz values.
    let bytes = write_graph(
        "m",
        vec![node("ScatterND", &["x", "t", "u"], &["y"], vec![])],
        vec![
            value("x", DataType::Float, Some(&["3", "4"])),
            value("m", DataType::Bool, Some(&["3", "4"])),
            value("u", DataType::Float, Some(&["K"])),
        ],
        vec![],
    );
    let (m, _) = run(&bytes);
    assert_eq!(main_listing(&m), ["nonzero.MaskedScatter(x,m,u)->y"]);
}

#[test]
fn a_reduction_or_an_unproven_mask_shape_keeps_the_coordinates() {
    let scatter_add = node(
        "ScatterND",
        &["x", "t", "u"],
        &["y"],
        vec![AttributeProto {
            name: Some("reduction".into()),
            r#type: Some(AttributeType::String as i32),
            s: Some(b"add".to_vec()),
            ..Default::default()
        }],
    );
    let same = vec![
        value("x", DataType::Float, Some(&["3", "4"])),
        value("m", DataType::Bool, Some(&["3", "4"])),
        value("u", DataType::Float, Some(&["K"])),
    ];
    // Named apart (tf2onnx's unk__ dims): x's shape is not proven to be the mask's.
    let apart = vec![
        value("x", DataType::Float, Some(&["A", "B"])),
        value("m", DataType::Bool, Some(&["C", "D"])),
        value("u", DataType::Float, Some(&["K"])),
    ];
    let plain = node("ScatterND", &["x", "t", "u"], &["y"], vec![]);
    for (tail, inputs) in [(scatter_add, same), (plain, apart)] {
        let (m, report) = run(&write_graph("m", vec![tail], inputs, vec![]));
        assert_eq!(
            main_listing(&m),
            ["nonzero.ArgWhere(m)->t", "ScatterND(x,t,u)->y"]
        );
        assert_eq!(
            report.coordinates_used.len(),
            1,
            "{:?}",
            report.coordinates_used
        );
        assert_eq!(
            report.count(Kind::MaskedScatter) + report.count(Kind::MaskedFill),
            0
        );
    }
}

/// TorchScript's `out = zeros_like(x); out[m] = x[m]` (VITS's spline, the inputs outside its
/// interval): the write mask is m expanded to out's own shape, the updates x's selected
/// elements, flattened and cut to the write's count.
fn copied_selection() -> Vec<u8> {
    let g = graph(
        vec![
            node("Shape", &["x"], &["xs"], vec![]),
            node("ConstantOfShape", &["xs"], &["out"], vec![]),
            node("Shape", &["out"], &["os"], vec![]),
            node("Expand", &["m", "os"], &["big"], vec![]),
            node("NonZero", &["big"], &["wnz"], vec![]),
            node("Transpose", &["wnz"], &["wt"], vec![ints("perm", &[1, 0])]),
            node("NonZero", &["m"], &["nz"], vec![]),
            node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
            node("GatherND", &["x", "t"], &["rows"], vec![]),
            node("Reshape", &["rows", "minus_one"], &["flat"], vec![]),
            node("Shape", &["wt"], &["ws"], vec![]),
            node("Slice", &["ws", "zero", "one"], &["nnz"], vec![]),
            node("Slice", &["flat", "zero", "nnz"], &["u"], vec![]),
            node("ScatterND", &["out", "wt", "u"], &["y"], vec![]),
        ],
        vec![
            value("x", DataType::Float, Some(&["2", "1", "5"])),
            value("m", DataType::Bool, Some(&["2", "1", "5"])),
        ],
        &["y"],
        vec![
            int64s("zero", &[0]),
            int64s("one", &[1]),
            int64s("minus_one", &[-1]),
        ],
    );
    model(g, 17)
}

#[test]
fn a_copied_selection_is_written_from_its_source() {
    // Static: Where(m, x, out), with no NonZero left (both selections went with the write).
    let (bytes, report) =
        crate::optimize_with(&copied_selection(), &static_options(&[])).expect("static");
    let m = ModelProto::decode(bytes.as_slice()).expect("output parses");
    let listing = main_listing(&m);
    assert!(
        !listing
            .iter()
            .any(|n| n.starts_with("NonZero(") || n.starts_with("ScatterND(")),
        "{listing:?}"
    );
    assert!(
        listing.iter().any(|n| n.starts_with("Where(big,x,out)")),
        "{listing:?}"
    );
    let rewrites = &report.static_mode.as_ref().unwrap().rewrites;
    let writes: Vec<&str> = rewrites
        .iter()
        .filter(|(kind, _)| kind == "masked-write")
        .map(|(_, line)| line.as_str())
        .collect();
    assert_eq!(
        writes,
        ["masked write: ScatterND ScatterND_y at the coordinates of big became Where(big, x where selected, out)"]
    );
    // Library: MaskedFill(out, big, x), where the updates are still a list of x's selected
    // elements when the write is matched first.
    let (m, _) = run(&copied_selection());
    assert!(
        main_listing(&m).contains(&"nonzero.MaskedFill(out,big,x)->y".to_string()),
        "{:?}",
        main_listing(&m)
    );
}
