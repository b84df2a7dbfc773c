//! Static mode's arithmetic is checked (issue 36): an input's element count past int64, a padded
//! tensor past 2^31 elements, and one dimension name given two sizes are errors that name the
//! input and the size; nothing wraps into a wrong fixed shape.

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::tensor_proto::DataType;

/// `NonZero(x)` of a float input of symbolic shape `dims`, as the graph output `y`.
fn nonzero_of(dims: &[&str]) -> Vec<u8> {
    let g = graph(
        vec![node("NonZero", &["x"], &["y"], vec![])],
        vec![value("x", DataType::Float, Some(dims))],
        &["y"],
        vec![],
    );
    model(g, 17)
}

#[test]
fn an_element_count_past_int64_is_refused_by_name() {
    let bytes = nonzero_of(&["a", "b"]);
    let why = static_error(
        &bytes,
        &static_options(&[("x", &[4_294_967_296, 4_294_967_296])]),
    );
    assert_eq!(
        why,
        "input 'x' of shape 4294967296 x 4294967296 has more elements than an int64 counts (2^63 - 1)"
    );
    let why = static_error(
        &bytes,
        &static_options(&[("x", &[100_000_000_000, 100_000_000_000])]),
    );
    assert!(
        why.starts_with("input 'x' of shape 100000000000 x 100000000000 has more elements"),
        "{why}"
    );
}

#[test]
fn a_padded_tensor_past_the_limit_is_refused_and_capacity_lowers_it() {
    let bytes = nonzero_of(&["a", "b", "c"]);
    let huge = static_options(&[("x", &[100_000_000_000, 5, 3])]);
    let why = static_error(&bytes, &huge);
    assert_eq!(
        why,
        "NonZero NonZero_y of 'x' [100000000000, 5, 3]: padded to 1500000000000 rows, its coordinates [3, 1500000000000] would hold 4500000000000 elements, past static mode's limit of 2^31 (docs/static.md, \"Capacity\"); --capacity N keeps the first N rows"
    );
    // Within the limit once the capacity bounds the rows: [3, 1000] coordinates.
    let mut capped = huge.clone();
    capped.capacity = Some(1000);
    let (out, report) = optimize_with(&bytes, &capped).expect("static within the limit");
    let m = ModelProto::decode(out.as_slice()).unwrap();
    let y = &m.graph.as_ref().unwrap().output[0];
    assert_eq!(
        nonzero_emit_static::inputs::declared(y),
        Some(vec![Some(3), Some(1000)])
    );
    assert_eq!(report.static_mode.unwrap().capacity, Some(1000));
    // Exactly at the limit: 2 x 2^30 coordinates.
    let bytes = nonzero_of(&["a", "b"]);
    let at_limit = static_options(&[("x", &[1 << 15, 1 << 15])]);
    assert!(optimize_with(&bytes, &at_limit).is_ok());
    let past = static_options(&[("x", &[1 << 15, (1 << 15) + 1])]);
    assert!(static_error(&bytes, &past).contains("past static mode's limit of 2^31"));
}

#[test]
fn one_dimension_name_with_two_sizes_is_refused_naming_both() {
    let g = graph(
        vec![
            node("Add", &["a", "b"], &["s"], vec![]),
            node("NonZero", &["s"], &["y"], vec![]),
        ],
        vec![
            value("a", DataType::Float, Some(&["batch", "4"])),
            value("b", DataType::Float, Some(&["4", "batch"])),
        ],
        &["y"],
        vec![],
    );
    let bytes = model(g, 17);
    let why = static_error(&bytes, &static_options(&[("a", &[4, 4]), ("b", &[4, 5])]));
    assert_eq!(
        why,
        "inputs 'a' (axis 0) and 'b' (axis 1) share the dimension 'batch', but get the sizes 4 and 5; give them one size"
    );
    assert!(optimize_with(&bytes, &static_options(&[("a", &[4, 4]), ("b", &[4, 4])])).is_ok());
}

#[test]
fn the_static_summary_quotes_names_and_counts_in_english() {
    let mut options = static_options(&[("x", &[2, 3])]);
    options.capacity = Some(4);
    let (_, report) = optimize_with(&nonzero_of(&["a", "b"]), &options).expect("static");
    let summary = report.summary();
    let lines: Vec<&str> = summary.lines().collect();
    assert_eq!(
        lines[0],
        "static: 1 NonZero: 1 removed, 0 left; 0 other nodes still dynamic; 1 rewrite; 0 nodes removed"
    );
    assert_eq!(lines[2], "static: inputs x [2, 3]");
    assert_eq!(
        lines[3],
        "static: output 'y' padded; its count is the output 'y_count'"
    );
    assert_eq!(lines.len(), 4, "{summary}");
}

#[test]
fn what_stays_dynamic_ends_in_a_tally() {
    let g = graph(
        vec![
            node("Unique", &["x"], &["u"], vec![]),
            node("NonZero", &["u"], &["y"], vec![]),
        ],
        vec![value("x", DataType::Float, Some(&["6"]))],
        &["y"],
        vec![],
    );
    let bytes = model(g, 17);
    let why = static_error(&bytes, &static_options(&[]));
    assert_eq!(
        why.lines().last(),
        Some("still dynamic: 1 NonZero shape-not-fixed, 1 Unique data-dependent"),
        "{why}"
    );
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) = optimize_with(&bytes, &options).expect("written with --allow-dynamic");
    assert_eq!(
        report.summary().lines().last(),
        Some("static: still dynamic: 1 NonZero shape-not-fixed, 1 Unique data-dependent")
    );
}
