//! The nodes an edit inserts before the node it replaces, for forms written through
//! [`OpWriter`] (the row spread of a masked write).

use nonzero_proto::onnx::attribute_proto::AttributeType;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{AttributeProto, NodeProto, TensorProto};
use nonzero_rewrite_graph::forms::OpWriter;

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
