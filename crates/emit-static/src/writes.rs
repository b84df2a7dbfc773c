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
//! Under `--target rknn` k is capped at |U| where |U| is fixed and below the mask's size: the
//! converter builds by running the model on random inputs, where the original fails (the
//! TorchScript export of `x[m] = v` lists v once, valid for one selected row), and the build
//! then fails; capped, those inputs write U's last element past its end instead.
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

use super::emit::Emitter;
use super::mask::Selection;
use super::portable;
use super::Target;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_rewrite_analysis::dims::checked_numel;
use nonzero_rewrite_graph::forms::spread_rows;
use nonzero_rewrite_match::writes::updates::Updates;
use nonzero_rewrite_match::writes::MaskedWrite;

/// Writes the Where form; its last node outputs `output` (the ScatterND's output).
pub fn emit(w: &MaskedWrite, e: &mut Emitter, output: &str) -> Option<()> {
    let dims: Vec<i64> = w
        .dims
        .iter()
        .map(|d| d.as_static())
        .collect::<Option<_>>()?;
    let numel = checked_numel(&dims)?;
    if numel == 0 {
        // No element to write: the data itself (and no Reshape to a size 0).
        e.op("Identity", &[&w.data], vec![]);
        e.finish_as(output);
        return Some(());
    }
    // The Where runs at the data's shape: its output is the graph's tensor as it is (a
    // Reshape after it would copy where it is a graph output).
    let condition = condition(w, e)?;
    let mut selection = Selection::of(e, &condition, DataType::Bool as i32, numel)?;
    let index_type = if numel < i64::from(i32::MAX) {
        DataType::Int32
    } else {
        DataType::Int64
    };
    let data = &w.data;
    let mut values = match &w.updates {
        Updates::Listed { list, len } => {
            let mut rank = selection.running_count_as(e, index_type);
            if let Some(len) = len.filter(|&len| e.target == Target::Rknn && len < numel) {
                // rknn-toolkit2 folds constants by running the model on inputs of its own,
                // which select more than U holds: the gather would read past U's end there.
                let last = e.index_scalar(len, index_type);
                rank = e.binary("Min", &rank, &last);
            }
            let flat = e.reshape(data, &[numel]);
            let first = portable::head(e, &flat, 1, numel);
            let list = e.reshape(list, &[-1]);
            let padded = e.concat(&[&first, &list], 0);
            let listed = e.gather_1d(&padded, &rank);
            e.reshape(&listed, &dims)
        }
        // A period of one element (torch's `x[m] = v` of a single value): every written element
        // is that value, so no running count (a CumSum, which RKNN runs on the chip's CPU). As
        // `[1]` it broadcasts in the Where, the binary ops' fast path.
        Updates::Periodic { value, tail } if tail.iter().product::<i64>() == 1 => {
            e.reshape(value, &[1])
        }
        Updates::Periodic { value, tail } => {
            let rank = selection.running_count_as(e, index_type);
            let period: i64 = tail.iter().product();
            let tail = e.ints(tail);
            let pattern = e.op("Expand", &[value, &tail], vec![]);
            let pattern = e.reshape(&pattern, &[period]);
            let one = e.index_scalar(1, index_type);
            let before = e.binary("Sub", &rank, &one);
            let period = e.index_scalar(period, index_type);
            let at = e.binary("Mod", &before, &period);
            let repeated = e.gather_1d(&pattern, &at);
            e.reshape(&repeated, &dims)
        }
        Updates::Broadcast { value } => {
            let full = e.ints(&dims);
            e.op("Expand", &[value, &full], vec![])
        }
        // Of the data's shape: each written element is the source's at its own position.
        Updates::Gathered { source } => source.clone(),
        Updates::Elementwise {
            op,
            source,
            other,
            other_dims,
            rows_first,
        } => {
            // ONNX Runtime's binary ops broadcast a short row one element at a time (6.2 ms
            // for 1M rows of 3, against 2.8 ms with the row expanded first); a single value
            // is their fast path.
            let other = if other_dims.iter().product::<i64>() > 1 && *other_dims != dims {
                let full = e.ints(&dims);
                e.op("Expand", &[other, &full], vec![])
            } else {
                other.clone()
            };
            let (a, b) = if *rows_first {
                (source.as_str(), other.as_str())
            } else {
                (other.as_str(), source.as_str())
            };
            e.binary(op, a, b)
        }
    };
    if let Some(op) = w.combine {
        values = e.binary(op, data, &values);
    }
    e.select(&condition, &values, data, w.data_type);
    e.finish_as(output);
    Some(())
}

/// bool, the data's shape: true where the write writes. A row mask spread over short rows
/// is spread here again, by the form ONNX Runtime runs faster ([`spread`]); any other mask
/// is read as NonZero reads it (`Not(Equal(mask, 0))` unless bool).
fn condition(w: &MaskedWrite, e: &mut Emitter) -> Option<String> {
    let as_bool = |e: &mut Emitter, mask: &str| -> Option<String> {
        if w.mask_type == DataType::Bool as i32 {
            return Some(mask.to_string());
        }
        let zero = e.zero(w.mask_type)?;
        let equal = e.binary("Equal", mask, &zero);
        Some(e.op("Not", &[&equal], vec![]))
    };
    if let Some((rows, row)) = &w.rows {
        let rows = as_bool(e, rows)?;
        if let Some(spread) = spread_rows(e, &rows, *row, &w.data) {
            return Some(spread);
        }
    }
    as_bool(e, &w.mask)
}
