//! The compacted positions: int64 `[C]`, the row-major position of each selected element among
//! the first C, then the pad position (-1, or `numel` for the portable targets). Two forms:
//!
//! - [`by_scatter`], every target: each selected element's running count `k` names its slot,
//!   `ScatterElements` writes its position there, and a last slot takes everything else.
//! - [`on_npu`], `--target rknn` with at most [`NPU_MAX_ELEMENTS`] elements: the same in
//!   float arithmetic that RKNN runs on the NPU (MatMul, Sub, Abs, Relu), where the scatter's
//!   int64 arithmetic, CumSum and ScatterElements all run on the chip's CPU. Its one-hot
//!   columns also give the coordinates ([`npu_coordinates`]) by a MatMul, where the portable
//!   forms' Gather of the grid runs on the chip's CPU.

use super::emit::{int_attr, ints_attr, Emitter};
use super::mask::Selection;
use super::portable;
use super::Target;
use nonzero_proto::onnx::tensor_proto::DataType;

/// RKNN computes floats in float16, whose integers are exact up to 2048: the running count and
/// the positions stay exact there. The prefix sum's constant is `numel x numel` float32s (16 MiB
/// at 2048).
pub const NPU_MAX_ELEMENTS: i64 = 2048;

/// Whether [`on_npu`] writes this selection's positions.
pub fn npu_form(e: &Emitter, numel: i64) -> bool {
    e.target == Target::Rknn && numel <= NPU_MAX_ELEMENTS
}

/// The positions by a scatter, and the int64 scalar it pads with: `k` is the running count
/// (int64 `[numel]`), `cap` the int64 scalar C.
pub fn by_scatter(
    e: &mut Emitter,
    selection: &mut Selection,
    k: &str,
    cap: &str,
    numel: i64,
    c: i64,
) -> (String, Option<String>) {
    let one = e.scalar(1);
    let before = e.binary("Sub", k, &one);
    // Kept: selected, and (under a capacity) among the first C. As int64 products, not And:
    // ONNX Runtime 1.17.3 gave a stale And result on a session's later runs here.
    let kept = if c < numel {
        let cap_plus_one = e.scalar(c + 1);
        let within = e.binary("Less", k, &cap_plus_one);
        let within = e.cast(&within, DataType::Int64);
        let ones = selection.ones(e);
        e.binary("Mul", &ones, &within)
    } else {
        selection.ones(e)
    };
    let step = e.binary("Sub", &before, cap);
    let scaled = e.binary("Mul", &kept, &step);
    let slot = e.binary("Add", &scaled, cap);
    let fill = e.scalar(portable::pad_position(e, numel));
    let slots = e.ints(&[c + 1]);
    let empty = e.op("Expand", &[&fill, &slots], vec![]);
    let positions = e.range(numel);
    let scattered = e.op(
        "ScatterElements",
        &[&empty, &slot, &positions],
        vec![int_attr("axis", 0)],
    );
    (portable::head(e, &scattered, c, c + 1), Some(fill))
}

/// The selected count as an int64 scalar, at most `c`: summed and saturated in float (RKNN's
/// NPU reduces floats and takes their Min; the int64 comparison and arithmetic of the scatter
/// form's saturation run on the chip's CPU). `ones` is the selection as float 0/1, `[numel]`.
pub fn npu_count(e: &mut Emitter, ones: &str, numel: i64, c: i64) -> String {
    let mut total = e.sum_all(ones);
    if c < numel {
        let cap = e.floats(&[c as f32], &[]);
        total = e.binary("Min", &total, &cap);
    }
    e.cast(&total, DataType::Int64)
}

/// The positions as float arithmetic, for at most [`NPU_MAX_ELEMENTS`] elements:
///
/// ```text
/// m    = float(selected)                      [1, numel]
/// k    = m x U                                [1, numel]   U: ones on and above the diagonal
/// slot = m * k - 1                            k - 1 where selected, else -1
/// S    = Relu(1 - |slot^T - [0 .. C)|)        [numel, C]   1 where slot = j, else 0
/// flat = S^T x ([0 .. numel) - numel) + numel [C]          numel (the pad slot) in an empty column
/// ```
///
/// Each column of S has at most one 1, so each product sums one term: exact wherever the
/// integers are (float16: up to 2048). A slot past C has no column: the first C are kept.
/// `ones` is the selection as float 0/1, `[numel]`. Returns the positions (int64 `[C]`) and
/// `S^T` (float `[C, numel]`, one row per slot: [`npu_coordinates`] reads it).
pub fn on_npu(e: &mut Emitter, ones: &str, numel: i64, c: i64) -> (String, String) {
    let n = numel as usize;
    let row = e.reshape(ones, &[1, numel]);
    let mut upper = vec![0f32; n * n];
    for i in 0..n {
        upper[i * n + i..(i + 1) * n].fill(1.0);
    }
    let upper = e.floats(&upper, &[numel, numel]);
    let k = e.op("MatMul", &[&row, &upper], vec![]);
    let selected_k = e.binary("Mul", &row, &k);
    let one = e.floats(&[1.0], &[]);
    let slot = e.binary("Sub", &selected_k, &one);
    let slot = e.reshape(&slot, &[numel, 1]);
    let columns: Vec<f32> = (0..c).map(|j| j as f32).collect();
    let columns = e.floats(&columns, &[1, c]);
    let distance = e.binary("Sub", &slot, &columns);
    let distance = e.op("Abs", &[&distance], vec![]);
    let closeness = e.binary("Sub", &one, &distance);
    let picks = e.op("Relu", &[&closeness], vec![]);
    let pad = portable::pad_position(e, numel) as f32;
    let offsets: Vec<f32> = (0..numel).map(|p| p as f32 - pad).collect();
    let offsets = e.floats(&offsets, &[numel, 1]);
    let picks = e.op("Transpose", &[&picks], vec![ints_attr("perm", &[1, 0])]);
    let picked = e.op("MatMul", &[&picks, &offsets], vec![]);
    let pad = e.floats(&[pad], &[]);
    let flat = e.binary("Add", &picked, &pad);
    let flat = e.reshape(&flat, &[c]);
    (e.cast(&flat, DataType::Int64), picks)
}

/// The coordinates (int64 `[rank, C]`, -1 past the count) from [`on_npu`]'s one-hot rows
/// `picks` (float `[C, numel]`), as float arithmetic RKNN runs on the NPU:
///
/// ```text
/// G      = each position's coordinate per axis, plus 1    [numel, rank]
/// coords = Transpose(picks x G) - 1                       [rank, C]
/// ```
///
/// A row of `picks` holds at most one 1, so each product sums one term, and a padded row none:
/// -1 there. Exact in float16, since a coordinate plus 1 is at most `numel` (2048).
pub fn npu_coordinates(e: &mut Emitter, picks: &str, dims: &[i64]) -> String {
    let rank = dims.len();
    let numel: i64 = dims.iter().product();
    let mut grid = vec![0f32; numel as usize * rank];
    for (axis, size) in dims.iter().enumerate() {
        let stride: i64 = dims[axis + 1..].iter().product();
        for p in 0..numel {
            grid[p as usize * rank + axis] = (p / stride % size + 1) as f32;
        }
    }
    let grid = e.floats(&grid, &[numel, rank as i64]);
    let picked = e.op("MatMul", &[picks, &grid], vec![]);
    let picked = e.op("Transpose", &[&picked], vec![ints_attr("perm", &[1, 0])]);
    let one = e.floats(&[1.0], &[]);
    let coordinates = e.binary("Sub", &picked, &one);
    e.cast(&coordinates, DataType::Int64)
}
