//! Masked writes (`ScatterND(X, coordinates of M, U)`, M of X's shape; recognized in
//! nonzero-rewrite-match's `writes`) become the library's MaskedFill or MaskedScatter, which build no
//! coordinates:
//!
//! - U a single value expanded to the count (`x[m] = v`, `masked_fill`), or a value broadcast
//!   over whole rows that M selects: `MaskedFill(X, M, v)`, i.e. `Where(M, v, X)`;
//! - U the selection of the same mask from a source S of X's shape (`y[m] = x[m]`):
//!   `MaskedFill(X, M, S)`;
//! - U the first nnz values of a list W (`Slice(W, 0, nnz)`, `masked_scatter`):
//!   `MaskedScatter(X, M, W)`. It fails exactly where the original does: when W is shorter;
//! - any other U (`x[m] = x[m] * 2`, `x[m] += v`): `MaskedScatter(X, M, U)`. Wherever the
//!   original runs, U holds exactly nnz values (ScatterND's shape rule), so the outputs are
//!   equal. Where the original refuses U's shape, MaskedScatter still runs if U holds at least
//!   nnz values (docs/optimize.md, "Masked writes").
//!
//! A mask that spreads a row mask over short rows (`x[m] = v` with m `[n]`) is rebuilt from the
//! row mask by a faster form (nonzero_rewrite_match::writes::spread) before the op.
//!
//! Left as they are (the ScatterND keeps its coordinates, reported under `coordinates_used`):
//! ScatterND's reductions (`reduction="add"` and the like), and masks whose shape is not proven
//! equal to the data's.

use super::{nonzero_node, Edit, Kind};
use crate::graph::{describe, fresh_node_name};
use crate::prelude::Prelude;
use crate::trace::View;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_rewrite_analysis::dims::static_dims;
use nonzero_rewrite_analysis::findings::Fact;
use nonzero_rewrite_graph::forms::spread_rows;
use nonzero_rewrite_match::writes::updates::{slice_from_start, Updates};
use nonzero_rewrite_match::writes::MaskedWrite;

pub fn find(view: &View) -> Option<Edit> {
    nonzero_rewrite_match::writes::all(view).find_map(|w| edit(view, w))
}

/// A write of a selection's own source (`y[m] = x[m]`), found before the gathers: once the
/// gather `x[m]` became a BooleanMask the write could only list its values.
pub fn find_copy(view: &View) -> Option<Edit> {
    nonzero_rewrite_match::writes::all(view)
        .filter(|w| matches!(w.updates, Updates::Gathered { .. }))
        .find_map(|w| edit(view, w))
}

fn edit(view: &View, w: MaskedWrite) -> Option<Edit> {
    if w.combine.is_some() || w.mask_type != DataType::Bool as i32 {
        return None;
    }
    let node = &view.graph.node[w.node];
    // A single value, or one broadcast over whole selected rows, is Where(M, v, X); MaskedFill
    // takes a value of at most X's rank.
    let fill = match &w.updates {
        Updates::Periodic { value, .. } | Updates::Broadcast { value } => {
            let whole_rows = matches!(w.updates, Updates::Broadcast { .. });
            static_dims(view.shapes, value)
                .filter(|d| {
                    (whole_rows || d.iter().product::<i64>() == 1) && d.len() <= w.dims.len()
                })
                .map(|_| value.clone())
        }
        // Of the data's shape (`y[m] = x[m]`): Where(M, x, X).
        Updates::Gathered { source } => Some(source.clone()),
        _ => None,
    };
    let (op, kind, values) = match (&w.updates, fill) {
        (_, Some(value)) => ("MaskedFill", Kind::MaskedFill, value),
        (Updates::Listed { list, .. }, None) if cut_from_start(view, &node.input[2], list) => {
            ("MaskedScatter", Kind::MaskedScatter, list.clone())
        }
        _ => ("MaskedScatter", Kind::MaskedScatter, node.input[2].clone()),
    };
    if view.shapes.get(&values).elem_type != Some(w.data_type) {
        return None;
    }
    let name = fresh_node_name(
        view.graph,
        &format!("{}_{}", describe(node), op.to_lowercase()),
    );
    // A row mask spread over short rows is spread again, faster (nonzero_rewrite_match::writes::spread); the
    // export's own spread goes with the coordinates.
    let mut prelude = Prelude::new(format!("{}.nonzero_spread", node.output[0]));
    let mask = w
        .rows
        .as_ref()
        .and_then(|(rows, row)| spread_rows(&mut prelude, rows, *row, &w.data))
        .unwrap_or_else(|| w.mask.clone());
    let line = format!(
        "masked write: ScatterND {} at the coordinates of {} became {op}({}, {}, {values})",
        describe(node),
        w.mask,
        w.data,
        w.mask
    );
    Some(Edit {
        node: w.node,
        prelude: prelude.nodes,
        replacement: nonzero_node(op, name, &[&w.data, &mask, &values], &node.output[0]),
        kind,
        line,
        chain: w.chain,
        facts: vec![Fact::Rank {
            tensor: w.mask.clone(),
            rank: w.dims.len(),
        }],
    })
}

/// True when `u` is `Slice(W, 0, end)` along axis 0 (through `Reshape([-1])`s) and W is
/// `list`: U is then W's first values, and a W longer than the selection is valid for the
/// original too.
fn cut_from_start(view: &View, u: &str, list: &str) -> bool {
    let mut current = u.to_string();
    for _ in 0..8 {
        let Some(node) = view.producer(&current) else {
            return false;
        };
        if let Some(w) = slice_from_start(view, node) {
            return walks_to(view, &w, list);
        }
        let flat = view.is_op(node, "Reshape")
            && node.input.len() == 2
            && view.const_ints(&node.input[1]) == Some(vec![-1]);
        if !flat {
            return false;
        }
        current = node.input[0].clone();
    }
    false
}

/// True when `name` is `list` itself or `Reshape(list, [-1])`s of it.
fn walks_to(view: &View, name: &str, list: &str) -> bool {
    let mut current = name.to_string();
    for _ in 0..8 {
        if current == list {
            return true;
        }
        let Some(node) = view.producer(&current) else {
            return false;
        };
        let flat = view.is_op(node, "Reshape")
            && node.input.len() == 2
            && view.const_ints(&node.input[1]) == Some(vec![-1]);
        if !flat {
            return false;
        }
        current = node.input[0].clone();
    }
    false
}
