//! Masked writes: `ScatterND(X, coordinates of M, U)` where M has X's shape (torch's `x[m] = v`,
//! `x[m] += v`, `masked_fill`, `index_put`, `masked_scatter`). The one recognizer both modes use:
//! the library target writes the library's MaskedFill or MaskedScatter (nonzero-emit-library's
//! `masked_write.rs`), the static target writes standard ops (nonzero-emit-static's `writes.rs`).
//! U is read through what exporters wrap it in ([`updates`]).

pub mod grid;
pub mod grid_columns;
pub mod grid_updates;
pub mod spread;
pub mod updates;

use crate::graph::{attr, describe};
use crate::infer::{Dim, ShapeTable};
use crate::trace::{trace, View};
use updates::{updates, Updates};

/// One `ScatterND` at the coordinates of a mask of the data's shape.
#[derive(Debug)]
pub struct MaskedWrite {
    pub node: usize,
    pub data: String,
    pub mask: String,
    pub updates: Updates,
    /// The elementwise op of ScatterND's `reduction` (`None`: plain writes).
    pub combine: Option<&'static str>,
    pub mask_type: i32,
    /// The data's element type.
    pub data_type: i32,
    /// The data's (= the mask's) shape, sizes fixed or symbolic.
    pub dims: Vec<Dim>,
    /// The row mask and the fixed size of a row, when the mask spreads it over whole rows of
    /// the data ([`updates::expanded_rows`]): both modes rebuild the mask from it ([`spread`]).
    pub rows: Option<(String, i64)>,
    /// The outputs of the chain the write reads: the coordinates and the updates.
    pub chain: Vec<String>,
    pub line: String,
}

/// The shape of `name` when its rank is known (sizes fixed or symbolic).
pub fn dims_of(shapes: &ShapeTable, name: &str) -> Option<Vec<Dim>> {
    shapes.info(name)?.dims.clone()
}

/// True when the last sizes of `dims` are the fixed sizes `tail`.
pub fn ends_with(dims: &[Dim], tail: &[i64]) -> bool {
    dims.len() >= tail.len()
        && dims[dims.len() - tail.len()..]
            .iter()
            .zip(tail)
            .all(|(d, &t)| d.as_static() == Some(t))
}

/// ScatterND's `reduction` attribute as the op that combines old and new values.
fn combine(node: &nonzero_proto::onnx::NodeProto) -> Result<Option<&'static str>, ()> {
    let Some(a) = attr(node, "reduction") else {
        return Ok(None);
    };
    match a.s.as_deref() {
        Some(b"none") => Ok(None),
        Some(b"add") => Ok(Some("Add")),
        Some(b"mul") => Ok(Some("Mul")),
        Some(b"max") => Ok(Some("Max")),
        Some(b"min") => Ok(Some("Min")),
        _ => Err(()),
    }
}

/// Every masked write in the graph, in node order.
pub fn all<'v>(view: &'v View<'v>) -> impl Iterator<Item = MaskedWrite> + 'v {
    view.graph.node.iter().enumerate().filter_map(|(i, node)| {
        if !view.is_op(node, "ScatterND") || node.input.len() != 3 || node.output.len() != 1 {
            return None;
        }
        let combine = combine(node).ok()?;
        let traced = trace(view, &node.input[1])?;
        let data = &node.input[0];
        let dims = dims_of(view.shapes, data)?;
        let mask_dims = dims_of(view.shapes, &traced.mask)?;
        if traced.squeezed || mask_dims != dims || dims.is_empty() {
            return None;
        }
        let mask_type = view.shapes.get(&traced.mask).elem_type?;
        let data_type = view.shapes.get(data).elem_type?;
        let updates = updates(view, &node.input[2], data, &traced.mask, &dims);
        let rows = updates::expanded_rows(view, &traced.mask, &dims).and_then(|(rows, rank)| {
            let row = dims[rank..]
                .iter()
                .map(Dim::as_static)
                .product::<Option<i64>>()?;
            Some((rows, row))
        });
        Some(MaskedWrite {
            node: i,
            line: format!(
                "masked write: ScatterND {} at the coordinates of {} became Where({}, {}, {data})",
                describe(node),
                traced.mask,
                traced.mask,
                updates.text()
            ),
            data: data.clone(),
            mask: traced.mask,
            updates,
            combine,
            mask_type,
            data_type,
            dims,
            rows,
            chain: vec![node.input[1].clone(), node.input[2].clone()],
        })
    })
}
