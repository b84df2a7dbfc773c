//! What the graph says about each tensor's element type and shape: declared value infos, inputs,
//! outputs and initializers, plus a small forward inference through the element-wise ops that
//! exporters put in front of NonZero (comparisons, logic, Cast, Expand).

use crate::graph::{int_attr, is_onnx_op, GraphIndex};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::tensor_shape_proto::dimension::Value as DimValue;
use nonzero_proto::onnx::{type_proto, GraphProto, NodeProto, ValueInfoProto};
use std::collections::HashMap;

/// One dimension as far as the graph proves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    Static(i64),
    /// A `dim_param`: equal names are equal sizes throughout the model.
    Symbolic(String),
    /// A size only known at run time, made by one node (NonZero's nnz, named by its output):
    /// equal only to itself, which is enough to follow it through Gather, Sub, And, ...
    Fresh(String),
    Unknown,
}

impl Dim {
    /// True when both are provably the same size.
    pub fn same(&self, other: &Dim) -> bool {
        match (self, other) {
            (Dim::Static(a), Dim::Static(b)) => a == b,
            (Dim::Symbolic(a), Dim::Symbolic(b)) | (Dim::Fresh(a), Dim::Fresh(b)) => a == b,
            _ => false,
        }
    }
}

/// Element type and shape of one tensor, each `None` where unknown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TensorInfo {
    pub elem_type: Option<i32>,
    pub dims: Option<Vec<Dim>>,
}

impl TensorInfo {
    pub fn rank(&self) -> Option<usize> {
        self.dims.as_ref().map(Vec::len)
    }
}

/// Tensor name -> what is known about it.
#[derive(Debug, Clone, Default)]
pub struct ShapeTable {
    infos: HashMap<String, TensorInfo>,
}

impl ShapeTable {
    /// Everything `graph` declares or implies, on top of `outer` (the enclosing graphs' table).
    pub fn for_graph(graph: &GraphProto, index: &GraphIndex, outer: Option<&ShapeTable>) -> Self {
        let mut table = outer.cloned().unwrap_or_default();
        for t in &graph.initializer {
            if let Some(name) = &t.name {
                let info = TensorInfo {
                    elem_type: t.data_type,
                    dims: Some(t.dims.iter().map(|&d| Dim::Static(d)).collect()),
                };
                table.infos.insert(name.clone(), info);
            }
        }
        for vi in graph
            .input
            .iter()
            .chain(&graph.value_info)
            .chain(&graph.output)
        {
            if let (Some(name), Some(info)) = (&vi.name, declared(vi)) {
                table.merge(name, info);
            }
        }
        for node in &graph.node {
            if let Some((name, info)) = infer(node, &table, graph, index) {
                table.merge(&name, info);
            }
        }
        table
    }

    pub fn get(&self, name: &str) -> TensorInfo {
        self.infos.get(name).cloned().unwrap_or_default()
    }

    /// Adds what `info` knows to what is already known (declared facts win over inferred ones
    /// only where the declared one is unknown).
    fn merge(&mut self, name: &str, info: TensorInfo) {
        let entry = self.infos.entry(name.to_string()).or_default();
        if entry.elem_type.is_none() {
            entry.elem_type = info.elem_type;
        }
        match (&mut entry.dims, info.dims) {
            (None, dims) => entry.dims = dims,
            (Some(have), Some(new)) if have.len() == new.len() => {
                for (h, n) in have.iter_mut().zip(new) {
                    if *h == Dim::Unknown {
                        *h = n;
                    }
                }
            }
            _ => {}
        }
    }
}

/// The tensor type a value info declares.
fn declared(vi: &ValueInfoProto) -> Option<TensorInfo> {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref()?.value.as_ref() else {
        return None;
    };
    let dims = t.shape.as_ref().map(|s| {
        s.dim
            .iter()
            .map(|d| match &d.value {
                Some(DimValue::DimValue(v)) if *v >= 0 => Dim::Static(*v),
                Some(DimValue::DimParam(p)) if !p.is_empty() => Dim::Symbolic(p.clone()),
                _ => Dim::Unknown,
            })
            .collect()
    });
    Some(TensorInfo {
        elem_type: t.elem_type.filter(|&e| e != 0),
        dims,
    })
}

/// Multidirectional (numpy) broadcasting of two shapes, assuming the op runs without error.
pub fn broadcast(a: &[Dim], b: &[Dim]) -> Vec<Dim> {
    let rank = a.len().max(b.len());
    (0..rank)
        .map(|i| {
            let da = (i + a.len()).checked_sub(rank).map(|j| &a[j]);
            let db = (i + b.len()).checked_sub(rank).map(|j| &b[j]);
            match (da, db) {
                (Some(x), None) | (None, Some(x)) => x.clone(),
                (Some(x), Some(y)) if x.same(y) => x.clone(),
                (Some(Dim::Static(1)), Some(y)) => y.clone(),
                (Some(x), Some(Dim::Static(1))) => x.clone(),
                // A valid broadcast of a size other than 1 against anything gives that size.
                (Some(Dim::Static(s)), _) | (_, Some(Dim::Static(s))) => Dim::Static(*s),
                _ => Dim::Unknown,
            }
        })
        .collect()
}

const SAME_SHAPE_OPS: &[&str] = &[
    "Identity", "Not", "Abs", "Neg", "Relu", "Sigmoid", "Exp", "Log", "Sqrt", "Ceil", "Floor",
    "Round", "Sign",
];
const BOOL_SAME_SHAPE_OPS: &[&str] = &["IsNaN", "IsInf"];
const COMPARE_OPS: &[&str] = &[
    "Greater",
    "Less",
    "GreaterOrEqual",
    "LessOrEqual",
    "Equal",
    "And",
    "Or",
    "Xor",
];
const ARITHMETIC_OPS: &[&str] = &["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"];

/// The type and shape of `node`'s first output, for the few ops the patterns look through.
fn infer(
    node: &NodeProto,
    table: &ShapeTable,
    graph: &GraphProto,
    index: &GraphIndex,
) -> Option<(String, TensorInfo)> {
    let out = node.output.first().filter(|o| !o.is_empty())?.clone();
    let op = node.op_type.as_deref()?;
    let input = |i: usize| node.input.get(i).map(|n| table.get(n)).unwrap_or_default();
    if !is_onnx_op(node, op) {
        return None;
    }
    if let Some(info) = crate::shapes_index::infer_indexing(node, table, graph, index) {
        return Some((out, info));
    }
    if node.input.is_empty() {
        return None;
    }
    let info = if SAME_SHAPE_OPS.contains(&op) {
        input(0)
    } else if BOOL_SAME_SHAPE_OPS.contains(&op) {
        TensorInfo {
            elem_type: Some(DataType::Bool as i32),
            dims: input(0).dims,
        }
    } else if op == "Cast" {
        TensorInfo {
            elem_type: int_attr(node, "to").ok().flatten().map(|t| t as i32),
            dims: input(0).dims,
        }
    } else if COMPARE_OPS.contains(&op) || ARITHMETIC_OPS.contains(&op) || op == "Where" {
        let first_value = usize::from(op == "Where");
        let elem_type = if COMPARE_OPS.contains(&op) {
            Some(DataType::Bool as i32)
        } else {
            input(first_value).elem_type
        };
        let dims = (0..node.input.len())
            .map(|i| input(i).dims)
            .try_fold(vec![], |acc: Vec<Dim>, d| Some(broadcast(&acc, &d?)));
        TensorInfo { elem_type, dims }
    } else if op == "Expand" && node.input.len() == 2 {
        TensorInfo {
            elem_type: input(0).elem_type,
            dims: expand_target(&node.input[1], table, graph, index)
                .and_then(|t| Some(broadcast(&input(0).dims?, &t))),
        }
    } else {
        return None;
    };
    Some((out, info))
}

/// The shape an Expand's shape operand stands for: `Shape(y)` (whole shape) or a constant.
pub fn expand_target(
    shape_input: &str,
    table: &ShapeTable,
    graph: &GraphProto,
    index: &GraphIndex,
) -> Option<Vec<Dim>> {
    if let Some(values) = index.const_ints(graph, shape_input) {
        return Some(values.into_iter().map(Dim::Static).collect());
    }
    let producer = index.producer_of(graph, shape_input)?;
    let whole_shape = is_onnx_op(producer, "Shape")
        && producer.input.len() == 1
        && int_attr(producer, "start").ok()?.unwrap_or(0) == 0
        && int_attr(producer, "end").ok()?.is_none();
    if whole_shape {
        table.get(&producer.input[0]).dims
    } else {
        None
    }
}
