//! Standard-op forms that both targets write, each behind [`OpWriter`], which each target
//! implements (the static target's emitter, the library target's prelude of an edit).
//!
//! A write mask that spreads a row mask over whole rows of the data
//! (`Expand(Unsqueeze(m, trailing axes), Shape(X))`, torch's `x[m] = v` with m `[n]`) is
//! rebuilt, in both modes, by a form ONNX Runtime runs faster when rows are short: its Expand
//! along a short last axis copies one element at a time (8.3 ms for 1M rows of 3), while an
//! Expand along a new first axis and a Transpose take 0.9 ms (docs/performance.md, "Static
//! forms"). From about 128 elements a row, the Expand is the faster, and the mask stays.

use nonzero_proto::onnx::attribute_proto::AttributeType;
use nonzero_proto::onnx::AttributeProto;

/// Rows shorter than this are spread by the transposed form.
pub const SPREAD_BELOW: i64 = 128;

/// What writes the nodes: the static mode's emitter, or a default-mode edit's prelude.
pub trait OpWriter {
    /// A node of `op` with one output; returns the output's name.
    fn op(&mut self, op: &str, inputs: &[&str], attribute: Vec<AttributeProto>) -> String;
    /// A 1-D int64 constant.
    fn ints(&mut self, values: &[i64]) -> String;
}

/// The bool mask of `data`'s shape that is true on the rows `rows` (bool, any shape) selects,
/// each row holding `row` elements: `Reshape(Transpose(Expand(Reshape(rows, [1, -1]),
/// [row, 1])), Shape(data))`. `None` from [`SPREAD_BELOW`] elements a row.
pub fn spread_rows(w: &mut impl OpWriter, rows: &str, row: i64, data: &str) -> Option<String> {
    if !(1..SPREAD_BELOW).contains(&row) {
        return None;
    }
    let across_shape = w.ints(&[1, -1]);
    let across = w.op("Reshape", &[rows, &across_shape], vec![]);
    // Expand broadcasts both ways: [1, R] against [row, 1] is [row, R].
    let stack_shape = w.ints(&[row, 1]);
    let stacked = w.op("Expand", &[&across, &stack_shape], vec![]);
    let perm = AttributeProto {
        name: Some("perm".into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: vec![1, 0],
        ..Default::default()
    };
    let by_row = w.op("Transpose", &[&stacked], vec![perm]);
    let shape = w.op("Shape", &[data], vec![]);
    Some(w.op("Reshape", &[&by_row, &shape], vec![]))
}
