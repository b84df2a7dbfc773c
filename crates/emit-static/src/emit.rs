//! Writing standard-op subgraphs for the static rewrites: fresh tensor names, int64 constants
//! as initializers, and each op in the form its since-version at the graph's opset takes
//! (axes as an attribute before opset 13, as an input from it).

use super::scope::{names_under, Scope};
use crate::graph::element_size;
use nonzero_proto::onnx::attribute_proto::AttributeType;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{AttributeProto, GraphProto, NodeProto, TensorProto, ValueInfoProto};
use std::collections::HashSet;

/// Nodes and initializers for one rewrite, to be inserted before the node they replace.
pub struct Emitter {
    opset: i64,
    /// The toolchain the forms are for (`--target`).
    pub target: super::Target,
    prefix: String,
    taken: HashSet<String>,
    pub nodes: Vec<NodeProto>,
    pub initializers: Vec<TensorProto>,
    /// Declared types of emitted tensors (a Loop's results: IREE's importer reads them).
    pub value_info: Vec<ValueInfoProto>,
}

pub fn int_attr(name: &str, value: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Int as i32),
        i: Some(value),
        ..Default::default()
    }
}

pub fn ints_attr(name: &str, values: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Ints as i32),
        ints: values.to_vec(),
        ..Default::default()
    }
}

impl Emitter {
    /// An emitter for `graph` in `scope`; names start with `prefix` and are new to the graph,
    /// its bodies and the graphs around it.
    pub fn new(graph: &GraphProto, scope: &Scope, prefix: &str) -> Emitter {
        // Only names under the prefix can collide with fresh ones: collecting every name of
        // the graph for each emitter made static mode quadratic (SSDlite's 90 selections).
        let under = format!("{prefix}/");
        let mut taken: HashSet<String> = scope
            .outer_names
            .iter()
            .filter(|n| n.starts_with(&under))
            .cloned()
            .collect();
        names_under(graph, &under, &mut taken, 0);
        Emitter {
            opset: scope.opset,
            target: scope.target,
            prefix: prefix.to_string(),
            taken,
            nodes: vec![],
            initializers: vec![],
            value_info: vec![],
        }
    }

    /// A name no tensor or node of the graph has.
    pub fn fresh(&mut self, what: &str) -> String {
        let base = format!("{}/{what}", self.prefix);
        let name = (0..)
            .map(|i| match i {
                0 => base.clone(),
                i => format!("{base}_{i}"),
            })
            .find(|n| !self.taken.contains(n))
            .expect("an unused suffix exists");
        self.taken.insert(name.clone());
        name
    }

    /// A node with one output; returns the output's name.
    pub fn op(&mut self, op: &str, inputs: &[&str], attribute: Vec<AttributeProto>) -> String {
        let output = self.fresh(&op.to_ascii_lowercase());
        let name = self.fresh(op);
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![output.clone()],
            name: Some(name),
            op_type: Some(op.to_string()),
            domain: Some(String::new()),
            attribute,
            ..Default::default()
        });
        output
    }

    /// Renames the last node's output to `name` (the tensor the rewrite replaces).
    pub fn finish_as(&mut self, name: &str) {
        let last = self.nodes.last_mut().expect("a rewrite emits nodes");
        last.output[0] = name.to_string();
    }

    /// An initializer of `elem_type` with the given raw bytes and dims.
    pub fn initializer(&mut self, elem_type: i32, dims: &[i64], raw: Vec<u8>) -> String {
        let name = self.fresh("const");
        self.initializers.push(TensorProto {
            name: Some(name.clone()),
            data_type: Some(elem_type),
            dims: dims.to_vec(),
            raw_data: Some(raw.into()),
            ..Default::default()
        });
        name
    }

    /// An empty tensor of `elem_type` and `dims` (some size 0), as an initializer.
    pub fn empty(&mut self, elem_type: i32, dims: &[i64]) -> String {
        self.initializer(elem_type, dims, vec![])
    }

    /// A 1-D int64 constant.
    pub fn ints(&mut self, values: &[i64]) -> String {
        self.ints_shaped(values, &[values.len() as i64])
    }

    /// An int64 constant of fixed `dims` (row-major `values`).
    pub fn ints_shaped(&mut self, values: &[i64], dims: &[i64]) -> String {
        let raw = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializer(DataType::Int64 as i32, dims, raw)
    }

    /// An int32 constant of fixed `dims` (row-major `values`).
    pub fn int32s(&mut self, values: &[i32], dims: &[i64]) -> String {
        let raw = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializer(DataType::Int32 as i32, dims, raw)
    }

    /// A float32 constant of fixed `dims` (row-major `values`).
    pub fn floats(&mut self, values: &[f32], dims: &[i64]) -> String {
        let raw = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.initializer(DataType::Float as i32, dims, raw)
    }

    /// The score that no score threshold passes, for the padding and the boxes masked out of an
    /// NMS: -inf, or for the NPU targets the lowest finite value (onnx2tf's flatbuffer_direct
    /// writes a -inf operand of Where as -3.4e38 but keeps a -inf threshold, so that the masked
    /// boxes pass it); for RKNN float16's lowest, -65504: its converter corrects a constant
    /// below -3e38 to -10000 in the masked scores but not in the threshold, so every masked box
    /// passed it (a real score at or below -65504 then counts as masked where the model has no
    /// threshold; RKNN computes in float16). `None` for a type that is not floating-point.
    pub fn unscored(&mut self, elem_type: i32) -> Option<String> {
        use DataType as T;
        if !self.target.portable() {
            return self.extreme(elem_type, true);
        }
        let rknn = self.target == super::Target::Rknn;
        let raw: Vec<u8> = match T::try_from(elem_type).ok()? {
            T::Float if rknn => (-65504f32).to_le_bytes().to_vec(),
            T::Double if rknn => (-65504f64).to_le_bytes().to_vec(),
            T::Float => f32::MIN.to_le_bytes().to_vec(),
            T::Double => f64::MIN.to_le_bytes().to_vec(),
            T::Float16 => 0xfbffu16.to_le_bytes().to_vec(),
            T::Bfloat16 => 0xff7fu16.to_le_bytes().to_vec(),
            _ => return None,
        };
        Some(self.initializer(elem_type, &[], raw))
    }

    /// The model's ONNX opset.
    pub fn opset(&self) -> i64 {
        self.opset
    }

    /// A scalar int64 constant.
    pub fn scalar(&mut self, value: i64) -> String {
        self.initializer(DataType::Int64 as i32, &[], value.to_le_bytes().to_vec())
    }

    /// A scalar float32 constant.
    pub fn float_scalar(&mut self, value: f32) -> String {
        self.initializer(DataType::Float as i32, &[], value.to_le_bytes().to_vec())
    }

    /// A scalar bool constant.
    pub fn bool_scalar(&mut self, value: bool) -> String {
        self.initializer(DataType::Bool as i32, &[], vec![u8::from(value)])
    }

    /// A scalar index constant: int32 or int64 (`index_type`).
    pub fn index_scalar(&mut self, value: i64, index_type: DataType) -> String {
        if index_type == DataType::Int32 {
            let value = i32::try_from(value).expect("int32 indices are chosen for small sizes");
            return self.initializer(DataType::Int32 as i32, &[], value.to_le_bytes().to_vec());
        }
        self.scalar(value)
    }

    /// A scalar zero of `elem_type` (all bits clear: 0, 0.0, false), or `None` for strings.
    pub fn zero(&mut self, elem_type: i32) -> Option<String> {
        let size = element_size(elem_type)?;
        Some(self.initializer(elem_type, &[], vec![0; size]))
    }

    /// A scalar one of `elem_type` (a product's identity); `None` for bool, strings, complex.
    pub fn one(&mut self, elem_type: i32) -> Option<String> {
        use DataType as T;
        let raw: Vec<u8> = match T::try_from(elem_type).ok()? {
            T::Float => 1f32.to_le_bytes().to_vec(),
            T::Double => 1f64.to_le_bytes().to_vec(),
            T::Float16 => 0x3c00u16.to_le_bytes().to_vec(),
            T::Bfloat16 => 0x3f80u16.to_le_bytes().to_vec(),
            T::Bool | T::String | T::Complex64 | T::Complex128 | T::Undefined => return None,
            _ => {
                let mut raw = vec![0; element_size(elem_type)?];
                raw[0] = 1;
                raw
            }
        };
        Some(self.initializer(elem_type, &[], raw))
    }

    /// The identity of a sum in `elem_type`: -0.0 for floats (so that a sum of -0.0 stays
    /// -0.0), 0 for integers; `None` for strings and bool.
    pub fn sum_identity(&mut self, elem_type: i32) -> Option<String> {
        use DataType as T;
        let mut raw = vec![0; element_size(elem_type)?];
        match T::try_from(elem_type).ok()? {
            T::Float | T::Double | T::Float16 | T::Bfloat16 => {
                *raw.last_mut()? = 0x80;
            }
            T::Bool | T::Complex64 | T::Complex128 => return None,
            _ => {}
        }
        Some(self.initializer(elem_type, &[], raw))
    }

    /// The lowest (or highest) value of `elem_type` as a scalar: -inf/+inf for floats, the
    /// integer range's ends; `None` for bool, strings and complex.
    pub fn extreme(&mut self, elem_type: i32, lowest: bool) -> Option<String> {
        use DataType as T;
        let raw: Vec<u8> = match (T::try_from(elem_type).ok()?, lowest) {
            (T::Float, true) => f32::NEG_INFINITY.to_le_bytes().to_vec(),
            (T::Float, false) => f32::INFINITY.to_le_bytes().to_vec(),
            (T::Double, true) => f64::NEG_INFINITY.to_le_bytes().to_vec(),
            (T::Double, false) => f64::INFINITY.to_le_bytes().to_vec(),
            (T::Float16, true) => 0xfc00u16.to_le_bytes().to_vec(),
            (T::Float16, false) => 0x7c00u16.to_le_bytes().to_vec(),
            (T::Bfloat16, true) => 0xff80u16.to_le_bytes().to_vec(),
            (T::Bfloat16, false) => 0x7f80u16.to_le_bytes().to_vec(),
            (T::Int8, l) => (if l { i8::MIN } else { i8::MAX }).to_le_bytes().to_vec(),
            (T::Uint8, l) => (if l { u8::MIN } else { u8::MAX }).to_le_bytes().to_vec(),
            (T::Int16, l) => (if l { i16::MIN } else { i16::MAX }).to_le_bytes().to_vec(),
            (T::Uint16, l) => (if l { u16::MIN } else { u16::MAX }).to_le_bytes().to_vec(),
            (T::Int32, l) => (if l { i32::MIN } else { i32::MAX }).to_le_bytes().to_vec(),
            (T::Uint32, l) => (if l { u32::MIN } else { u32::MAX }).to_le_bytes().to_vec(),
            (T::Int64, l) => (if l { i64::MIN } else { i64::MAX }).to_le_bytes().to_vec(),
            (T::Uint64, l) => (if l { u64::MIN } else { u64::MAX }).to_le_bytes().to_vec(),
            _ => return None,
        };
        Some(self.initializer(elem_type, &[], raw))
    }

    pub fn cast(&mut self, x: &str, to: DataType) -> String {
        self.op("Cast", &[x], vec![int_attr("to", to as i64)])
    }

    /// Reshape to fixed `shape`. A 0 in a Reshape's shape copies the input's size unless
    /// `allowzero` (opset 14): from 14 it is set where a size is 0; before, the first 0 becomes
    /// -1 (the element count is 0 then, so -1 is 0).
    pub fn reshape(&mut self, x: &str, shape: &[i64]) -> String {
        if !shape.contains(&0) {
            let shape = self.ints(shape);
            return self.op("Reshape", &[x, &shape], vec![]);
        }
        if self.opset >= 14 {
            let shape = self.ints(shape);
            return self.op("Reshape", &[x, &shape], vec![int_attr("allowzero", 1)]);
        }
        let mut shape = shape.to_vec();
        if let Some(first) = shape.iter_mut().find(|d| **d == 0) {
            *first = -1;
        }
        let shape = self.ints(&shape);
        self.op("Reshape", &[x, &shape], vec![])
    }

    /// Unsqueeze at `axes`: an attribute before opset 13, an input from it.
    pub fn unsqueeze(&mut self, x: &str, axes: &[i64]) -> String {
        if self.opset < 13 {
            return self.op("Unsqueeze", &[x], vec![ints_attr("axes", axes)]);
        }
        let axes = self.ints(axes);
        self.op("Unsqueeze", &[x, &axes], vec![])
    }

    /// ReduceSum over `axes`: an attribute before opset 13, an input from it.
    pub fn reduce_sum(&mut self, x: &str, axes: &[i64], keepdims: bool) -> String {
        let keep = int_attr("keepdims", i64::from(keepdims));
        if self.opset < 13 {
            return self.op("ReduceSum", &[x], vec![ints_attr("axes", axes), keep]);
        }
        let axes = self.ints(axes);
        self.op("ReduceSum", &[x, &axes], vec![keep])
    }

    /// The sum of every element, as a scalar (ReduceSum with no axes reduces them all).
    pub fn sum_all(&mut self, x: &str) -> String {
        self.op("ReduceSum", &[x], vec![int_attr("keepdims", 0)])
    }

    /// `x[start:end]` along axis 0 of a 1-D tensor.
    pub fn slice1(&mut self, x: &str, start: i64, end: i64) -> String {
        let (s, e) = (self.ints(&[start]), self.ints(&[end]));
        self.op("Slice", &[x, &s, &e], vec![])
    }

    pub fn concat(&mut self, inputs: &[&str], axis: i64) -> String {
        self.op("Concat", inputs, vec![int_attr("axis", axis)])
    }

    /// The inclusive prefix sum of a 1-D tensor.
    pub fn cumsum(&mut self, x: &str) -> String {
        // CumSum's axis may be int32 or int64, whatever x's type.
        let axis = self.scalar(0);
        self.op("CumSum", &[x, &axis], vec![])
    }

    /// `data[indices]` for 1-D data and indices. GatherElements, which is Gather there: ONNX
    /// Runtime's Gather copies element by element (8.9 ms for 4M int32 indices, against 3.2 ms).
    /// QNN and RKNN get Gather: QNN refuses GatherElements on rank-1 tensors (its CPU backend),
    /// and onnx2tf's tf_converter fails on this Gather ("Expected a symbolic tensor instance"),
    /// so LiteRT keeps GatherElements.
    pub fn gather_1d(&mut self, data: &str, indices: &str) -> String {
        if matches!(self.target, super::Target::Qnn | super::Target::Rknn) {
            return self.op("Gather", &[data, indices], vec![int_attr("axis", 0)]);
        }
        self.op(
            "GatherElements",
            &[data, indices],
            vec![int_attr("axis", 0)],
        )
    }

    /// `[0, 1, .., n - 1]` as int64.
    pub fn range(&mut self, n: i64) -> String {
        let (start, limit, delta) = (self.scalar(0), self.scalar(n), self.scalar(1));
        self.op("Range", &[&start, &limit, &delta], vec![])
    }

    pub fn binary(&mut self, op: &str, a: &str, b: &str) -> String {
        self.op(op, &[a, b], vec![])
    }

    pub fn where_(&mut self, condition: &str, x: &str, y: &str) -> String {
        self.op("Where", &[condition, x, y], vec![])
    }

    /// `Where(condition, x, y)` for values of `elem_type`, through a type ONNX Runtime's Where
    /// has a kernel for (1.17.3: uint8, int32, int64, float16, float, double, string; not bool,
    /// int8, int16, uint16, uint32, uint64, bfloat16): the others are cast there and back,
    /// which keeps every value (bfloat16 and the small integers widen exactly; uint64 and int64
    /// share their bits).
    pub fn select(&mut self, condition: &str, x: &str, y: &str, elem_type: i32) -> String {
        use DataType as T;
        let via = match T::try_from(elem_type) {
            Ok(T::Bool) => T::Uint8,
            Ok(T::Int8 | T::Int16 | T::Uint16 | T::Uint32 | T::Uint64) => T::Int64,
            Ok(T::Bfloat16) => T::Float,
            _ => return self.where_(condition, x, y),
        };
        let (x, y) = (self.cast(x, via), self.cast(y, via));
        let chosen = self.where_(condition, &x, &y);
        let back = T::try_from(elem_type).expect("matched above");
        self.cast(&chosen, back)
    }

    /// Moves the emitted nodes into `graph` before node `at`, and the initializers after the
    /// graph's own. Returns how many nodes went in.
    pub fn insert(self, graph: &mut GraphProto, at: usize) -> usize {
        let count = self.nodes.len();
        graph.node.splice(at..at, self.nodes);
        graph.initializer.extend(self.initializers);
        graph.value_info.extend(self.value_info);
        count
    }
}

impl nonzero_rewrite_graph::forms::OpWriter for Emitter {
    fn op(&mut self, op: &str, inputs: &[&str], attribute: Vec<AttributeProto>) -> String {
        Emitter::op(self, op, inputs, attribute)
    }

    fn ints(&mut self, values: &[i64]) -> String {
        Emitter::ints(self, values)
    }
}
