//! A write mask that spreads a row mask over whole rows of the data
//! (`Expand(Unsqueeze(m, trailing axes), Shape(X))`, torch's `x[m] = v` with m `[n]`) is
//! rebuilt, in both modes, by a form ONNX Runtime runs faster when rows are short: its Expand
//! along a short last axis copies one element at a time (8.3 ms for 1M rows of 3), while an
//! Expand along a new first axis and a Transpose take 0.9 ms (docs/performance.md, "Static
//! forms"). From about 128 elements a row, the Expand is the faster, and the mask stays.

use crate::trace::View;
use nonzero_proto::onnx::attribute_proto::AttributeType;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{AttributeProto, NodeProto, TensorProto};

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

/// A spread as [`spread_rows`] writes it, read back: the default mode's output, lowered by
/// `--static`, has it where the export had its Expand.
#[derive(Debug)]
pub struct Spread {
    pub rows: String,
    /// Elements a row.
    pub row: i64,
    /// The final Reshape's shape operand (the data's shape).
    pub shape: String,
}

/// `mask` as a [`Spread`] of a row mask, when it is one.
pub fn spread_of(view: &View, mask: &str) -> Option<Spread> {
    let producer = |name: &str, op: &str| {
        view.producer(name)
            .filter(|n| view.is_op(n, op) && !n.input.is_empty())
    };
    let reshape = producer(mask, "Reshape").filter(|n| n.input.len() == 2)?;
    let transpose = producer(&reshape.input[0], "Transpose")?;
    if crate::graph::ints_attr(transpose, "perm").ok()?? != [1, 0] {
        return None;
    }
    let expand = producer(&transpose.input[0], "Expand").filter(|n| n.input.len() == 2)?;
    let [row, 1] = view.const_ints(&expand.input[1])?[..] else {
        return None;
    };
    let across = producer(&expand.input[0], "Reshape").filter(|n| n.input.len() == 2)?;
    (view.const_ints(&across.input[1])? == [1, -1]).then(|| Spread {
        rows: across.input[0].clone(),
        row,
        shape: reshape.input[1].clone(),
    })
}

/// Nodes for a default-mode edit's prelude, named under `prefix`, constants as Constant nodes.
#[derive(Debug)]
pub struct Prelude {
    prefix: String,
    pub nodes: Vec<NodeProto>,
}

impl Prelude {
    /// `prefix` must be a name no tensor or node of the graph starts with (a fresh node name
    /// with a part no exporter writes).
    pub fn new(prefix: String) -> Prelude {
        Prelude {
            prefix,
            nodes: vec![],
        }
    }

    fn fresh(&self, what: &str) -> String {
        format!("{}/{what}_{}", self.prefix, self.nodes.len())
    }
}

impl OpWriter for Prelude {
    fn op(&mut self, op: &str, inputs: &[&str], attribute: Vec<AttributeProto>) -> String {
        let output = self.fresh(&op.to_ascii_lowercase());
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.clone()],
            name: Some(self.fresh(op)),
            op_type: Some(op.to_string()),
            domain: Some(String::new()),
            attribute,
            ..Default::default()
        });
        output
    }

    fn ints(&mut self, values: &[i64]) -> String {
        let value = TensorProto {
            dims: vec![values.len() as i64],
            data_type: Some(DataType::Int64 as i32),
            int64_data: values.to_vec(),
            ..Default::default()
        };
        let attribute = vec![AttributeProto {
            name: Some("value".into()),
            r#type: Some(AttributeType::Tensor as i32),
            t: Some(value),
            ..Default::default()
        }];
        self.op("Constant", &[], attribute)
    }
}
