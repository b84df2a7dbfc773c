//! Read-only views of one graph: who produces and who reads each tensor, node attributes,
//! constant integer tensors.

use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{attribute_proto::AttributeType, GraphProto, NodeProto, TensorProto};
use std::collections::{HashMap, HashSet};

/// Constant tensors larger than this are not read (the rewriter only needs axes and perms).
const MAX_CONST_ELEMENTS: usize = 64;

/// True for a node of the default ONNX domain with this op type.
pub fn is_onnx_op(node: &NodeProto, op_type: &str) -> bool {
    node.op_type.as_deref() == Some(op_type)
        && matches!(node.domain.as_deref(), None | Some("") | Some("ai.onnx"))
}

/// The attribute `name` of `node`, if present.
pub fn attr<'n>(
    node: &'n NodeProto,
    name: &str,
) -> Option<&'n nonzero_proto::onnx::AttributeProto> {
    node.attribute
        .iter()
        .find(|a| a.name.as_deref() == Some(name))
}

/// An attribute present with another type than the one asked for (or a reference to a
/// function's attribute): the rewriter proves nothing about such a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotPlain;

/// An INT attribute: `Ok(None)` when absent, `Err(NotPlain)` when present but not a plain
/// integer.
pub fn int_attr(node: &NodeProto, name: &str) -> Result<Option<i64>, NotPlain> {
    match attr(node, name) {
        None => Ok(None),
        Some(a) if a.ref_attr_name.is_none() && a.r#type == Some(AttributeType::Int as i32) => {
            a.i.map(Some).ok_or(NotPlain)
        }
        Some(_) => Err(NotPlain),
    }
}

/// An INTS attribute: `Ok(None)` when absent, `Err(NotPlain)` when present but not a plain
/// list.
pub fn ints_attr(node: &NodeProto, name: &str) -> Result<Option<Vec<i64>>, NotPlain> {
    match attr(node, name) {
        None => Ok(None),
        Some(a) if a.ref_attr_name.is_none() && a.r#type == Some(AttributeType::Ints as i32) => {
            Ok(Some(a.ints.clone()))
        }
        Some(_) => Err(NotPlain),
    }
}

/// The integer values of a small int64/int32 tensor.
pub fn tensor_ints(t: &TensorProto) -> Option<Vec<i64>> {
    if !t.external_data.is_empty() || t.data_location == Some(1) {
        return None;
    }
    let count: usize = t
        .dims
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(usize::try_from(d).ok()?))?;
    if count > MAX_CONST_ELEMENTS {
        return None;
    }
    let data_type = DataType::try_from(t.data_type?).ok()?;
    let values: Vec<i64> = match (data_type, &t.raw_data) {
        (DataType::Int64, Some(raw)) => raw
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("chunks of 8")))
            .collect(),
        (DataType::Int32, Some(raw)) => raw
            .chunks_exact(4)
            .map(|c| i64::from(i32::from_le_bytes(c.try_into().expect("chunks of 4"))))
            .collect(),
        (DataType::Int64, None) => t.int64_data.clone(),
        (DataType::Int32, None) => t.int32_data.iter().map(|&v| i64::from(v)).collect(),
        _ => return None,
    };
    (values.len() == count).then_some(values)
}

/// The values of a small float tensor (Resize's scales).
pub fn tensor_floats(t: &TensorProto) -> Option<Vec<f32>> {
    if !t.external_data.is_empty() || t.data_location == Some(1) {
        return None;
    }
    if DataType::try_from(t.data_type?).ok()? != DataType::Float {
        return None;
    }
    // Counted before anything is copied: a model's weights are float tensors too.
    let count = t
        .raw_data
        .as_ref()
        .map_or(t.float_data.len(), |raw| raw.len() / 4);
    if count > MAX_CONST_ELEMENTS {
        return None;
    }
    let values: Vec<f32> = match &t.raw_data {
        Some(raw) => raw
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("chunks of 4")))
            .collect(),
        None => t.float_data.clone(),
    };
    Some(values)
}

/// The values of a small integer tensor, or of a float one whose values are all integers
/// (Range bounds and steps exported as floats).
pub fn tensor_integral(t: &TensorProto) -> Option<Vec<i64>> {
    tensor_ints(t).or_else(|| {
        tensor_floats(t)?
            .into_iter()
            .map(|f| (f.fract() == 0.0 && f.abs() < 16_777_216.0).then_some(f as i64))
            .collect()
    })
}

/// Who writes and who reads every tensor name of one graph.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct GraphIndex {
    /// Tensor name -> index of the node that outputs it.
    pub producer: HashMap<String, usize>,
    /// Tensor name -> (node index, input slot) of every node input reading it. A name read
    /// inside a node's subgraph counts as a read by that node, slot `usize::MAX`.
    pub readers: HashMap<String, Vec<(usize, usize)>>,
    /// Names that are graph outputs.
    pub graph_outputs: HashSet<String>,
    /// Names of the graph's inputs (an initializer with such a name can be overridden).
    pub graph_inputs: HashSet<String>,
}

impl GraphIndex {
    pub fn new(graph: &GraphProto) -> Self {
        let mut index = GraphIndex::default();
        for (i, node) in graph.node.iter().enumerate() {
            for out in node.output.iter().filter(|o| !o.is_empty()) {
                index.producer.insert(out.clone(), i);
            }
            for (slot, input) in node.input.iter().enumerate() {
                if !input.is_empty() {
                    index
                        .readers
                        .entry(input.clone())
                        .or_default()
                        .push((i, slot));
                }
            }
            let mut captured = HashSet::new();
            for a in &node.attribute {
                for g in a.g.iter().chain(a.graphs.iter()) {
                    names_read_in(g, &mut captured, 0);
                }
            }
            for name in captured {
                index.readers.entry(name).or_default().push((i, usize::MAX));
            }
        }
        index.graph_outputs = graph.output.iter().filter_map(|o| o.name.clone()).collect();
        index.graph_inputs = graph.input.iter().filter_map(|o| o.name.clone()).collect();
        index
    }

    /// The readers of `name`.
    pub fn readers_of(&self, name: &str) -> &[(usize, usize)] {
        self.readers.get(name).map_or(&[], Vec::as_slice)
    }

    /// True when `name` is read by nobody and is not a graph output.
    pub fn unused(&self, name: &str) -> bool {
        self.readers_of(name).is_empty() && !self.graph_outputs.contains(name)
    }

    /// The node that produces `name`, if any.
    pub fn producer_of<'g>(&self, graph: &'g GraphProto, name: &str) -> Option<&'g NodeProto> {
        self.producer.get(name).map(|&i| &graph.node[i])
    }

    /// The float values of `name` when it is a constant (as for [`Self::const_ints`]).
    pub fn const_floats(&self, graph: &GraphProto, name: &str) -> Option<Vec<f32>> {
        self.constant(graph, name).and_then(tensor_floats)
    }

    /// The tensor `name` holds when it is an initializer no input overrides, or a Constant's
    /// `value`.
    pub fn constant<'g>(&self, graph: &'g GraphProto, name: &str) -> Option<&'g TensorProto> {
        if let Some(node) = self.producer_of(graph, name) {
            return is_onnx_op(node, "Constant")
                .then(|| attr(node, "value").and_then(|a| a.t.as_ref()))
                .flatten();
        }
        if self.graph_inputs.contains(name) {
            return None;
        }
        graph
            .initializer
            .iter()
            .find(|t| t.name.as_deref() == Some(name))
    }

    /// The integer values of `name` when it is an initializer (not overridable by an input) or the
    /// output of a Constant node.
    pub fn const_ints(&self, graph: &GraphProto, name: &str) -> Option<Vec<i64>> {
        if let Some(node) = self.producer_of(graph, name) {
            if !is_onnx_op(node, "Constant") {
                return None;
            }
            if let Ok(Some(v)) = ints_attr(node, "value_ints") {
                return Some(v);
            }
            if let Ok(Some(v)) = int_attr(node, "value_int") {
                return Some(vec![v]);
            }
            return attr(node, "value")
                .and_then(|a| a.t.as_ref())
                .and_then(tensor_ints);
        }
        // No producer: an initializer that no graph input overrides, as `constant` finds it.
        self.constant(graph, name).and_then(tensor_ints)
    }
}

/// Adds every name read by a node of `graph` or its subgraphs to `names` (outer-scope captures
/// included; names the subgraph defines itself may be added too, which only makes the caller
/// more careful). Depth is bounded by the caller's nesting limit.
pub fn names_read_in(graph: &GraphProto, names: &mut HashSet<String>, depth: usize) {
    if depth > crate::MAX_SUBGRAPH_DEPTH {
        return;
    }
    for node in &graph.node {
        names.extend(node.input.iter().filter(|n| !n.is_empty()).cloned());
        for a in &node.attribute {
            for g in a.g.iter().chain(a.graphs.iter()) {
                names_read_in(g, names, depth + 1);
            }
        }
    }
    names.extend(graph.output.iter().filter_map(|o| o.name.clone()));
}

/// Adds every name read inside `node`'s subgraphs to `names` (as [`names_read_in`] does).
pub fn names_read_in_bodies(node: &NodeProto, names: &mut HashSet<String>) {
    for a in &node.attribute {
        for g in a.g.iter().chain(a.graphs.iter()) {
            names_read_in(g, names, 1);
        }
    }
}

/// A node name not yet used in the graph, derived from `base`.
pub fn fresh_node_name(graph: &GraphProto, base: &str) -> String {
    // Only names that start with `base` can be taken (usually none: no set of every name).
    let taken: HashSet<&str> = graph
        .node
        .iter()
        .filter_map(|n| n.name.as_deref())
        .filter(|n| n.starts_with(base))
        .collect();
    if !taken.contains(base) {
        return base.to_string();
    }
    (1..)
        .map(|i| format!("{base}_{i}"))
        .find(|n| !taken.contains(n.as_str()))
        .expect("an unused suffix exists")
}

/// A node name for reports: its name, else its first output.
pub fn describe(node: &NodeProto) -> String {
    match node.name.as_deref() {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => format!(
            "<{} -> {}>",
            node.op_type.as_deref().unwrap_or("?"),
            node.output.first().map_or("?", String::as_str)
        ),
    }
}

/// True for the floating-point types (where a division by zero gives inf or NaN, no error).
pub fn is_float(elem_type: i32) -> bool {
    use nonzero_proto::onnx::tensor_proto::DataType as T;
    matches!(
        T::try_from(elem_type),
        Ok(T::Float | T::Double | T::Float16 | T::Bfloat16)
    )
}

/// Bytes of one element of a fixed-size ONNX type (`None` for strings and unknown codes).
pub fn element_size(elem_type: i32) -> Option<usize> {
    use nonzero_proto::onnx::tensor_proto::DataType as T;
    Some(match T::try_from(elem_type).ok()? {
        T::Bool | T::Uint8 | T::Int8 => 1,
        T::Float16 | T::Bfloat16 | T::Uint16 | T::Int16 => 2,
        T::Float | T::Int32 | T::Uint32 => 4,
        T::Double | T::Int64 | T::Uint64 | T::Complex64 => 8,
        T::Complex128 => 16,
        _ => return None,
    })
}

/// The position in `graph` of the node whose first output is `name` (a rewrite finds its nodes
/// by name: positions move as nodes are inserted).
pub fn writer_of(graph: &GraphProto, name: &str) -> Option<usize> {
    graph
        .node
        .iter()
        .position(|n| n.output.first().map(String::as_str) == Some(name))
}
