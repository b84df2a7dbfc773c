//! Following an index tensor back to the `Transpose(NonZero(mask))` it equals.
//!
//! Exporters wrap the transposed NonZero in steps that do not change its values: the dynamo
//! exporter's `Squeeze([1]) -> Max -> Shape -> Expand -> Unsqueeze(-1)` for a 1-D mask,
//! `Slice` or single-output `Split` of the one column of a 1-D mask, `Identity`. [`trace`]
//! proves, one step at a time, that a tensor holds exactly the coordinates of a mask, either as
//! `[nnz, k]` (the transposed NonZero) or, for a 1-D mask, squeezed to `[nnz]`.
//!
//! Columns of a k-D mask's coordinates are followed too, since exporters take them apart and put
//! them back: dynamo's `x[torch.where(c)]` slices each column out (`Slice [i:i+1] -> Squeeze ->
//! Unsqueeze`, or `Gather(axis=1, i) -> Unsqueeze`) and a `Concat(axis=-1)` of all k in order is
//! the whole `[nnz, k]` again. [`trace_column`] gives a single column, for the TorchScript
//! exporter's linear index (nonzero-rewrite-match's `linear_index`).

use crate::graph::{int_attr, ints_attr, is_onnx_op, GraphIndex};
use crate::infer::{ShapeTable, TensorInfo};
use nonzero_proto::onnx::{GraphProto, NodeProto};
use nonzero_rewrite_graph::indexed::IndexedGraph;
use std::cell::Cell;

/// How many value-preserving steps a chain may have (exporters use at most six).
const MAX_STEPS: usize = 12;
/// How many nodes one trace may visit: Expand and Concat branch, so depth alone does not bound
/// the work (a k-column Concat visits k chains).
const MAX_VISITS: usize = 256;

/// What a traced tensor provably holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traced {
    /// The NonZero's input.
    pub mask: String,
    /// The mask's rank (known, at least 1).
    pub mask_rank: usize,
    /// `[nnz]` (a single column) instead of `[nnz, 1]` or `[nnz, mask_rank]`.
    pub squeezed: bool,
    /// For a mask of rank >= 2, the one column held (`[nnz, 1]`, or `[nnz]` when squeezed);
    /// `None`: every column (a 1-D mask's only column is always `None`).
    pub column: Option<usize>,
    /// Output names of the chain's nodes, NonZero first, the traced tensor last.
    pub chain: Vec<String>,
}

/// The graph and what is known about it, for pattern matching.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub graph: &'a GraphProto,
    pub index: &'a GraphIndex,
    pub shapes: &'a ShapeTable,
}

impl<'a> View<'a> {
    /// A graph under edit, for matching: its index is kept current by each edit.
    pub fn of(edited: &'a IndexedGraph<'_>, shapes: &'a ShapeTable) -> View<'a> {
        View {
            graph: edited.graph(),
            index: edited.index(),
            shapes,
        }
    }

    /// True for a default-domain `op` at a since-version the rewriter knows (crate::versions).
    pub fn is_op(&self, node: &NodeProto, op: &str) -> bool {
        is_onnx_op(node, op) && crate::versions::is_known(op, self.shapes.opset())
    }

    pub fn producer(&self, name: &str) -> Option<&'a NodeProto> {
        self.index.producer_of(self.graph, name)
    }

    /// The values of an axes-like operand: the attribute `attr_name`, else input `slot`.
    pub fn axes(&self, node: &NodeProto, attr_name: &str, slot: usize) -> Option<Vec<i64>> {
        match ints_attr(node, attr_name) {
            Ok(Some(v)) => Some(v),
            Ok(None) => self.const_ints(node.input.get(slot)?),
            Err(_) => None,
        }
    }

    /// The integer values of `name` when it is a constant of this graph, or a name a body
    /// captures from an enclosing graph whose values that graph proves (its initializers and
    /// Constants, which exporters put there: the dynamo exporter hoists a branch's constants).
    pub fn const_ints(&self, name: &str) -> Option<Vec<i64>> {
        if let Some(v) = self.index.const_ints(self.graph, name) {
            return Some(v);
        }
        let own = self.index.producer.contains_key(name)
            || self.index.graph_inputs.contains(name)
            || self
                .graph
                .initializer
                .iter()
                .any(|t| t.name.as_deref() == Some(name));
        if own {
            return None;
        }
        self.shapes
            .values(name)?
            .iter()
            .map(|d| d.as_static())
            .collect()
    }
}

/// The rank of the NonZero input `mask`, proven at least 1: from its own shape, else from the
/// NonZero output's declared `[rank, nnz]`.
pub fn mask_rank(view: &View, mask: &str, nonzero_out: &str) -> Option<usize> {
    let from_mask = view.shapes.info(mask).and_then(TensorInfo::rank);
    let from_output = match view
        .shapes
        .info(nonzero_out)
        .and_then(|i| i.dims.as_deref())
    {
        Some([r, _]) => r.as_static().and_then(|r| usize::try_from(r).ok()),
        _ => None,
    };
    // A declared shape that contradicts the inference makes the rank unproven too.
    if view.shapes.conflict(mask).is_some() {
        return None;
    }
    from_mask.or(from_output).filter(|&r| r >= 1)
}

/// True for an axis list naming the second axis of a rank-2 tensor.
fn is_axis_one(axes: &[i64]) -> bool {
    matches!(axes, [1] | [-1])
}

/// True for a single-input, single-output node.
fn unary(node: &NodeProto) -> bool {
    node.input.len() == 1 && node.output.len() == 1
}

impl Traced {
    /// The column held, when it is one column (`[nnz, 1]` or `[nnz]`): a 1-D mask's only one, or
    /// a picked column of a k-D mask's.
    pub fn single_column(&self) -> Option<usize> {
        self.column.or((self.mask_rank == 1).then_some(0))
    }
}

/// `name` as the transposed NonZero of a mask (`[nnz, k]`, or a 1-D mask's squeezed `[nnz]`),
/// through value-preserving steps.
pub fn trace(view: &View, name: &str) -> Option<Traced> {
    trace_at(view, name, 0, &Cell::new(0)).filter(|t| t.column.is_none())
}

/// `name` as one squeezed column `[nnz]` of a mask's coordinates: the traced chain and the column.
pub fn trace_column(view: &View, name: &str) -> Option<(Traced, usize)> {
    let t = trace_at(view, name, 0, &Cell::new(0)).filter(|t| t.squeezed)?;
    let column = t.single_column()?;
    Some((t, column))
}

fn trace_at(view: &View, name: &str, depth: usize, visits: &Cell<usize>) -> Option<Traced> {
    visits.set(visits.get() + 1);
    if depth > MAX_STEPS || visits.get() > MAX_VISITS {
        return None;
    }
    let node = view.producer(name)?;
    let step = |input: &str| trace_at(view, input, depth + 1, visits);
    let extend = |mut t: Traced, squeezed: bool| {
        t.squeezed = squeezed;
        t.chain.push(name.to_string());
        Some(t)
    };
    let pick = |mut t: Traced, column: usize, squeezed: bool| {
        (column < t.mask_rank).then_some(())?;
        t.column = (t.mask_rank > 1).then_some(column);
        t.squeezed = squeezed;
        t.chain.push(name.to_string());
        Some(t)
    };
    let input0 = node.input.first().map(String::as_str).unwrap_or("");
    let op = node.op_type.as_deref().unwrap_or("");
    if !view.is_op(node, op) || input0.is_empty() {
        return None;
    }
    match op {
        "Transpose" if unary(node) => {
            let perm = ints_attr(node, "perm").ok()?;
            // Without perm a Transpose reverses the axes, which for NonZero's rank 2 is [1, 0].
            if !matches!(perm.as_deref(), None | Some([1, 0])) {
                return None;
            }
            let nonzero = view.producer(input0)?;
            let is_nonzero =
                view.is_op(nonzero, "NonZero") && unary(nonzero) && !nonzero.input[0].is_empty();
            if !is_nonzero {
                return None;
            }
            let mask = nonzero.input[0].clone();
            let mask_rank = mask_rank(view, &mask, input0)?;
            Some(Traced {
                mask,
                mask_rank,
                squeezed: false,
                column: None,
                chain: vec![input0.to_string(), name.to_string()],
            })
        }
        // Identity, and Max/Min of a single input, return their input.
        "Identity" | "Max" | "Min" if unary(node) => {
            let t = step(input0)?;
            let squeezed = t.squeezed;
            extend(t, squeezed)
        }
        "Squeeze" if node.output.len() == 1 => {
            let t = step(input0)?;
            let axes = view.axes(node, "axes", 1)?;
            let column = t
                .single_column()
                .filter(|_| !t.squeezed && is_axis_one(&axes))?;
            pick(t, column, true)
        }
        "Unsqueeze" if node.output.len() == 1 => {
            let t = step(input0)?;
            let axes = view.axes(node, "axes", 1)?;
            (t.squeezed && is_axis_one(&axes)).then_some(())?;
            extend(t, false)
        }
        // A Reshape to [-1] of the squeezed column (the dynamo exporter writes it before
        // index_select: `mask.nonzero().squeeze(1)`), or of a 1-D mask's `[nnz, 1]` coordinates
        // (paddle2onnx's `paddle.nonzero(m).flatten()`), is the column.
        "Reshape" if node.input.len() == 2 && node.output.len() == 1 => {
            let t = step(input0)?;
            let shape = view.const_ints(&node.input[1])?;
            let column = t.single_column().filter(|_| shape == [-1])?;
            pick(t, column, true)
        }
        "Split" => {
            // Output i of a split along the columns into one-column pieces is column i (one
            // output: the whole tensor, whatever the split sizes say, as they must sum to it).
            let t = step(input0)?;
            let axis = int_attr(node, "axis").ok()?.unwrap_or(0);
            let at = node.output.iter().position(|o| o == name)?;
            let whole = !t.squeezed && t.column.is_none();
            (whole && matches!(axis, 1 | -1) && split_into_columns(view, node, t.mask_rank)?)
                .then_some(())?;
            pick(t, at, false)
        }
        "Slice" if node.output.len() == 1 => {
            let t = step(input0)?;
            (!t.squeezed && t.column.is_none()).then_some(())?;
            let column = sliced_column(view, node, t.mask_rank)?;
            pick(t, column, false)
        }
        // Gather(axis=1) of a scalar column index: that column, squeezed.
        "Gather" if node.input.len() == 2 && node.output.len() == 1 => {
            let t = step(input0)?;
            let axis = int_attr(node, "axis").ok()?.unwrap_or(0);
            let scalar = view.shapes.info(&node.input[1]).and_then(TensorInfo::rank) == Some(0);
            let index = view.const_ints(&node.input[1])?;
            let whole = !t.squeezed && t.column.is_none();
            let column = match index.as_slice() {
                [i] if *i >= 0 => usize::try_from(*i).ok()?,
                [i] => usize::try_from(i + t.mask_rank as i64).ok()?,
                _ => return None,
            };
            (whole && scalar && matches!(axis, 1 | -1)).then_some(())?;
            pick(t, column, true)
        }
        // Concat(axis=-1) of every column in order is the whole `[nnz, k]`.
        "Concat" if node.output.len() == 1 && node.input.len() >= 2 => {
            let axis = int_attr(node, "axis").ok()??;
            let parts: Vec<Traced> = node.input.iter().map(|i| step(i)).collect::<Option<_>>()?;
            let first = parts.first()?.clone();
            let in_order = parts
                .iter()
                .enumerate()
                .all(|(i, p)| p.mask == first.mask && !p.squeezed && p.column == Some(i));
            (matches!(axis, 1 | -1) && in_order && parts.len() == first.mask_rank).then_some(())?;
            let mut whole = first;
            whole.column = None;
            for p in &parts[1..] {
                whole.chain.extend(p.chain.iter().skip(2).cloned());
            }
            extend(whole, false)
        }
        "Expand" if node.input.len() == 2 && node.output.len() == 1 => {
            // Expand(v, Shape(w)) with w provably equal to v is v.
            let t = step(input0)?;
            let shape = view.producer(&node.input[1])?;
            let whole_shape = view.is_op(shape, "Shape")
                && unary(shape)
                && int_attr(shape, "start").ok()?.unwrap_or(0) == 0
                && int_attr(shape, "end").ok()?.is_none();
            let same_values = |w: &str| w == input0 || step(w).is_some_and(|u| same(&u, &t));
            (whole_shape && same_values(&shape.input[0])).then_some(())?;
            let squeezed = t.squeezed;
            extend(t, squeezed)
        }
        _ => None,
    }
}

/// Same mask, same layout.
fn same(a: &Traced, b: &Traced) -> bool {
    a.mask == b.mask && a.squeezed == b.squeezed && a.column == b.column
}

/// True when a Split along axis 1 has one output per column of a `[nnz, rank]` tensor, each of
/// size 1 (or a single output: the whole tensor).
fn split_into_columns(view: &View, node: &NodeProto, rank: usize) -> Option<bool> {
    let outputs = node.output.len();
    if outputs == 1 {
        return Some(true);
    }
    let sizes = match node.input.get(1).filter(|s| !s.is_empty()) {
        Some(s) => Some(view.const_ints(s)?),
        None => ints_attr(node, "split").ok()?,
    };
    Some(outputs == rank && sizes.is_none_or(|s| s.iter().all(|&n| n == 1)))
}

/// The column a Slice of a `[nnz, rank]` tensor keeps: axis 1 from i to i + 1 (or past the
/// last column), step 1, every row.
fn sliced_column(view: &View, node: &NodeProto, rank: usize) -> Option<usize> {
    let (starts, ends, axes, steps) = if node.input.len() == 1 {
        // Opset 1-9: attributes.
        (
            ints_attr(node, "starts").ok()??,
            ints_attr(node, "ends").ok()??,
            ints_attr(node, "axes").ok()?,
            None,
        )
    } else {
        let operand = |slot: usize| match node.input.get(slot) {
            None => Some(None),
            Some(n) if n.is_empty() => Some(None),
            Some(n) => view.const_ints(n).map(Some),
        };
        (operand(1)??, operand(2)??, operand(3)?, operand(4)?)
    };
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or(vec![1; starts.len()]);
    if starts.len() != ends.len() || starts.len() != axes.len() || starts.len() != steps.len() {
        return None;
    }
    let rank = rank as i64;
    let mut column = None;
    for i in 0..starts.len() {
        match axes[i] {
            // The row axis: must take everything.
            0 | -2 if starts[i] == 0 && ends[i] >= i64::from(i32::MAX) && steps[i] == 1 => {}
            1 | -1 if column.is_none() && steps[i] == 1 => {
                let start = if starts[i] < 0 {
                    starts[i] + rank
                } else {
                    starts[i]
                };
                let last = start == rank - 1 && ends[i] >= rank;
                ((0..rank).contains(&start) && (ends[i] == start + 1 || last)).then_some(())?;
                column = Some(start as usize);
            }
            _ => return None,
        }
    }
    column
}
