//! What the graph proves about each tensor's element type and shape, without needing the
//! exporter's `value_info`: declared facts (inputs, initializers, value infos) checked against a
//! forward inference through the ops real exports use, with symbolic sizes ([`Dim`]) and the
//! values of small integer tensors (shape arithmetic: `Shape -> Gather -> Concat -> Reshape`).
//!
//! Every inferred fact assumes only that the op runs without error. Where a declared shape or
//! type disagrees with the inference, the tensor is marked conflicted and neither is trusted.

mod bodies;
mod compute;
mod ctx;
mod declared;
pub mod dim;
mod elementwise;
mod fallback;
mod index;
mod layout;
mod same_count;
mod scope;
mod values;

pub use bodies::{exact_trips, BodyInputs};
pub use ctx::{axis_in, Ctx};
pub use dim::Dim;
pub use layout::shape_range;

use crate::consts::Const;
use crate::graph::{is_onnx_op, tensor_integral, GraphIndex};
use declared::declared;
use nonzero_proto::onnx::{GraphProto, NodeProto, ValueInfoProto};
use std::collections::HashMap;
use std::rc::Rc;

/// The largest size expression kept: terms, and characters of canonical text.
const MAX_TERMS: usize = 64;
const MAX_TEXT: usize = 20_000;

/// Element type and shape of one tensor, each `None` where unknown.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TensorInfo {
    pub elem_type: Option<i32>,
    pub dims: Option<Vec<Dim>>,
}

/// `info` with each size the other rules may rely on. Expressions past a bound become fresh
/// sizes: the proofs compare sizes exporters build from a few convolutions, and the work must
/// stay linear in the graph. A negative number (a malformed model: Pad by more than the axis
/// holds) becomes a fresh size too, so that no rule computes with it (Slice's clamps did).
fn sane_sizes(out: &str, mut info: TensorInfo) -> TensorInfo {
    for (axis, d) in info.dims.iter_mut().flatten().enumerate() {
        let negative = d.as_static().is_some_and(|n| n < 0);
        if negative || d.terms() > MAX_TERMS || d.to_string().len() > MAX_TEXT {
            *d = Dim::fresh(&format!("{out}.{axis}"));
        }
    }
    info
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
                            x.report_text()
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
    /// The concrete values of tensors computed from constants and fixed shapes alone
    /// ([`crate::consts`]); shared, since each body's table starts as a copy of its graph's.
    consts: HashMap<String, Rc<Const>>,
    /// Tensors whose declared type or shape disagrees with the inference: name -> both.
    conflicts: HashMap<String, String>,
    /// The `ai.onnx` opset of this scope: ops are inferred only at since-versions the rewriter
    /// knows (crate::versions).
    opset: Option<i64>,
    /// Set while a Loop body is inferred to prove its carried shapes (bodies.rs): the Loops
    /// nested in it are not proven then, so that the work stays linear in the nesting depth.
    proving_loop: bool,
}

impl ShapeTable {
    /// Everything `graph` declares or implies, on top of `outer` (the enclosing graphs' table).
    pub fn for_graph(
        graph: &GraphProto,
        index: &GraphIndex,
        outer: Option<&ShapeTable>,
        body_inputs: &BodyInputs,
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
            if let Some(v) = tensor_integral(t) {
                table
                    .values
                    .insert(name.clone(), v.into_iter().map(Dim::from).collect());
            }
            if let Some(c) = Const::from_tensor(t) {
                // Bool initializers too (a folded condition).
                if !table.values.contains_key(name) {
                    if let Some(v) = c.integral().filter(|v| v.len() <= values::MAX_VALUES) {
                        table
                            .values
                            .insert(name.clone(), v.into_iter().map(Dim::from).collect());
                    }
                }
                table.consts.insert(name.clone(), Rc::new(c));
            }
        }
        for (position, vi) in graph.input.iter().enumerate() {
            let Some(name) = &vi.name else { continue };
            let mut info = declared(vi).map(|d| d.fill(name)).unwrap_or_default();
            info.dims = body_inputs.dims(position, info.dims);
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

    /// What is known about `name`, borrowed (the pattern search asks often; sizes can be long).
    pub fn info(&self, name: &str) -> Option<&TensorInfo> {
        self.infos.get(name)
    }

    pub fn get(&self, name: &str) -> TensorInfo {
        self.infos.get(name).cloned().unwrap_or_default()
    }

    /// The values of a small integer tensor, when the graph proves them.
    pub fn values(&self, name: &str) -> Option<&[Dim]> {
        self.values.get(name).map(Vec::as_slice)
    }

    /// The concrete value of `name`, when constants and fixed shapes decide it.
    pub fn constant(&self, name: &str) -> Option<&Const> {
        self.consts.get(name).map(Rc::as_ref)
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
        let ctx = Ctx {
            node,
            table: self,
            graph,
            index,
        };
        let known = crate::versions::is_known(op, self.opset);
        let consts = (known && is_onnx_op(node, op))
            .then(|| crate::consts::evaluate(op, &ctx))
            .flatten()
            .filter(|c| c.len() == node.output.len());
        let (infos, values) = if known && is_onnx_op(node, "If") {
            (self.infer_if(node), None)
        } else if known && is_onnx_op(node, "Loop") {
            (bodies::loop_outputs(node, self), None)
        } else if known && is_onnx_op(node, op) {
            (infer_outputs(op, &ctx), values::infer_values(op, &ctx))
        } else {
            (vec![], None)
        };
        // Downstream of a contradiction the declarations are not trusted either.
        let tainted = node.input.iter().find_map(|i| {
            self.conflicts
                .get(i)
                .map(|c| format!("computed from {i}, where {c}"))
        });
        for (slot, out) in node.output.iter().enumerate() {
            if out.is_empty() {
                continue;
            }
            let inferred = match consts.as_ref().map(|c| &c[slot]) {
                Some(c) => TensorInfo {
                    elem_type: Some(c.elem_type),
                    dims: Some(c.dims.iter().map(|&d| Dim::from(d as i64)).collect()),
                },
                None => infos.get(slot).cloned().flatten().unwrap_or_default(),
            };
            if let Some(taint) = &tainted {
                self.conflicts.insert(out.clone(), taint.clone());
                self.infos.insert(out.clone(), sane_sizes(out, inferred));
                continue;
            }
            let declared = declarations.get(out.as_str()).and_then(|vi| declared(vi));
            let info = self.reconcile(out, inferred, declared);
            self.infos.insert(out.clone(), sane_sizes(out, info));
        }
        if let (Some(out), Some(v)) = (node.output.first(), values) {
            if !self.conflicts.contains_key(out) {
                // Sizes that are all numbers are a value too, though the tensor they were read
                // from is not fixed (`Shape(x)[-1]` of an `x` whose first size is a count).
                if !self.consts.contains_key(out) {
                    if let Some(c) = Const::from_sizes(self.get(out), &v) {
                        self.consts.insert(out.clone(), Rc::new(c));
                    }
                }
                self.values.insert(out.clone(), v);
            }
        }
        for (out, c) in node.output.iter().zip(consts.into_iter().flatten()) {
            if out.is_empty() || self.conflicts.contains_key(out) {
                continue;
            }
            if !self.values.contains_key(out) {
                if let Some(v) = c.integral().filter(|v| v.len() <= values::MAX_VALUES) {
                    self.values
                        .insert(out.clone(), v.into_iter().map(Dim::from).collect());
                }
            }
            self.consts.insert(out.clone(), Rc::new(c));
        }
    }

    /// An If's outputs: what both branches agree on (element type, rank, equal sizes), the
    /// other sizes fresh.
    fn infer_if(&self, node: &NodeProto) -> Vec<Option<TensorInfo>> {
        let branch = |name: &str| {
            let g = node
                .attribute
                .iter()
                .find(|a| a.name.as_deref() == Some(name))?
                .g
                .as_ref()?;
            let table =
                ShapeTable::for_graph(g, &GraphIndex::new(g), Some(self), &BodyInputs::Declared);
            Some(
                g.output
                    .iter()
                    .map(|o| table.get(o.name.as_deref().unwrap_or("")))
                    .collect::<Vec<_>>(),
            )
        };
        let (Some(then), Some(other)) = (branch("then_branch"), branch("else_branch")) else {
            return vec![];
        };
        let out = |slot: usize| node.output.get(slot).map_or("", String::as_str);
        then.into_iter()
            .zip(other)
            .enumerate()
            .map(|(slot, (a, b))| {
                let dims = match (a.dims, b.dims) {
                    (Some(x), Some(y)) if x.len() == y.len() => Some(
                        x.into_iter()
                            .zip(y)
                            .enumerate()
                            .map(|(axis, (p, q))| {
                                if p == q {
                                    p
                                } else {
                                    Dim::fresh(&format!("{}.{axis}", out(slot)))
                                }
                            })
                            .collect(),
                    ),
                    _ => None,
                };
                let elem_type = a.elem_type.filter(|_| a.elem_type == b.elem_type);
                Some(TensorInfo { elem_type, dims })
            })
            .collect()
    }
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
    if let Some(info) = elementwise::infer_elementwise(op, ctx) {
        return vec![Some(info)];
    }
    fallback::rank_only(op, ctx).unwrap_or_default()
}
