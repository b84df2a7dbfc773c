//! Writes at a full index grid: `ScatterND(X, indices, U)` whose index tuples run over whole
//! axes of X and hold the others at one position each. TorchScript writes `x[..., j] = v` and
//! `x[:, j] = v` (`index_put` with slices) so: each sliced axis i is
//! `Range(0, Shape(X)[i], 1)` reshaped to its own place in the grid, each fixed one a constant,
//! both expanded to their common shape, given a last axis and concatenated along it.
//!
//! Every position of X whose fixed axes hold their values is then written once, from U at the
//! same sliced positions. U has the grid's shape (size 1 at the fixed axes) and X's trailing
//! sizes, so it broadcasts to X: the write is `Where(M, U, X)` with M a constant mask, true where
//! the fixed axes hold their values. No Shape of X is read then, which is what `--static` needs
//! where X is padded rows (VITS's spline writing its first and last knots): the grid's Range
//! would run over the capacity's rows, and reads the padded rows' size.

use super::grid_columns::{Column, Columns};
pub use super::grid_updates::GridUpdates;
use super::grid_updates::{fill, reshaped};
use super::{combine, dims_of};
use crate::graph::{describe, int_attr};
use crate::infer::Dim;
use crate::trace::View;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_rewrite_analysis::consts::MAX_CONST_ELEMENTS;
use nonzero_rewrite_analysis::dims::static_dims;

/// How deep the index and update chains are followed.
const MAX_STEPS: usize = 12;

/// One `ScatterND` at a full index grid.
#[derive(Debug)]
pub struct GridWrite {
    pub node: usize,
    pub data: String,
    /// X's shape (sizes fixed or symbolic); the fixed axes' sizes are fixed.
    pub dims: Vec<Dim>,
    pub data_type: i32,
    /// Per leading axis of X the indices name: `None` where the grid runs over the whole axis,
    /// `Some(c)` where it holds position c (`0 <= c <` the axis's size).
    pub axes: Vec<Option<i64>>,
    pub updates: GridUpdates,
    /// The elementwise op of ScatterND's `reduction` (`None`: plain writes).
    pub combine: Option<&'static str>,
    /// Where the grid pairs a selection's coordinates with whole axes (`x[i, :, j, :] = v`,
    /// `i, j` the columns of `mask`'s NonZero): the mask, and the axis of X each of its axes
    /// lands on. The written positions are then the mask's true ones, every position of the
    /// whole axes with each, and `axes` holds `None` at the mask's axes too.
    pub columns: Option<Columns>,
    pub line: String,
}

impl GridWrite {
    /// The mask of the written positions: its sizes (1 at a sliced axis and past the indexed
    /// ones, the axis's size at a fixed one) and its values in row-major order.
    pub fn mask(&self) -> Option<(Vec<i64>, Vec<bool>)> {
        let sizes: Vec<i64> = (0..self.dims.len())
            .map(|i| match self.axes.get(i) {
                Some(Some(_)) => self.dims[i].as_static(),
                _ => Some(1),
            })
            .collect::<Option<_>>()?;
        // The mask is a constant: as many elements as the fixed axes hold, within the bound
        // of the analysis's constants (a model's sizes may be anything).
        let count = sizes
            .iter()
            .try_fold(1i64, |n, &d| n.checked_mul(d))
            .filter(|&n| n > 0 && n as usize <= MAX_CONST_ELEMENTS)?;
        let values = (0..count)
            .map(|flat| {
                let mut rest = flat;
                let mut at = vec![0; sizes.len()];
                for (i, &size) in sizes.iter().enumerate().rev() {
                    at[i] = rest % size;
                    rest /= size;
                }
                self.axes
                    .iter()
                    .zip(&at)
                    .all(|(axis, &p)| axis.is_none_or(|c| c == p))
            })
            .collect();
        Some((sizes, values))
    }
}

/// Every write at a full index grid in the graph, in node order.
pub fn all<'v>(view: &'v View<'v>) -> impl Iterator<Item = GridWrite> + 'v {
    view.graph
        .node
        .iter()
        .enumerate()
        .filter_map(|(i, node)| grid_write(view, i, node))
}

fn grid_write(view: &View, at: usize, node: &nonzero_proto::onnx::NodeProto) -> Option<GridWrite> {
    if !view.is_op(node, "ScatterND") || node.input.len() != 3 || node.output.len() != 1 {
        return None;
    }
    let combine = combine(node).ok()?;
    let (data, indices, u) = (&node.input[0], &node.input[1], &node.input[2]);
    let dims = dims_of(view.shapes, data)?;
    let data_type = view.shapes.get(data).elem_type?;
    let (axes, columns) = grid_axes(view, indices, &dims)?;
    let filled = fill(view, u, data_type, dims.len(), 0);
    // Per-coordinate updates would have to be listed in the mask's order: only a fill here.
    if columns.is_some() && filled.is_none() {
        return None;
    }
    let updates = filled
        .or_else(|| reshaped(view, u))
        .unwrap_or(GridUpdates::Tensor(u.clone()));
    if view.shapes.get(u).elem_type != Some(data_type) {
        return None;
    }
    let at_text: Vec<String> = axes
        .iter()
        .enumerate()
        .map(|(i, a)| match (a, &columns) {
            (Some(c), _) => c.to_string(),
            (None, Some(cols)) if cols.axes.contains(&i) => {
                let column = cols.axes.iter().position(|&x| x == i).unwrap_or(0);
                format!("c{column}")
            }
            (None, _) => ":".to_string(),
        })
        .collect();
    let value = match &updates {
        GridUpdates::Tensor(t) | GridUpdates::Value(t) => t.clone(),
        GridUpdates::Reshaped { input, shape } => format!("{input} reshaped to {shape:?}"),
        GridUpdates::Filled(t) => format!("{t}'s fill"),
    };
    let over = match &columns {
        Some(c) => format!("c = the coordinates of {}, with whole axes", c.mask),
        None => "an index grid over whole axes".to_string(),
    };
    let line = format!(
        "grid write: ScatterND {} writes {data}[{}] ({over}) and became Where(positions, {value}, {data})",
        describe(node),
        at_text.join(", ")
    );
    Some(GridWrite {
        node: at,
        data: data.clone(),
        dims,
        data_type,
        axes,
        updates,
        combine,
        columns,
        line,
    })
}

/// The axes of a full index grid: `indices` is `Concat(parts, last axis)`, part i holding
/// position p_i along grid axis i (an axis of X run whole) or one constant (a fixed axis).
fn grid_axes(
    view: &View,
    indices: &str,
    dims: &[Dim],
) -> Option<(Vec<Option<i64>>, Option<Columns>)> {
    let index_dims = dims_of(view.shapes, indices)?;
    let (last, grid) = index_dims.split_last()?;
    // k index parts: one per grid axis, but where a selection's columns share one.
    let k = usize::try_from(last.as_static()?).ok()?;
    let rank = index_dims.len();
    if k == 0 || k > dims.len() {
        return None;
    }
    let parts: Vec<Part> = match view.producer(indices) {
        Some(concat) if view.is_op(concat, "Concat") && concat.input.len() == k => {
            let axis = int_attr(concat, "axis").ok().flatten()?;
            (crate::infer::axis_in(axis, rank) == Some(rank - 1)).then_some(())?;
            // Each part is the grid with a last axis of 1 (Concat checks no more than that).
            let mut own = grid.to_vec();
            own.push(Dim::from_static(1));
            concat
                .input
                .iter()
                .map(|p| (dims_of(view.shapes, p)? == own).then(|| part(view, p, 0))?)
                .collect::<Option<_>>()?
        }
        // Indices the exporter folded to an initializer: each column read off its values.
        None => {
            let sizes = static_dims(view.shapes, indices)?;
            let values = view.const_ints(indices)?;
            columns(&sizes, &values)?
        }
        Some(_) => return None,
    };
    if parts.iter().any(|p| {
        matches!(
            p,
            Part::Position {
                column: Some(_),
                ..
            }
        )
    }) {
        return super::grid_columns::with_columns(view, &parts, grid, dims);
    }
    if k != grid.len() {
        return None;
    }
    let mut axes = Vec::with_capacity(k);
    for (i, part) in parts.into_iter().enumerate() {
        match part {
            Part::Const(c) => {
                let size = dims[i].as_static()?;
                let c = if c < 0 { c + size } else { c };
                ((0..size).contains(&c) && grid[i].as_static() == Some(1)).then_some(())?;
                axes.push(Some(c));
            }
            Part::Position { from_end, len, .. } => {
                // Position along grid axis i, over the whole of X's axis i.
                let grid_axis = rank.checked_sub(1 + from_end)?;
                (grid_axis == i && len == dims[i] && grid[i] == dims[i]).then_some(())?;
                axes.push(None);
            }
        }
    }
    Some((axes, None))
}

/// What a part of the indices holds at each of its positions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    /// One value everywhere.
    Const(i64),
    /// The position along one axis (`from_end` axes before the last), which has `len` sizes
    /// before any broadcast; with `column`, a selection's coordinate there instead (`len` its
    /// count).
    Position {
        from_end: usize,
        len: Dim,
        column: Option<Column>,
    },
}

fn part(view: &View, name: &str, depth: usize) -> Option<Part> {
    if depth > MAX_STEPS {
        return None;
    }
    let values = view.const_ints(name);
    if let Some([c]) = values.as_deref() {
        return Some(Part::Const(*c));
    }
    if let Some(column) = super::grid_columns::part(view, name) {
        return Some(column);
    }
    let Some(node) = view.producer(name) else {
        // An initializer (indices the exporter folded): read off its values.
        return numeric(&static_dims(view.shapes, name)?, &values?);
    };
    let op = node.op_type.as_deref()?;
    if !view.is_op(node, op) || node.input.is_empty() {
        return None;
    }
    let input = &node.input[0];
    let rank_of = |n: &str| view.shapes.get(n).rank();
    match op {
        "Identity" => part(view, input, depth + 1),
        // To an integer type of 32 bits or more, which keeps every position of an axis that
        // has a fixed mask (a Cast to bool or float would not).
        "Cast" => {
            let to = int_attr(node, "to").ok().flatten();
            let kept = [DataType::Int64 as i64, DataType::Int32 as i64];
            if to.is_some_and(|t| kept.contains(&t)) {
                part(view, input, depth + 1)
            } else {
                None
            }
        }
        // Broadcast keeps each axis's place from the end; a size-1 position (len 1) expanded
        // is not a position any more, which the caller's len check sees.
        "Expand" => part(view, input, depth + 1),
        // TorchScript adds the slice's start, 0 for a whole axis.
        "Add" if node.input.len() == 2 => {
            let zero = |n: &str| view.const_ints(n).is_some_and(|v| v == [0]);
            match (zero(&node.input[0]), zero(&node.input[1])) {
                (true, false) => part(view, &node.input[1], depth + 1),
                (false, true) => part(view, input, depth + 1),
                _ => None,
            }
        }
        // `Range(0, n, 1)`: the position along its one axis.
        "Range" if node.input.len() == 3 => {
            let from_zero = view.const_ints(&node.input[0]) == Some(vec![0]);
            let by_one = view.const_ints(&node.input[2]) == Some(vec![1]);
            let len = match dims_of(view.shapes, name)?.as_slice() {
                [len] => len.clone(),
                _ => return None,
            };
            (from_zero && by_one).then_some(Part::Position {
                from_end: 0,
                len,
                column: None,
            })
        }
        // A list of positions given unit axes after it: `[-1, 1, .., 1]` (or its own size
        // first), the positions along the first axis.
        "Reshape" if node.input.len() == 2 => {
            let inner = part(view, input, depth + 1)?;
            let shape = view.const_ints(&node.input[1])?;
            match inner {
                Part::Const(c) => Some(Part::Const(c)),
                Part::Position {
                    from_end: 0,
                    len,
                    column,
                } if rank_of(input) == Some(1) => {
                    let (first, rest) = shape.split_first()?;
                    let first_ok = *first == -1 || len.as_static() == Some(*first);
                    (first_ok && rest.iter().all(|&d| d == 1)).then_some(Part::Position {
                        from_end: rest.len(),
                        len,
                        column,
                    })
                }
                _ => None,
            }
        }
        // New axes: the position's place from the end moves by those inserted after it.
        "Unsqueeze" => {
            let inner = part(view, input, depth + 1)?;
            let Part::Position {
                from_end,
                len,
                column,
            } = inner
            else {
                return Some(inner);
            };
            let in_rank = rank_of(input)?;
            let out_rank = rank_of(name)?;
            let axes = view.axes(node, "axes", 1)?;
            let inserted: Vec<usize> = axes
                .iter()
                .map(|&a| crate::infer::axis_in(a, out_rank))
                .collect::<Option<_>>()?;
            let mut place = in_rank.checked_sub(1 + from_end)?;
            let mut sorted = inserted;
            sorted.sort_unstable();
            for a in sorted {
                if a <= place {
                    place += 1;
                }
            }
            Some(Part::Position {
                from_end: out_rank.checked_sub(1 + place)?,
                len,
                column,
            })
        }
        _ => None,
    }
}

/// Each column (last axis) of constant indices of `sizes` as a part of the grid.
fn columns(sizes: &[i64], values: &[i64]) -> Option<Vec<Part>> {
    let (&k, grid) = sizes.split_last()?;
    let k = usize::try_from(k).ok().filter(|&k| k > 0)?;
    let mut own = grid.to_vec();
    own.push(1);
    (0..k)
        .map(|i| {
            let column: Vec<i64> = values.iter().skip(i).step_by(k).copied().collect();
            numeric(&own, &column)
        })
        .collect()
}

/// What constant `values` of `sizes` hold: one value, or each element's position along one
/// axis (the first such axis of more than one element).
fn numeric(sizes: &[i64], values: &[i64]) -> Option<Part> {
    let first = *values.first()?;
    if values.iter().all(|&v| v == first) {
        return Some(Part::Const(first));
    }
    let rank = sizes.len();
    (0..rank).find_map(|axis| {
        let inner = sizes[axis + 1..]
            .iter()
            .try_fold(1i64, |n, &d| n.checked_mul(d))
            .filter(|&n| n > 0)?;
        let size = sizes[axis];
        if size <= 0 {
            return None;
        }
        let along = values
            .iter()
            .enumerate()
            .all(|(flat, &v)| v == flat as i64 / inner % size);
        along.then(|| Part::Position {
            from_end: rank - 1 - axis,
            len: Dim::from_static(size),
            column: None,
        })
    })
}
