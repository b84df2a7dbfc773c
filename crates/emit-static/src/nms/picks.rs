//! One greedy pick per list, shared by the Loop's body ([`super::greedy`]) and, for the NPU
//! targets, the same picks unrolled where the boxes are too many for [`super::unrolled`]'s fixed
//! point but the picks are few (issue 38: the detectors' NMS over 200 to 27,000 boxes keeps 20
//! to 300 of them): no Loop, which QNN HTP does not take and onnx2tf cannot convert.
//!
//! A pick is the first box still alive in each list (ArgMax of the alive flags: the first of
//! the equal maxima), written as its box index (-1 where none is alive), then every box it
//! overlaps above the threshold, and itself, dies. Unrolled, K picks run K times with no early
//! stop: once no box of a list is alive, each later pick writes -1 and kills nothing, which is
//! what the Loop's rows past its last trip hold. Exact, as the Loop is.

use super::greedy::overlaps;
use super::unrolled::Sorted;
use crate::emit::{int_attr, Emitter};
use crate::target::Target;
use nonzero_proto::onnx::tensor_proto::DataType;

/// The most picks per list unrolled: each is about 40 nodes over `[B, C, N]`. SSDlite keeps
/// 300 (torchvision's `detections_per_img`); past it the Loop stays (the report says so).
pub const MAX_PICKS: i64 = 300;

/// The boxes of every list in score order, as the pick reads them.
pub struct Boxes<'a> {
    /// x_min, x_max, y_min, y_max, area, each `[B, C, N]`.
    pub corners: &'a [String],
    /// Each position's box index `[B, C, N]`, in the type the lists are written in.
    pub order: &'a str,
    /// `[N]`: 0 to N - 1, in the type of the pick's index.
    pub positions: &'a str,
    /// -1, in the type of `order`.
    pub none: &'a str,
    /// The type of `order` and `none`.
    pub index_type: DataType,
    pub threshold: &'a str,
    /// float32 0.
    pub zero: &'a str,
}

/// The pick of each list (`[B, C, 1]` indices into the positions) and its box index (`none`
/// where nothing is alive). `as_type` is what the alive flags are cast to for the ArgMax.
pub fn pick(e: &mut Emitter, boxes: &Boxes, alive: &str, as_type: DataType) -> (String, String) {
    let flags = e.cast(alive, as_type);
    let pick = e.op(
        "ArgMax",
        &[&flags],
        vec![int_attr("axis", 2), int_attr("keepdims", 1)],
    );
    let found = at(e, alive, &pick);
    let box_index = at(e, boxes.order, &pick);
    let picked = if e.target == Target::Rknn {
        // (box + 1) * found - 1: rknn-toolkit2's native build dies (SIGSEGV) on a
        // Where whose operands hold one element per list.
        let one = e.index_scalar(1, boxes.index_type);
        let found = e.cast(&found, boxes.index_type);
        let shifted = e.binary("Add", &box_index, &one);
        let kept = e.binary("Mul", &shifted, &found);
        e.binary("Sub", &kept, &one)
    } else {
        e.where_(&found, &box_index, boxes.none)
    };
    (pick, picked)
}

/// `data` (`[B, C, N]`) at each list's pick.
pub fn at(e: &mut Emitter, data: &str, pick: &str) -> String {
    e.op("GatherElements", &[data, pick], vec![int_attr("axis", 2)])
}

/// The alive flags after the pick: not itself, and not overlapped by it. `suppressed` is the
/// pick's row of overlaps (`[B, C, N]`), or `None` to compute it from the pick's corners.
pub fn survivors(
    e: &mut Emitter,
    boxes: &Boxes,
    alive: &str,
    pick: &str,
    suppressed: Option<String>,
) -> String {
    let suppressed = suppressed.unwrap_or_else(|| {
        let picked: Vec<String> = boxes.corners.iter().map(|q| at(e, q, pick)).collect();
        overlaps(e, &picked, boxes.corners, boxes.threshold, boxes.zero)
    });
    let itself = e.binary("Equal", boxes.positions, pick);
    let gone = e.binary("Or", &suppressed, &itself);
    let stays = e.op("Not", &[&gone], vec![]);
    e.binary("And", alive, &stays)
}

/// int64 `[B, C, K]`: each list's first K picks, unrolled, -1 after its last, and past `trips`
/// (int64 scalar, when the count asked is known only at run time). The box indices and the pick
/// are int32: QNN HTP holds int64 as int32 and leaves a Where of int64 to the CPU EP.
pub fn unrolled(
    e: &mut Emitter,
    sorted: &Sorted,
    threshold: &str,
    trips: Option<&str>,
    boxes: i64,
    k: i64,
) -> String {
    let order = e.cast(sorted.order, DataType::Int32);
    let positions: Vec<i32> = (0..boxes).map(|p| p as i32).collect();
    let positions = e.int32s(&positions, &[boxes]);
    let none = e.int32s(&[-1], &[]);
    let zero = e.float_scalar(0.0);
    let lists = Boxes {
        corners: sorted.corners,
        order: &order,
        positions: &positions,
        none: &none,
        index_type: DataType::Int32,
        threshold,
        zero: &zero,
    };
    let mut alive = sorted.alive.to_string();
    let mut picks = Vec::new();
    for step in 0..k {
        let (index, picked) = pick(e, &lists, &alive, DataType::Float);
        if step + 1 < k {
            let index = e.cast(&index, DataType::Int32);
            alive = survivors(e, &lists, &alive, &index, None);
        }
        picks.push(picked);
    }
    let refs: Vec<&str> = picks.iter().map(String::as_str).collect();
    let mut rows = if refs.len() == 1 {
        picks[0].clone()
    } else {
        e.concat(&refs, 2)
    };
    if let Some(trips) = trips {
        let ranks: Vec<i32> = (0..k).map(|r| r as i32).collect();
        let ranks = e.int32s(&ranks, &[k]);
        let trips = e.cast(trips, DataType::Int32);
        let within = e.binary("Less", &ranks, &trips);
        rows = e.where_(&within, &rows, &none);
    }
    e.cast(&rows, DataType::Int64)
}
