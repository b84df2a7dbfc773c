//! What a masked write's updates U are, seen through the exporters' wrapping (`crate::writes`).

use super::spread::spread_of;
use super::{dims_of, ends_with};
use crate::graph::int_attr;
use crate::graph::is_float;
use crate::infer::Dim;
use crate::trace::{trace, View};
use nonzero_proto::onnx::NodeProto;
use nonzero_rewrite_analysis::dims::checked_numel;
use nonzero_rewrite_analysis::dims::static_dims;

/// The updates of a masked write, in the form the Where rewrite needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Updates {
    /// U lists the values in selection order: `flatten(list)` (fixed shape, or not: then
    /// the dynamic scan reports it). `len`: its element count, where fixed.
    Listed { list: String, len: Option<i64> },
    /// `U[j] = flatten(Expand(value, tail))[j mod |tail|]`.
    Periodic { value: String, tail: Vec<i64> },
    /// Periodic with the period a whole row of the data, and the write mask selecting whole
    /// rows: every written element is the value broadcast to the data's shape.
    Broadcast { value: String },
    /// `U = flatten(op(rows, other))` (or `op(other, rows)`) where rows are the selected rows
    /// of `source`, in the write mask's order: the data itself (`x[m] += v`), or another tensor
    /// of the data's shape (`out[m] = x[m] * 2`).
    Elementwise {
        op: &'static str,
        source: String,
        other: String,
        /// The other operand's fixed shape (it broadcasts within a row).
        other_dims: Vec<i64>,
        rows_first: bool,
    },
    /// `U = flatten(source[m])` with the write mask selecting m's elements (or its rows whole):
    /// the write copies source where the mask is (`y[m] = x[m]`, VITS's spline writing the
    /// inputs outside its interval), so each written element is source's at its own position.
    Gathered { source: String },
}

impl Updates {
    pub fn text(&self) -> String {
        match self {
            Updates::Listed { list, .. } => format!("U = {list}"),
            Updates::Periodic { value, .. } => format!("U = {value} repeated"),
            Updates::Broadcast { value } => format!("{value} broadcast"),
            Updates::Elementwise {
                op, source, other, ..
            } => format!("{op}({source}, {other})"),
            Updates::Gathered { source } => format!("{source} where selected"),
        }
    }
}

/// Ops of two operands that `x[m] op= v` exports.
const ELEMENTWISE: &[(&str, &str)] = &[
    ("Add", "Add"),
    ("Sub", "Sub"),
    ("Mul", "Mul"),
    ("Div", "Div"),
];

/// U of `ScatterND(data, coordinates of mask, U)`, where `dims` is data's (= mask's) shape.
pub fn updates(view: &View, u: &str, data: &str, mask: &str, dims: &[Dim]) -> Updates {
    let mut current = u.to_string();
    let mut flattened = false;
    for _ in 0..8 {
        let Some(node) = view.producer(&current) else {
            break;
        };
        let op = node.op_type.as_deref().unwrap_or("");
        if !view.is_op(node, op) || node.input.is_empty() {
            break;
        }
        let next = match op {
            "Slice" => slice_from_start(view, node),
            "Reshape" if node.input.len() == 2 => {
                let flat = view.const_ints(&node.input[1]) == Some(vec![-1]);
                flattened |= flat;
                flat.then(|| node.input[0].clone())
            }
            _ => None,
        };
        match next {
            Some(n) => current = n,
            None => break,
        }
    }
    let listed = || {
        let list = if flattened && dims_of(view.shapes, &current).is_some() {
            current.clone()
        } else {
            u.to_string()
        };
        let len = static_dims(view.shapes, &list).and_then(|d| checked_numel(&d));
        Updates::Listed { list, len }
    };
    if let Some(source) = gathered(view, &current, data, mask, dims) {
        return Updates::Gathered { source };
    }
    if !flattened {
        // Expand(v, [count]) of one value v: every update is v.
        let expand = view
            .producer(&current)
            .filter(|n| view.is_op(n, "Expand") && n.input.len() == 2);
        if let Some(expand) = expand {
            let one_value = static_dims(view.shapes, &expand.input[0])
                .is_some_and(|d| d.iter().product::<i64>() == 1);
            if one_value && expanded_tail(view, &expand.input[1]) == Some(vec![]) {
                return Updates::Periodic {
                    value: expand.input[0].clone(),
                    tail: vec![1],
                };
            }
        }
        return listed();
    }
    let mut base = current.clone();
    let mut tail = None;
    if let Some(expand) = view
        .producer(&current)
        .filter(|n| view.is_op(n, "Expand") && n.input.len() == 2)
    {
        if let Some(t) = expanded_tail(view, &expand.input[1]) {
            base = expand.input[0].clone();
            tail = Some(t);
        }
    }
    if let Some(e) = elementwise(view, &base, data, mask, dims) {
        // Expand of the rows to [count, row shape] is the rows themselves wherever the original
        // runs (see docs/static.md); another tail is not.
        let row_tail = tail
            .as_deref()
            .is_none_or(|t| ends_with(dims, t) && !t.is_empty() || t.is_empty());
        if row_tail {
            return e;
        }
    }
    if let (Some(tail), Some(value_dims)) = (tail, static_dims(view.shapes, &base)) {
        let broadcasts = value_dims.len() <= tail.len()
            && value_dims
                .iter()
                .rev()
                .zip(tail.iter().rev())
                .all(|(&v, &t)| v == 1 || v == t);
        if broadcasts && tail.iter().all(|&t| t > 0) {
            // The k-th selected element is element k mod |row| of its row when the mask selects
            // whole rows and a row is the period: the value at the element's own column.
            let row_rank = dims.len().saturating_sub(tail.len());
            let whole_rows = ends_with(dims, &tail)
                && row_mask(view, mask).is_some_and(|rows| {
                    dims_of(view.shapes, &rows).map(|d| d.len()) == Some(row_rank)
                        && selects_rows(view, mask, &rows, row_rank, dims)
                });
            if whole_rows {
                return Updates::Broadcast { value: base };
            }
            return Updates::Periodic { value: base, tail };
        }
    }
    listed()
}

/// W when `node` is `Slice(W, [0], end)` along axis 0 with step 1: W's first elements.
pub fn slice_from_start(view: &View, node: &NodeProto) -> Option<String> {
    if !view.is_op(node, "Slice") || node.input.len() < 3 {
        return None;
    }
    let ints = |slot: usize| {
        node.input
            .get(slot)
            .filter(|n| !n.is_empty())
            .map(|n| view.const_ints(n))
    };
    let starts_at_zero = ints(1) == Some(Some(vec![0]));
    let axis_zero = ints(3).is_none_or(|a| a == Some(vec![0]));
    let step_one = ints(4).is_none_or(|s| s == Some(vec![1]));
    (starts_at_zero && axis_zero && step_one).then(|| node.input[0].clone())
}

/// The fixed sizes after the first of an Expand's shape `Concat(count, s1, s2, ..)`, or none
/// when the shape is the one count itself.
fn expanded_tail(view: &View, shape: &str) -> Option<Vec<i64>> {
    if static_dims(view.shapes, shape)? == [1] {
        return Some(vec![]);
    }
    let concat = view.producer(shape).filter(|n| view.is_op(n, "Concat"))?;
    if int_attr(concat, "axis").ok()?.unwrap_or(0) != 0 {
        return None;
    }
    let mut pieces = vec![];
    for (slot, input) in concat.input.iter().enumerate() {
        if slot == 0 {
            // The count: any one value.
            (static_dims(view.shapes, input)? == [1]).then_some(())?;
            continue;
        }
        for v in view.shapes.values(input)? {
            pieces.push(v.as_static()?);
        }
    }
    Some(pieces)
}

/// `op(GatherND(data, coordinates of m), other)` with the write mask selecting m's rows whole.
fn elementwise(view: &View, name: &str, data: &str, mask: &str, dims: &[Dim]) -> Option<Updates> {
    let node = view.producer(name)?;
    let op = ELEMENTWISE.iter().find(|(o, _)| view.is_op(node, o))?.1;
    if node.input.len() != 2 {
        return None;
    }
    // The op on the whole data would divide elements the write leaves: an integer division by
    // a zero there fails (ONNX Runtime refuses it), where the original divides none of them.
    let integer = view.shapes.get(data).elem_type.is_none_or(|e| !is_float(e));
    if op == "Div" && integer {
        return None;
    }
    let (rows_first, (source, rows), other) = match (
        gathered_mask(view, &node.input[0], data),
        gathered_mask(view, &node.input[1], data),
    ) {
        (Some(m), None) => (true, m, &node.input[1]),
        (None, Some(m)) => (false, m, &node.input[0]),
        _ => return None,
    };
    let row_rank = dims_of(view.shapes, &rows)?.len();
    let other_dims = static_dims(view.shapes, other)?;
    // The other operand broadcasts within a row, never along the selection.
    let within_row = other_dims.len() <= dims.len() - row_rank
        && other_dims
            .iter()
            .rev()
            .zip(dims.iter().rev())
            .all(|(&o, d)| o == 1 || Dim::from_static(o) == *d);
    (within_row && selects_rows(view, mask, &rows, row_rank, dims)).then(|| Updates::Elementwise {
        op,
        source,
        other: other.clone(),
        other_dims,
        rows_first,
    })
}

/// source when `name` is `GatherND(source, coordinates of m)` (source of data's shape) and the
/// write mask selects m's elements, or m's rows whole: the k-th update is then source's value
/// at the k-th written position.
fn gathered(view: &View, name: &str, data: &str, mask: &str, dims: &[Dim]) -> Option<String> {
    let (source, rows) = gathered_mask(view, name, data)?;
    let row_rank = dims_of(view.shapes, &rows)?.len();
    selects_rows(view, mask, &rows, row_rank, dims).then_some(source)
}

/// (source, m) when `name` is `GatherND(source, coordinates of m)`, source of data's shape
/// (proven equal sizes) and m its leading dims.
fn gathered_mask(view: &View, name: &str, data: &str) -> Option<(String, String)> {
    let g = view
        .producer(name)
        .filter(|n| view.is_op(n, "GatherND") && n.input.len() == 2)?;
    if int_attr(g, "batch_dims").ok()?.unwrap_or(0) != 0 {
        return None;
    }
    let data_dims = dims_of(view.shapes, data)?;
    if g.input[0] != data && dims_of(view.shapes, &g.input[0])? != data_dims {
        return None;
    }
    let t = trace(view, &g.input[1]).filter(|t| !t.squeezed)?;
    let mask_dims = dims_of(view.shapes, &t.mask)?;
    data_dims
        .starts_with(&mask_dims)
        .then(|| (g.input[0].clone(), t.mask))
}

/// The row mask m and its rank when the write mask is m spread over whole rows of the data:
/// `Expand(Unsqueeze(m, trailing axes), data's shape)` (torch's `x[m] = v` with m [n]).
pub fn expanded_rows(view: &View, mask: &str, dims: &[Dim]) -> Option<(String, usize)> {
    let rows = row_mask(view, mask)?;
    let row_rank = dims_of(view.shapes, &rows)?.len();
    (row_rank < dims.len() && selects_rows(view, mask, &rows, row_rank, dims))
        .then_some((rows, row_rank))
}

/// The row mask m of a write mask `Expand(Unsqueeze(m, axes), shape)`, or of the spread the
/// default mode writes for it (super::spread).
fn row_mask(view: &View, mask: &str) -> Option<String> {
    if let Some(spread) = spread_of(view, mask) {
        return Some(spread.rows);
    }
    let expand = view
        .producer(mask)
        .filter(|n| view.is_op(n, "Expand") && n.input.len() == 2)?;
    let unsqueeze = view
        .producer(&expand.input[0])
        .filter(|n| view.is_op(n, "Unsqueeze"))?;
    unsqueeze.input.first().cloned()
}

/// True when the write mask is the row mask `rows` expanded over each row:
/// `Expand(Unsqueeze(rows, trailing axes), Shape(data) or data's dims)`, or `rows` itself.
fn selects_rows(view: &View, mask: &str, rows: &str, row_rank: usize, dims: &[Dim]) -> bool {
    if mask == rows {
        return row_rank == dims.len();
    }
    if let Some(spread) = spread_of(view, mask) {
        let row = dims
            .get(row_rank..)
            .and_then(|d| d.iter().map(Dim::as_static).collect::<Option<Vec<_>>>())
            .and_then(|d| checked_numel(&d));
        return spread.rows == rows
            && row == Some(spread.row)
            && dims_of(view.shapes, rows).as_deref() == dims.get(..row_rank)
            && view.shapes.values(&spread.shape) == Some(dims);
    }
    let Some(expand) = view
        .producer(mask)
        .filter(|n| view.is_op(n, "Expand") && n.input.len() == 2)
    else {
        return false;
    };
    if row_rank == dims.len() {
        // Expand(rows, Shape(data)) of rows already of data's shape is rows.
        return expand.input[0] == rows;
    }
    let Some(unsqueeze) = view
        .producer(&expand.input[0])
        .filter(|n| view.is_op(n, "Unsqueeze"))
    else {
        return false;
    };
    let rank = dims.len() as i64;
    let axes = view.axes(unsqueeze, "axes", 1).map(|a| {
        let mut a: Vec<i64> = a
            .iter()
            .map(|&x| if x < 0 { x + rank } else { x })
            .collect();
        a.sort_unstable();
        a
    });
    let trailing: Vec<i64> = (row_rank as i64..rank).collect();
    let shape_is_data = view.shapes.values(&expand.input[1]) == Some(dims);
    unsqueeze.input[0] == rows && axes.as_deref() == Some(trailing.as_slice()) && shape_is_data
}
