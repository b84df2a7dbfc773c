//! Grid writes at a selection's coordinates (rewrite-match's `writes::grid_columns`):
//! TorchScript's `x[i, :, j, :] = v` for `i, j = m.nonzero().unbind(1)` is `Where(m[:, None, :,
//! None], v, x)` under --static, and the NonZero goes. Only paired columns in order are: the
//! columns swapped (`x[j, :, i, :]`, m's axes landing on x's in the other order) keep the
//! ScatterND. Values on ONNX Runtime: tests/python/test_static_grid_columns.py.

use super::*;
use crate::optimize_with;

/// `y = x; y[first, :, second, :] = v` over x [3, 2, 4, 5] (or [4, 2, 3, 5] when swapped), the
/// named columns of m's [3, 4] coordinates.
fn column_write(first: &str, second: &str) -> Vec<u8> {
    let x_dims: &[&str] = if first == "i" {
        &["3", "2", "4", "5"]
    } else {
        &["4", "2", "3", "5"]
    };
    let mut nodes = vec![
        node("NonZero", &["m"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["at"], vec![ints("perm", &[1, 0])]),
        node("Gather", &["at", "zero"], &["i"], vec![int("axis", 1)]),
        node("Gather", &["at", "one"], &["j"], vec![int("axis", 1)]),
        node("Reshape", &[first, "column"], &["a_grid"], vec![]),
        node("Reshape", &[second, "column"], &["c_grid"], vec![]),
        node("Range", &["zero", "two", "one"], &["b_range"], vec![]),
        node("Reshape", &["b_range", "width"], &["b_grid"], vec![]),
        node("Range", &["zero", "five", "one"], &["d_grid"], vec![]),
        node("Add", &["a_grid", "b_grid"], &["s1"], vec![]),
        node("Add", &["s1", "c_grid"], &["s2"], vec![]),
        node("Add", &["s2", "d_grid"], &["s3"], vec![]),
        node("Shape", &["s3"], &["grid"], vec![]),
    ];
    let mut parts = vec![];
    for p in ["a", "b", "c", "d"] {
        let (full, part) = (format!("{p}_full"), format!("{p}_part"));
        nodes.push(node(
            "Expand",
            &[&format!("{p}_grid"), "grid"],
            &[&full],
            vec![],
        ));
        nodes.push(node("Unsqueeze", &[&full, "last"], &[&part], vec![]));
        parts.push(part);
    }
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    nodes.extend([
        node("Concat", &parts, &["indices"], vec![int("axis", -1)]),
        node("Expand", &["v", "grid"], &["updates"], vec![]),
        node("ScatterND", &["x", "indices", "updates"], &["y"], vec![]),
    ]);
    let g = graph(
        nodes,
        vec![
            value("m", DataType::Bool, Some(&["3", "4"])),
            value("x", DataType::Float, Some(x_dims)),
            value("v", DataType::Float, Some(&[])),
        ],
        &["y"],
        vec![
            scalar("zero", 0),
            scalar("one", 1),
            scalar("two", 2),
            scalar("five", 5),
            int64s("column", &[-1, 1, 1]),
            int64s("width", &[2, 1]),
            int64s("last", &[-1]),
        ],
    );
    model(g, 17)
}

#[test]
fn paired_columns_in_order_are_a_where_of_the_mask_and_swapped_ones_are_not() {
    let (_, report) = optimize_with(&column_write("i", "j"), &static_options(&[])).expect("static");
    assert_eq!(report.nonzero_left(), 0, "{:?}", report.left);
    let lines = &report.static_mode.as_ref().unwrap().rewrites;
    assert!(
        lines.iter().any(|(kind, line)| kind == "grid-write"
            && line.contains("x[c0, :, c1, :] (c = the coordinates of m, with whole axes)")),
        "{lines:?}"
    );
    let mut options = static_options(&[]);
    options.allow_dynamic = true;
    let (_, report) = optimize_with(&column_write("j", "i"), &options).expect("written");
    let lines = &report.static_mode.as_ref().unwrap().rewrites;
    assert!(
        !lines.iter().any(|(kind, _)| kind == "grid-write"),
        "{lines:?}"
    );
}
