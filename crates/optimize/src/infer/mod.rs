//! What the graph proves about each tensor's element type and shape, without needing the
//! exporter's `value_info`: declared facts (inputs, initializers, value infos) checked against a
//! forward inference through the ops real exports use, with symbolic sizes ([`Dim`]) and the
//! values of small integer tensors (shape arithmetic: `Shape -> Gather -> Concat -> Reshape`).
//!
//! Every inferred fact assumes only that the op runs without error. Where a declared shape or
//! type disagrees with the inference, the tensor is marked conflicted and neither is trusted.

mod compute;
pub mod dim;
mod elementwise;
mod index;
mod layout;
mod values;

pub use dim::Dim;

use crate::graph::{int_attr, is_onnx_op, tensor_ints, GraphIndex};
use nonzero_proto::onnx::tensor_shape_proto::dimension::Value as DimValue;
use nonzero_proto::onnx::{type_proto, GraphProto, NodeProto, ValueInfoProto};
use std::collections::HashMap;

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

    /// The shape as text for reports: `[N, 4]`, `[?]`, or `unknown rank`.
    pub fn shape_text(&self) -> String {
        match &self.dims {
            None => "unknown rank".to_string(),
            Some(d) => {
                let parts: Vec<String> = d
                    .iter()
                    .map(|x| {
                        if x.is_unknown() {
                            "?".into()
                        } else {
                            x.to_string()
                        }
                    })
                    .collect();
                format!("[{}]", parts.join(", "))
            }
        }
    }
}

/// Tensor name -> what is known about it.
#[derive(Debug, Clone, Default)]
pub struct ShapeTable {
    infos: HashMap<String, TensorInfo>,
    /// The values of small integer tensors, flattened (shapes, axes, sizes).
    values: HashMap<String, Vec<Dim>>,
    /// Tensors whose declared type or shape disagrees with the inference: name -> both.
    conflicts: HashMap<String, String>,
}

/// How far a subgraph's own inputs can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyInputs {
    /// The main graph, If branches (no inputs), functions: as declared.
    Declared,
    /// Loop and Scan bodies: loop-carried values change shape between iterations, so their
    /// declared shapes are not used (element types are).
    ElementTypeOnly,
}

impl ShapeTable {
    /// Everything `graph` declares or implies, on top of `outer` (the enclosing graphs' table).
    pub fn for_graph(
        graph: &GraphProto,
        index: &GraphIndex,
        outer: Option<&ShapeTable>,
        body_inputs: BodyInputs,
    ) -> Self {
        let mut table = outer.cloned().unwrap_or_default();
        for t in &graph.initializer {
            let Some(name) = &t.name else { continue };
            if index.graph_inputs.contains(name) {
                continue;
            }
            table.infos.insert(
                name.clone(),
                TensorInfo {
                    elem_type: t.data_type,
                    dims: Some(t.dims.iter().map(|&d| Dim::from(d)).collect()),
                },
            );
            if let Some(v) = tensor_ints(t) {
                table
                    .values
                    .insert(name.clone(), v.into_iter().map(Dim::from).collect());
            }
        }
        for vi in &graph.input {
            let Some(name) = &vi.name else { continue };
            let mut info = declared(vi).map(|d| d.fill(name)).unwrap_or_default();
            if body_inputs == BodyInputs::ElementTypeOnly {
                info.dims = None;
            }
            table.infos.insert(name.clone(), info);
        }
        let declarations: HashMap<&str, &ValueInfoProto> = graph
            .value_info
            .iter()
            .chain(&graph.output)
            .filter_map(|vi| Some((vi.name.as_deref()?, vi)))
            .collect();
        for node in &graph.node {
            table.infer_node(node, graph, index, &declarations);
        }
        table
    }

    /// The inputs of a function body as one call site knows them (`None`: nothing known).
    /// Sizes that only the caller's graph can name become fresh sizes of the body.
    pub fn for_call(inputs: &[String], site: Option<&[TensorInfo]>, label: &str) -> Self {
        let mut table = ShapeTable::default();
        for (slot, name) in inputs.iter().enumerate() {
            let info = site.and_then(|s| s.get(slot)).cloned().unwrap_or_default();
            let dims = info.dims.map(|d| {
                d.into_iter()
                    .enumerate()
                    .map(|(axis, x)| match x.mentions_fresh() {
                        true => Dim::fresh(&format!("@{label}:{slot}.{axis}")),
                        false => x,
                    })
                    .collect()
            });
            let info = TensorInfo {
                elem_type: info.elem_type,
                dims,
            };
            table.infos.insert(name.clone(), info);
        }
        table
    }

    pub fn get(&self, name: &str) -> TensorInfo {
        self.infos.get(name).cloned().unwrap_or_default()
    }

    /// The values of a small integer tensor, when the graph proves them.
    pub fn values(&self, name: &str) -> Option<&[Dim]> {
        self.values.get(name).map(Vec::as_slice)
    }

    /// What disagreed, when `name`'s declared type or shape contradicts the inference.
    pub fn conflict(&self, name: &str) -> Option<&str> {
        self.conflicts.get(name).map(String::as_str)
    }

    fn infer_node(
        &mut self,
        node: &NodeProto,
        graph: &GraphProto,
        index: &GraphIndex,
        declarations: &HashMap<&str, &ValueInfoProto>,
    ) {
        let op = node.op_type.as_deref().unwrap_or("");
        let inferred = if is_onnx_op(node, op) {
            let ctx = Ctx {
                node,
                table: self,
                graph,
                index,
            };
            let infos = infer_outputs(op, &ctx);
            let values = values::infer_values(op, &ctx);
            (infos, values)
        } else {
            (vec![], None)
        };
        let (infos, values) = inferred;
        for (slot, out) in node.output.iter().enumerate() {
            if out.is_empty() {
                continue;
            }
            let inferred = infos.get(slot).cloned().flatten().unwrap_or_default();
            let declared = declarations.get(out.as_str()).and_then(|vi| declared(vi));
            let info = self.reconcile(out, inferred, declared);
            self.infos.insert(out.clone(), info);
        }
        if let (Some(out), Some(v)) = (node.output.first(), values) {
            if !self.conflicts.contains_key(out) {
                self.values.insert(out.clone(), v);
            }
        }
    }

    /// The inferred facts, completed by the declared ones; a disagreement (different element
    /// types, ranks or static sizes, or two different proven sizes) leaves the tensor unknown.
    fn reconcile(
        &mut self,
        name: &str,
        inferred: TensorInfo,
        declared: Option<Declared>,
    ) -> TensorInfo {
        let Some(declared) = declared else {
            return inferred;
        };
        let mut conflict = false;
        let elem_type = match (inferred.elem_type, declared.elem_type) {
            (Some(a), Some(b)) if a != b => {
                conflict = true;
                None
            }
            (a, b) => a.or(b),
        };
        let dims = match (&inferred.dims, &declared.dims) {
            (None, Some(_)) => Some(declared.clone().fill(name).dims.unwrap_or_default()),
            (Some(i), Some(d)) if i.len() != d.len() => {
                conflict = true;
                None
            }
            (Some(i), Some(d)) => Some(
                i.iter()
                    .zip(d)
                    .enumerate()
                    .map(|(axis, (i, d))| match d {
                        None => i.clone(),
                        Some(d) if d == i => i.clone(),
                        Some(d) if i.is_unknown() => d.clone(),
                        // Two different numbers: provably contradictory.
                        Some(d) if d.as_static().is_some() && i.as_static().is_some() => {
                            conflict = true;
                            Dim::fresh(&format!("{name}.{axis}"))
                        }
                        // A name against a proven size: not a contradiction; the proof wins.
                        Some(_) => i.clone(),
                    })
                    .collect(),
            ),
            (dims, None) => dims.clone(),
        };
        if conflict {
            self.conflicts.insert(
                name.to_string(),
                format!(
                    "declared {} but inferred {}",
                    declared.fill(name).shape_text(),
                    inferred.shape_text()
                ),
            );
            // Trust neither: keep only the rank both agree on, with unknown sizes.
            let rank = dims.as_ref().map(Vec::len);
            return TensorInfo {
                elem_type,
                dims: rank.map(|r| (0..r).map(|a| Dim::fresh(&format!("{name}.{a}"))).collect()),
            };
        }
        TensorInfo { elem_type, dims }
    }
}

/// A declared tensor type: sizes are `None` where the declaration names none.
#[derive(Debug, Clone)]
struct Declared {
    elem_type: Option<i32>,
    dims: Option<Vec<Option<Dim>>>,
}

impl Declared {
    /// As a [`TensorInfo`], unnamed sizes becoming fresh sizes of `name`.
    fn fill(self, name: &str) -> TensorInfo {
        TensorInfo {
            elem_type: self.elem_type,
            dims: self.dims.map(|d| {
                d.into_iter()
                    .enumerate()
                    .map(|(axis, x)| x.unwrap_or_else(|| Dim::fresh(&format!("{name}.{axis}"))))
                    .collect()
            }),
        }
    }
}

/// The tensor type a value info declares.
fn declared(vi: &ValueInfoProto) -> Option<Declared> {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref()?.value.as_ref() else {
        return None;
    };
    let dims = t.shape.as_ref().map(|s| {
        s.dim
            .iter()
            .map(|d| match &d.value {
                Some(DimValue::DimValue(v)) if *v >= 0 => Some(Dim::from(*v)),
                Some(DimValue::DimParam(p)) if !p.is_empty() => Some(Dim::param(p)),
                _ => None,
            })
            .collect()
    });
    Some(Declared {
        elem_type: t.elem_type.filter(|&e| e != 0),
        dims,
    })
}

/// One node under inference: its inputs' facts and its constant operands.
pub struct Ctx<'a> {
    pub node: &'a NodeProto,
    pub table: &'a ShapeTable,
    pub graph: &'a GraphProto,
    pub index: &'a GraphIndex,
}

impl Ctx<'_> {
    /// What is known about input `slot` (nothing for a missing or empty input).
    pub fn input(&self, slot: usize) -> TensorInfo {
        match self.node.input.get(slot) {
            Some(n) if !n.is_empty() => self.table.get(n),
            _ => TensorInfo::default(),
        }
    }

    pub fn dims(&self, slot: usize) -> Option<Vec<Dim>> {
        self.input(slot).dims
    }

    pub fn elem(&self, slot: usize) -> Option<i32> {
        self.input(slot).elem_type
    }

    /// True when input `slot` is given (present and not empty).
    pub fn has_input(&self, slot: usize) -> bool {
        self.node.input.get(slot).is_some_and(|n| !n.is_empty())
    }

    /// The proven values of input `slot`.
    pub fn values(&self, slot: usize) -> Option<Vec<Dim>> {
        let name = self.node.input.get(slot).filter(|n| !n.is_empty())?;
        self.table.values(name).map(<[Dim]>::to_vec)
    }

    /// The static integer values of input `slot`.
    pub fn static_ints(&self, slot: usize) -> Option<Vec<i64>> {
        self.values(slot)?.iter().map(Dim::as_static).collect()
    }

    /// An INTS attribute, else (newer opsets) the static values of input `slot`.
    pub fn ints_or_input(&self, attr: &str, slot: usize) -> Option<Option<Vec<i64>>> {
        match crate::graph::ints_attr(self.node, attr) {
            Ok(Some(v)) => Some(Some(v)),
            Ok(None) if self.has_input(slot) => self.static_ints(slot).map(Some),
            Ok(None) => Some(None),
            Err(()) => None,
        }
    }

    /// An INT attribute with its default (`None` when present but malformed).
    pub fn int(&self, name: &str, default: i64) -> Option<i64> {
        int_attr(self.node, name).ok().map(|v| v.unwrap_or(default))
    }

    /// A fresh size for axis `axis` of output `slot`.
    pub fn fresh(&self, slot: usize, axis: usize) -> Dim {
        let out = self.node.output.get(slot).map_or("", String::as_str);
        Dim::fresh(&format!("{out}.{axis}"))
    }
}

/// Normalises `axis` for `rank`, `None` when out of range.
pub fn axis_in(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

/// What each output of `op` is, as far as proven (`None` entries unknown).
fn infer_outputs(op: &str, ctx: &Ctx) -> Vec<Option<TensorInfo>> {
    if let Some(info) = index::infer_indexing(op, ctx) {
        return vec![Some(info)];
    }
    if let Some(infos) = layout::infer_layout(op, ctx) {
        return infos;
    }
    if let Some(infos) = compute::infer_compute(op, ctx) {
        return infos;
    }
    elementwise::infer_elementwise(op, ctx).map_or_else(Vec::new, |i| vec![Some(i)])
}
