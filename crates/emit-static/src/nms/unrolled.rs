//! The greedy selection without a Loop, for the NPU targets (`--target qnn|litert|rknn`): QNN
//! HTP takes no Loop, and onnx2tf fails to convert it (issue 38). Exact, and no control flow.
//!
//! With the boxes of a list in score order, box i is kept iff it is a candidate and no kept box
//! before it overlaps it above the threshold. Starting from "every candidate kept", each step
//! recomputes every box from the previous step's keeps: after step t the first t + 1 boxes are
//! final (box 0 is from the start), so N - 1 steps give the greedy result. A step is a MatMul of
//! the keeps by the "earlier and overlapping" matrix (how many kept boxes before i suppress i)
//! and a test of zero: four nodes, N - 1 times. The counts are at most N, exact in fp16 (HTP's
//! float arithmetic) up to 2048; [`MAX_BOXES`] bounds the unrolled size well below that.

use super::greedy::overlaps;
use crate::emit::Emitter;
use nonzero_proto::onnx::tensor_proto::DataType;

/// The most boxes per list unrolled: N - 1 steps of four nodes each, and the two N x N
/// constants. Past it [`super::picks`] unrolls the picks where they are few, else the Loop
/// stays (the report says which).
pub const MAX_BOXES: i64 = 128;

/// The boxes of every list in score order ([B, C, N] each).
pub struct Sorted<'a> {
    /// x_min, x_max, y_min, y_max, area.
    pub corners: &'a [String],
    /// The candidates (bool).
    pub alive: &'a str,
    /// int64: each position's box index.
    pub order: &'a str,
}

/// int64 `[B, C, K]`: each list's selected boxes in selection order, -1 after, the first
/// `trips` (int64 scalar in [0, K], when the count asked is known only at run time) of each
/// list at most. (A constant count is not cast here: onnx2tf's flatbuffer_direct backend
/// fails on a Cast of a constant.)
pub fn lists(
    e: &mut Emitter,
    sorted: &Sorted,
    threshold: &str,
    trips: Option<&str>,
    dims: [i64; 3],
    k: i64,
) -> String {
    let [b, c, n] = dims;
    // The lists as one batch axis (rank 3 at most: onnx2tf reads rank-4 tensors as images).
    let lists = b * c;
    let zero = e.float_scalar(0.0);
    let flat: Vec<String> = sorted
        .corners
        .iter()
        .map(|q| e.reshape(q, &[lists, n]))
        .collect();
    let kept: Vec<String> = flat.iter().map(|q| e.unsqueeze(q, &[2])).collect();
    let each: Vec<String> = flat.iter().map(|q| e.unsqueeze(q, &[1])).collect();
    // [B * C, N, N]: row j, column i: box j overlaps box i.
    let overlapping = overlaps(e, &kept, &each, threshold, &zero);
    // before[j][i] = 1 where j < i.
    let before: Vec<f32> = (0..n * n)
        .map(|p| f32::from(u8::from(p / n < p % n)))
        .collect();
    let before = e.floats(&before, &[n, n]);
    let overlap_f = e.cast(&overlapping, DataType::Float);
    let suppressors = e.binary("Mul", &overlap_f, &before);
    let alive = e.reshape(sorted.alive, &[lists, 1, n]);
    let half = e.float_scalar(0.5);
    let mut keep = alive.clone();
    for _ in 1..n {
        let keep_f = e.cast(&keep, DataType::Float);
        let against = e.op("MatMul", &[&keep_f, &suppressors], vec![]);
        let free = e.binary("Less", &against, &half);
        keep = e.binary("And", &alive, &free);
    }
    // Each kept box's rank among its list's kept boxes; the first `trips` are selected.
    let keep_f = e.cast(&keep, DataType::Float);
    let rank = e.op("MatMul", &[&keep_f, &before], vec![]);
    let selected = match trips {
        Some(trips) => {
            let trips_f = e.cast(trips, DataType::Float);
            let within = e.binary("Less", &rank, &trips_f);
            e.binary("And", &keep, &within)
        }
        None => keep,
    };
    // [B * C, K, N]: position i is the list's k-th selection. Its box index + 1 (0 where there
    // is none) by a MatMul, exact in fp16 while N < 2048.
    let ranks: Vec<f32> = (0..k).map(|r| r as f32).collect();
    let ranks = e.floats(&ranks, &[k, 1]);
    let at_rank = e.binary("Equal", &rank, &ranks);
    let at_rank = e.binary("And", &at_rank, &selected);
    let at_rank = e.cast(&at_rank, DataType::Float);
    let one = e.float_scalar(1.0);
    let order = e.cast(sorted.order, DataType::Float);
    let order = e.binary("Add", &order, &one);
    let order = e.reshape(&order, &[lists, n, 1]);
    let boxes = e.op("MatMul", &[&at_rank, &order], vec![]);
    let boxes = e.binary("Sub", &boxes, &one);
    let boxes = e.reshape(&boxes, &[b, c, k]);
    e.cast(&boxes, DataType::Int64)
}
