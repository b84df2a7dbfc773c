//! Selections of one count (rewrite-analysis `infer/same_count.rs`, emit-static `partners.rs`):
//! HF Longformer's global tokens `NonZero(m)` and local slots `NonZero(arange(max(s)) <
//! s[:, None])`, `s = m.sum(1)`, each one's rows written at the other's coordinates. The
//! inference gives both NonZeros one count; --static compacts them together, or neither.
//! Values on ONNX Runtime: tests/python/test_static_partners.py.

use super::*;
use crate::optimize_with;
use nonzero_rewrite_analysis::infer::{BodyInputs, ShapeTable};

/// The slots mask over `m` [2, 6]: `positions < s[:, None]`, positions `arange(limit)`, with
/// `limit` "max" (the most of any row, `ReduceMax(s)`) or a constant.
fn slots_nodes(limit: &str) -> Vec<NodeProto> {
    let mut nodes = vec![
        node("Cast", &["m"], &["m_int"], vec![int("to", 7)]),
        node(
            "ReduceSum",
            &["m_int", "one"],
            &["s"],
            vec![int("keepdims", 0)],
        ),
        node("ReduceMax", &["s"], &["max"], vec![int("keepdims", 0)]),
        node(
            "Range",
            &["zero", limit, "one_scalar"],
            &["positions"],
            vec![],
        ),
        node("Unsqueeze", &["s", "one"], &["s_col"], vec![]),
        node("Less", &["positions", "s_col"], &["slots"], vec![]),
        node("NonZero", &["m"], &["global"], vec![]),
        node("NonZero", &["slots"], &["local"], vec![]),
    ];
    nodes.retain(|n| limit == "max" || n.output[0] != "max");
    nodes
}

fn slots_inits() -> Vec<TensorProto> {
    vec![
        int64s("one", &[1]),
        scalar("zero", 0),
        scalar("one_scalar", 1),
        scalar("three", 3),
        scalar("six", 6),
        int64s("two", &[2]),
        int64s("width", &[3]),
    ]
}

fn counts_equal(limit: &str) -> bool {
    let g = graph(
        slots_nodes(limit),
        vec![value("m", DataType::Bool, Some(&["2", "6"]))],
        &["global", "local"],
        slots_inits(),
    );
    let index = nonzero_rewrite_graph::graph::GraphIndex::new(&g);
    let scope = ShapeTable::scope(Some(17));
    let shapes = ShapeTable::for_graph(&g, &index, Some(&scope), &BodyInputs::Declared);
    let count = |name: &str| shapes.info(name).and_then(|i| i.dims.clone()).expect(name)[1].clone();
    count("global") == count("local")
}

#[test]
fn the_slots_of_each_rows_count_select_as_many_as_the_mask() {
    // Up to the most of any row, or up to the row length: every row's sum fits.
    assert!(counts_equal("max"));
    assert!(counts_equal("six"));
    // Three slots may cut a row of more true elements: not proven.
    assert!(!counts_equal("three"));
}

/// `slots = zeros(2, 6, 3); slots[local] = x[global]; x[global] = (slots * 2)[local]`, the
/// slots `arange(6) < s[:, None]` (Longformer's round trip through its global slots once their
/// length is capped at the row length), over x [2, 6, 3]. With `unsafe_local`, the local
/// coordinates are also a graph output after a Mul, which their padding may not reach.
fn round_trip(unsafe_local: bool) -> Vec<u8> {
    let mut nodes = slots_nodes("six");
    nodes.extend([
        node(
            "Transpose",
            &["global"],
            &["global_at"],
            vec![ints("perm", &[1, 0])],
        ),
        node(
            "Transpose",
            &["local"],
            &["local_at"],
            vec![ints("perm", &[1, 0])],
        ),
        node("GatherND", &["x", "global_at"], &["rows"], vec![]),
        node(
            "ScatterND",
            &["zeros", "local_at", "rows"],
            &["filled"],
            vec![],
        ),
        node("Add", &["filled", "filled"], &["doubled"], vec![]),
        node("GatherND", &["doubled", "local_at"], &["back"], vec![]),
        node("ScatterND", &["x", "global_at", "back"], &["y"], vec![]),
    ]);
    let mut outputs = vec!["y"];
    if unsafe_local {
        nodes.push(node("Mul", &["local", "local"], &["squares"], vec![]));
        outputs.push("squares");
    }
    let mut inits = slots_inits();
    inits.push(TensorProto {
        name: Some("zeros".into()),
        dims: vec![2, 6, 3],
        data_type: Some(DataType::Float as i32),
        float_data: vec![0.0; 36],
        ..Default::default()
    });
    let g = graph(
        nodes,
        vec![
            value("m", DataType::Bool, Some(&["2", "6"])),
            value("x", DataType::Float, Some(&["2", "6", "3"])),
        ],
        &outputs,
        inits,
    );
    model(g, 17)
}

#[test]
fn rows_written_at_each_others_coordinates_are_compacted_together() {
    let options = static_options(&[]);
    let (_, report) = optimize_with(&round_trip(false), &options).expect("static");
    assert_eq!(report.nonzero_left(), 0, "{:?}", report.left_lines());
    let lines = &report.static_mode.as_ref().unwrap().rewrites;
    let compacted: Vec<&String> = lines
        .iter()
        .filter(|(kind, _)| kind == "fixed-capacity")
        .map(|(_, line)| line)
        .collect();
    assert_eq!(compacted.len(), 2, "{lines:?}");
    assert!(
        compacted[0].contains("NonZero NonZero_global became [2, 12]"),
        "{compacted:?}"
    );
    assert!(
        compacted[1].contains("NonZero NonZero_local became [2, 12]"),
        "{compacted:?}"
    );
}

#[test]
fn a_partner_that_stays_dynamic_keeps_both() {
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) = optimize_with(&round_trip(true), &options).expect("partly static");
    assert_eq!(report.nonzero_left(), 2, "{:?}", report.left_lines());
    let left = report.left_lines().join("\n");
    assert!(
        left.contains("its count is that of NonZero -> local, which stays dynamic"),
        "{left}"
    );
    assert!(left.contains("Mul"), "{left}");
}
