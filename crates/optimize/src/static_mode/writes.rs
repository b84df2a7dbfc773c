//! Masked writes without coordinates: `ScatterND(X, coordinates of M, U)`, where M has X's shape
//! (torch's `x[m] = v`, `x[m] += v`, `masked_fill`, `index_put`, `masked_scatter`), writes the
//! k-th selected element of X with `U[k]`. The same in fixed shapes:
//!
//! ```text
//! k = CumSum(selected)                     1 + the rank of each selected element
//! V = Gather(Concat(X[0:1], U), k)          U[k - 1] at selected elements
//! Y = Where(selected, V, X)                 (reduction r: Where(selected, r(X, V), X))
//! ```
//!
//! Exact where the original runs: U has exactly nnz elements there. It fails where the original
//! fails for U too short (a selected k past U's end), and the leading X[0] makes an empty U with
//! an empty selection valid, as it is for ScatterND. X and U must have one type for both.
//!
//! U is read through what exporters wrap it in ([`updates`]): `Slice(W, 0, nnz)` and
//! `Reshape(W, [-1])` read W itself; `Expand(v, [count, tail])` of a value is periodic
//! (`U[j] = v[j mod |tail|]`, torch's `x[m] = v`); and an elementwise op of the selected rows
//! themselves (`x[m] += v`: `GatherND(X, coordinates of m) + v`) is the same op on X, written
//! where the mask is: `Where(M, X + v, X)`.
//!
//! One difference, from the host: ONNX Runtime's Where gives +0.0 where it takes a -0.0 from
//! its middle operand (1.17.3 and 1.31.1). X stays in the last operand, so the elements the
//! write leaves keep their bits; a written value of -0.0 reads +0.0 there (equal as numbers).

use super::emit::{int_attr, Emitter};
use super::mask::Selection;
use crate::writes::updates::Updates;
use crate::writes::MaskedWrite;

impl MaskedWrite {
    /// Writes the Where form; its last node outputs `output` (the ScatterND's output).
    pub fn emit(&self, e: &mut Emitter, output: &str) -> Option<()> {
        let dims: Vec<i64> = self
            .dims
            .iter()
            .map(|d| d.as_static())
            .collect::<Option<_>>()?;
        let numel: i64 = dims.iter().product();
        if numel == 0 {
            // No element to write: the data itself (and no Reshape to a size 0).
            e.op("Identity", &[&self.data], vec![]);
            e.finish_as(output);
            return Some(());
        }
        let mut selection = Selection::of(e, &self.mask, self.mask_type, numel)?;
        let data = e.reshape(&self.data, &[numel]);
        let mut values = match &self.updates {
            Updates::Listed(list) => {
                let rank = selection.running_count(e);
                let first = e.slice1(&data, 0, 1);
                let list = e.reshape(list, &[-1]);
                let padded = e.concat(&[&first, &list], 0);
                e.op("Gather", &[&padded, &rank], vec![int_attr("axis", 0)])
            }
            Updates::Periodic { value, tail } => {
                let rank = selection.running_count(e);
                let period: i64 = tail.iter().product();
                let tail = e.ints(tail);
                let pattern = e.op("Expand", &[value, &tail], vec![]);
                let pattern = e.reshape(&pattern, &[period]);
                let one = e.scalar(1);
                let before = e.binary("Sub", &rank, &one);
                let period = e.scalar(period);
                let at = e.binary("Mod", &before, &period);
                e.op("Gather", &[&pattern, &at], vec![int_attr("axis", 0)])
            }
            Updates::Broadcast { value } => {
                let full = e.ints(&dims);
                let full = e.op("Expand", &[value, &full], vec![]);
                e.reshape(&full, &[numel])
            }
            Updates::Elementwise {
                op,
                source,
                other,
                rows_first,
            } => {
                let (a, b) = if *rows_first {
                    (source.as_str(), other.as_str())
                } else {
                    (other.as_str(), source.as_str())
                };
                let full = e.binary(op, a, b);
                e.reshape(&full, &[numel])
            }
        };
        if let Some(op) = self.combine {
            values = e.binary(op, &data, &values);
        }
        let written = e.select(&selection.selected, &values, &data, self.data_type);
        e.reshape(&written, &dims);
        e.finish_as(output);
        Some(())
    }
}
