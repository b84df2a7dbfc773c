//! The single steps of `follow`: which ops are elementwise, which column a node takes, the
//! axes a reduction reduces, and dynamo's `Expand(p, Shape(Max(p)))` identity.

use crate::graph::{int_attr, is_float};
use crate::trace::View;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;

/// ONNX's bool element type.
pub(super) const BOOL: i32 = nonzero_proto::onnx::tensor_proto::DataType::Bool as i32;
pub(super) const INT64: i32 = nonzero_proto::onnx::tensor_proto::DataType::Int64 as i32;

/// Ops of one input whose output element depends only on the same input element.
pub(crate) const UNARY: &[&str] = &[
    "Identity",
    "Cast",
    "Neg",
    "Abs",
    "Relu",
    "Sigmoid",
    "Tanh",
    "Exp",
    "Log",
    "Sqrt",
    "Floor",
    "Ceil",
    "Round",
    "Sign",
    "Not",
    "Reciprocal",
    "Erf",
    "Sin",
    "Cos",
    "IsNaN",
    "IsInf",
    "Softplus",
    "LeakyRelu",
    "Elu",
    "Selu",
    "HardSigmoid",
];
/// Elementwise ops of two inputs (broadcasting).
pub(crate) const BINARY: &[&str] = &[
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "And",
    "Or",
    "Xor",
    "Equal",
    "Less",
    "Greater",
    "LessOrEqual",
    "GreaterOrEqual",
    // Max and Min of two (a clamp to fixed bounds); of one input they are that input.
    "Max",
    "Min",
    "Mod",
];

/// The reduced axes of a reduction reading a rank-`rank` tensor, normalized and sorted; `None`
/// when they are not constant.
pub(super) fn reduced_axes(view: &View, node: &NodeProto, rank: usize) -> Option<Vec<usize>> {
    let axes = view.axes(node, "axes", 1);
    let noop = int_attr(node, "noop_with_empty_axes").ok()?.unwrap_or(0) == 1;
    let axes = match axes {
        Some(a) if !a.is_empty() => a,
        Some(_) | None if noop => return Some(vec![]),
        _ => (0..rank as i64).collect(),
    };
    let mut axes: Vec<usize> = axes
        .iter()
        .map(|&a| usize::try_from(if a < 0 { a + rank as i64 } else { a }).ok())
        .collect::<Option<_>>()?;
    axes.sort_unstable();
    axes.dedup();
    axes.iter().all(|&a| a < rank).then_some(axes)
}

/// The one column a node takes of `[C, k]` coordinates along axis 1 (`along` 1), or the one
/// row of `[k, C]` coordinates along axis 0 (`along` 0: NonZero's own layout, dynamo's
/// `unbind`): Split with one output, a Slice of width 1, or Gather of a constant index,
/// keeping rank 2 or (Gather of a scalar) dropping it.
pub(super) fn column_step(view: &View, node: &NodeProto, op: &str, along: i64) -> Option<usize> {
    let is_along = |axis: i64| axis == along || axis == along - 2;
    match op {
        "Split" => {
            let axis = int_attr(node, "axis").ok()?.unwrap_or(0);
            is_along(axis).then_some(2)
        }
        "Slice" if node.input.len() >= 4 => {
            let ints = |slot: usize| match node.input.get(slot).filter(|n| !n.is_empty()) {
                Some(n) => view.const_ints(n),
                None => Some(vec![1]),
            };
            let (starts, ends, axes, steps) = (ints(1)?, ints(2)?, ints(3)?, ints(4)?);
            // Columns s..e (an NMS's batch and class columns, say), each padded with -1.
            let columns =
                matches!((starts.as_slice(), ends.as_slice()), ([s], [e]) if *s >= 0 && e > s);
            (columns && matches!(axes.as_slice(), [a] if is_along(*a)) && steps == [1]).then_some(2)
        }
        "Gather" if node.input.len() == 2 => {
            let axis = int_attr(node, "axis").ok()?.unwrap_or(0);
            let index = view.shapes.values(&node.input[1])?;
            // A scalar index drops the axis; a one-element list keeps it (`[C, 1]`).
            let rank = match view.shapes.get(&node.input[1]).rank() {
                Some(0) => 1,
                Some(1) => 2,
                _ => return None,
            };
            (is_along(axis) && index.len() == 1).then_some(rank)
        }
        _ => None,
    }
}

/// True when `shape` is `Shape(q)` with q = `p` or Max/Min/Identity of one input `p`, and
/// every reader of `shape` is an `Expand(p, shape)`: each such Expand returns p.
pub(super) fn shape_of_self(view: &View, shape: &str, p: &str) -> bool {
    let Some(node) = whole_shape(view, shape) else {
        return false;
    };
    let source = |q: &str| {
        let unary = view.producer(q).filter(|n| {
            matches!(n.op_type.as_deref(), Some("Max" | "Min" | "Identity")) && n.input.len() == 1
        });
        unary.map_or(q.to_string(), |n| n.input[0].clone())
    };
    let origin = source(&node.input[0]);
    let expands = view.index.readers_of(shape).iter().all(|&(r, slot)| {
        let reader = &view.graph.node[r];
        slot == 1 && view.is_op(reader, "Expand") && source(&reader.input[0]) == origin
    });
    expands && (origin == p || source(p) == origin)
}

/// The node writing `shape` when it is a `Shape` of its whole input (no start or end).
pub(super) fn whole_shape<'g>(view: &View<'g>, shape: &str) -> Option<&'g NodeProto> {
    let node = view
        .producer(shape)
        .filter(|n| view.is_op(n, "Shape") && n.input.len() == 1)?;
    let whole = int_attr(node, "start").ok().flatten().unwrap_or(0) == 0
        && int_attr(node, "end").ok().flatten().is_none();
    whole.then_some(node)
}

/// `Slice(x, [0], [L], [axis])` (steps 1, L >= 0) along the padded axis: L.
pub(super) fn prefix(
    view: &View,
    node: &NodeProto,
    op: &str,
    slot: usize,
    axis: usize,
) -> Option<i64> {
    if op != "Slice" || slot != 0 || node.input.len() < 4 {
        return None;
    }
    let rank = view.shapes.get(&node.input[0]).rank()?;
    let ints = |at: usize| match node.input.get(at).filter(|n| !n.is_empty()) {
        Some(n) => view.const_ints(n),
        None => Some(vec![1]),
    };
    let (starts, ends, axes, steps) = (ints(1)?, ints(2)?, ints(3)?, ints(4)?);
    let on_axis = matches!(axes.as_slice(), [a] if crate::infer::axis_in(*a, rank) == Some(axis));
    (on_axis && starts == [0] && steps == [1]).then_some(())?;
    ends.first().filter(|&&l| l >= 0).copied()
}

/// True when `name` is `[C, 1]`.
pub(super) fn width_one(view: &View, name: &str) -> bool {
    let dims = view.shapes.get(name).dims;
    dims.is_some_and(|d| d.len() == 2 && d[1].as_static() == Some(1))
}

/// True when `name` is one row `[1, C]` of coordinates in NonZero's layout.
pub(super) fn width_one_row(view: &View, name: &str) -> bool {
    let dims = view.shapes.get(name).dims;
    dims.is_some_and(|d| d.len() == 2 && d[0].as_static() == Some(1))
}

/// Ops that read padded rows in a slot other than the first: the other operand of a row-wise
/// product, a write's indices and updates, NMS's scores, GridSample's grid.
pub(super) const ROW_OPS: &[&str] = &[
    "GridSample",
    "Gemm",
    "MatMul",
    "ScatterElements",
    "ScatterND",
    "NonMaxSuppression",
    "RoiAlign",
    "Where",
];

/// A reduction of padded values: `Ok` with the padded axis and rank after it when it reduces
/// other axes only, `Err` with the [`super::Reduction`] over the padded axis (its padding masked
/// by the identity), `None` when its axes are not known.
pub(super) fn reduction(
    view: &View,
    node: &NodeProto,
    axis: usize,
    rank: usize,
) -> Option<Result<(usize, usize), super::Reduction>> {
    let axes = reduced_axes(view, node, rank)?;
    let keepdims = int_attr(node, "keepdims").ok().flatten().unwrap_or(1) == 1;
    if axes.contains(&axis) {
        return Some(Err(super::Reduction {
            output: node.output[0].clone(),
            axis,
            rank,
            axes,
            keepdims,
            truth_only: read_as_truth_only(view, &node.output[0]),
        }));
    }
    // Other axes only: the padded axis stays (shifted by the dropped ones).
    let before = axes.iter().filter(|&&a| a < axis).count();
    Some(Ok(if keepdims {
        (axis, rank)
    } else {
        (axis - before, rank - axes.len())
    }))
}

/// True when `name` is read, and read only by Casts to bool (not a graph output, not a body).
fn read_as_truth_only(view: &View, name: &str) -> bool {
    let readers = view.index.readers_of(name);
    !readers.is_empty()
        && !view.index.graph_outputs.contains(name)
        && readers.iter().all(|&(r, slot)| {
            let reader = view.graph.node.get(r);
            slot == 0
                && reader.is_some_and(|n| {
                    view.is_op(n, "Cast")
                        && int_attr(n, "to").ok().flatten() == Some(DataType::Bool as i64)
                })
        })
}

/// An elementwise op of two inputs reading padded values `t` at `slot`: row-wise when the other
/// operand is padded alike (not as a divisor or exponent), or fixed and constant along the padded
/// axis. An integer division or remainder is refused unless by a constant without a zero: the
/// padding's 0 / v would fail where v holds 0, though the original, selecting nothing, divides
/// nothing (ONNX Runtime refuses a zero divisor); so is a padded divisor or exponent (0 in the
/// padding).
pub(super) fn binary_row_wise(
    view: &View,
    node: &NodeProto,
    (op, slot): (&str, usize),
    t: &super::Padded,
    flow: &mut super::Flow,
) -> bool {
    // Where(c, x, y): every other operand padded alike or not varying along the padded axis.
    if op == "Where" {
        return node.input.len() == 3
            && (0..3)
                .filter(|&j| j != slot)
                .all(|j| operand_row_wise(view, &node.input[j], t));
    }
    let float = view.shapes.get(&t.name).elem_type.is_some_and(is_float);
    let other = &node.input[1 - slot];
    // An integer division or remainder of padded values by a constant without a zero is safe.
    let nonzero_divisor = view.const_ints(other).is_some_and(|v| !v.contains(&0));
    if matches!(op, "Div" | "Mod") && !float && !(slot == 0 && nonzero_divisor) {
        return false;
    }
    // A float Div whose divisor is padded: its padding is read as 1 (a sink: no padded row
    // divides by 0), so the quotient's real rows are the original's.
    let masked = op == "Div" && float;
    let divides = matches!(op, "Div" | "Pow" | "Mod") && !masked;
    let divisor = if slot == 1 { &t.name } else { other };
    let mask_divisor = |flow: &mut super::Flow| {
        let out = &node.output[0];
        if masked && !flow.divisors.iter().any(|(o, _, _)| o == out) {
            flow.divisors.push((out.clone(), divisor.clone(), t.axis));
        }
    };
    // Both operands padded alike: the same sizes, the selection's count among them (both come
    // from this selection; every reader of either is followed).
    let own = view.shapes.get(&t.name).dims;
    if own.is_some() && view.shapes.get(other).dims == own && !divides {
        mask_divisor(flow);
        return true;
    }
    // Sizes alike but for the padded axis's name (a size computed from the selection's rows,
    // `labels + arange(len(logits)) * K`): padded alike if the flow pads it there (`alike`,
    // checked at the end).
    if !divides && alike_but_named(view, other, t) {
        flow.sized_alike.push((other.clone(), t.axis));
        mask_divisor(flow);
        return true;
    }
    let fixed =
        super::static_dims(view.shapes, other).is_some() && operand_row_wise(view, other, t);
    if fixed && masked && slot == 1 {
        mask_divisor(flow);
    }
    fixed && !(divides && slot == 1)
}

/// True when `other` has `t`'s rank and fixed sizes, and a size not fixed on the padded axis.
fn alike_but_named(view: &View, other: &str, t: &super::Padded) -> bool {
    let (Some(own), Some(theirs)) = (view.shapes.get(&t.name).dims, view.shapes.get(other).dims)
    else {
        return false;
    };
    own.len() == theirs.len()
        && own.iter().zip(&theirs).enumerate().all(|(i, (a, b))| {
            if i == t.axis {
                b.as_static().is_none()
            } else {
                a.as_static().is_some() && a == b
            }
        })
}

/// An operand beside the padded `t`: padded alike (the same sizes, the selection's count among
/// them), or of fixed sizes that, right-aligned, do not vary along the padded axis.
pub(super) fn operand_row_wise(view: &View, other: &str, t: &super::Padded) -> bool {
    let own = view.shapes.get(&t.name).dims;
    if own.is_some() && view.shapes.get(other).dims == own {
        return true;
    }
    let Some(o) = super::static_dims(view.shapes, other) else {
        return false;
    };
    let at = t.axis as i64 - (t.rank as i64 - o.len() as i64);
    let varies = at >= 0 && o.get(at as usize).is_some_and(|&d| d != 1);
    !(varies || o.len() > t.rank)
}

/// `Reshape(column, [-1, 1, ..., 1])`: a column given unit axes (to be expanded for a scatter).
pub(super) fn unit_axes(view: &View, node: &NodeProto) -> bool {
    node.input.len() == 2
        && view
            .const_ints(&node.input[1])
            .is_some_and(|s| s.len() > 1 && s[0] == -1 && s[1..].iter().all(|&d| d == 1))
}

/// Where a Transpose (its `perm`, or reversed axes) puts axis `axis` of a rank-`rank` tensor.
pub(super) fn transposed_axis(node: &NodeProto, axis: usize, rank: usize) -> Option<usize> {
    let perm = crate::graph::ints_attr(node, "perm")
        .ok()
        .flatten()
        .unwrap_or_else(|| (0..rank as i64).rev().collect());
    perm.iter().position(|&p| p == axis as i64)
}

/// `Slice(p, [0], [end], [axis])` along the padded axis with an `end` that is one size not
/// fixed: a size read from a selection's rows, which the flow must show is this one's
/// ([`super::Flow::cut_to_size`]): then the cut keeps every padded row.
pub(super) fn cut_to_read_size(
    view: &View,
    node: &NodeProto,
    slot: usize,
    t: &super::Padded,
) -> bool {
    if slot != 0 || t.coords || node.input.len() < 4 || !view.is_op(node, "Slice") {
        return false;
    }
    let along = view
        .const_ints(&node.input[3])
        .is_some_and(|a| a.len() == 1 && crate::infer::axis_in(a[0], t.rank) == Some(t.axis));
    let from_zero = view.const_ints(&node.input[1]).is_some_and(|s| s == [0]);
    let by_one = node
        .input
        .get(4)
        .is_none_or(|s| s.is_empty() || view.const_ints(s) == Some(vec![1]));
    let end = view.shapes.values(&node.input[2]);
    // Its own count's size is rows.rs's cut (`x[0:len(x)]`); another is checked later.
    let own = super::rows::count_dim(view, &t.name, t.axis);
    let read = matches!(end, Some([d]) if d.as_static().is_none() && Some(d) != own.as_ref());
    along && from_zero && by_one && read
}
