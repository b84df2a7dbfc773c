//! NonMaxSuppression in a fixed shape (issue 37, item 3): ONNX's greedy selection, per batch and
//! class, in standard ops whose every shape is fixed.
//!
//! ```text
//! order  = TopK(scores, N, sorted)                 [B, C, N]  by falling score, the lower index
//!                                                             first among equal scores
//! alive  = candidates in that order                [B, C, N]  (score > score_threshold, if given)
//! Loop T = min(max(max_output_boxes_per_class, 0), N) times, while a box is alive anywhere:
//!   p       = ArgMax(alive)                        [B, C, 1]  the first box still alive
//!   lists[:, :, i] = order[p] where one is alive, else -1
//!   alive  &= not (IoU(box p, each) > iou_threshold), and not p itself
//!             (row p of every pair's overlap computed once, up to MATRIX_ELEMENTS)
//! rows   = the lists compacted in (batch, class, rank) order: [B * C * K, 3], -1 past the count
//! ```
//!
//! The IoU is ONNX Runtime's `SuppressByIOU`, operation for operation in float32: corners by
//! Min/Max of each coordinate pair (or centre -/+ half the size), the intersection's sides, then
//! `inter / ((area_p + area) - inter)`, and no suppression where a side, the intersection, an area
//! or the union is not positive. A box is kept when no box kept before it overlaps it more than
//! the threshold: the Loop's order is ONNX Runtime's. Not covered: NaN coordinates (ONNX Runtime's
//! `std::max` drops a NaN where Max keeps it) and NaN scores (ONNX Runtime's priority queue has no
//! order for them); ties between equal scores are broken by the lower index, where ONNX Runtime's
//! heap leaves them unspecified. An `iou_threshold` outside [0, 1] runs here, where ONNX Runtime
//! fails.

use super::super::compact::{self, Compacted};
use super::super::emit::{int_attr, Emitter};
use super::super::outputs::tensor_value;
use super::{picks, unrolled};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{AttributeProto, GraphProto, NodeProto};

/// The most elements of the overlaps of every pair of boxes computed once (`B * C * N * N`):
/// 4M bools, N = 2048 for one list. Past it each iteration computes its pick's row.
const MATRIX_ELEMENTS: i64 = 1 << 22;

/// NMS's fixed sizes: batches, classes, boxes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizes {
    pub batches: i64,
    pub classes: i64,
    pub boxes: i64,
}

/// What the greedy selection reads.
pub struct Inputs<'a> {
    /// float32 `[B, N, 4]` and `[B, C, N]`.
    pub boxes: &'a str,
    pub scores: &'a str,
    /// bool `[B, C, N]`: the boxes that may be selected; `None`: all.
    pub candidates: Option<String>,
    /// int64: how many per batch and class at most, at run time (the NMS input), bounded by
    /// `per_class`.
    pub max_output: &'a str,
    /// Whether `max_output` is known only at run time (else `per_class` is it, clamped).
    pub max_output_at_run_time: bool,
    /// float32, or `None` for ONNX's default 0.
    pub iou_threshold: Option<&'a str>,
    pub center_point_box: bool,
}

/// The most boxes one batch and class can keep: `max_output_boxes_per_class` when it is a
/// constant (ONNX Runtime clamps it at 0), else every box.
pub fn per_class(max_output: Option<i64>, boxes: i64) -> i64 {
    max_output.map_or(boxes, |m| m.clamp(0, boxes))
}

/// What [`emit`] writes, for the report: a Loop, or for the NPU targets (`portable`) the
/// unrolled steps up to [`unrolled::MAX_BOXES`] boxes.
pub fn form(portable: bool, boxes: i64, k: i64) -> String {
    if portable && boxes <= unrolled::MAX_BOXES {
        format!(
            "{} unrolled greedy steps (no Loop, for the target)",
            boxes - 1
        )
    } else if portable && k <= picks::MAX_PICKS {
        format!("{k} unrolled greedy picks per batch and class (no Loop, for the target)")
    } else {
        format!("a greedy Loop of at most {k} picks per batch and class")
    }
}

/// Writes the fixed-shape NMS; the last node outputs `output` (`[capacity, 3]` int64 rows, -1
/// past the count). `k` is [`per_class`]; `capacity` caps the rows (the first in ONNX's order
/// are kept). Returns the count and padding of the rows.
pub fn emit(
    e: &mut Emitter,
    inputs: &Inputs,
    sizes: Sizes,
    k: i64,
    capacity: Option<i64>,
    output: &str,
) -> Option<Compacted> {
    if k == 0 {
        // No box asked for (ONNX's default), or none to pick from.
        let rows = e.empty(DataType::Int64 as i32, &[0, 3]);
        e.op("Identity", &[&rows], vec![]);
        e.finish_as(output);
        return Some(Compacted {
            count: e.scalar(0),
            padding: e.empty(DataType::Bool as i32, &[0]),
            flat: e.empty(DataType::Int64 as i32, &[0]),
            numel: 0,
            capacity: 0,
        });
    }
    let lists = selected_lists(e, inputs, sizes, k);
    let valid_dims = [sizes.batches, sizes.classes, k];
    let minus_one = e.scalar(-1);
    let valid = e.binary("Greater", &lists, &minus_one);
    let coordinates = e.fresh("coordinates");
    let compacted = compact::emit(
        e,
        &valid,
        DataType::Bool as i32,
        &valid_dims,
        capacity,
        &coordinates,
    )?;
    if compacted.capacity == 0 {
        let rows = e.empty(DataType::Int64 as i32, &[0, 3]);
        e.op("Identity", &[&rows], vec![]);
        e.finish_as(output);
        return Some(compacted);
    }
    // (batch, class, rank) of each row, then the box at that rank of that list.
    let rows = e.op("Transpose", &[&coordinates], vec![perm(&[1, 0])]);
    let (start, end, axes) = (e.ints(&[0]), e.ints(&[2]), e.ints(&[1]));
    let batch_class = e.op("Slice", &[&rows, &start, &end, &axes], vec![]);
    // Past the count the flat position is -1 (or the pad slot, one past the end): both read
    // the -1 appended to the lists.
    let flat_lists = e.reshape(&lists, &[compacted.numel]);
    let minus_one = e.ints(&[-1]);
    let padded_lists = e.concat(&[&flat_lists, &minus_one], 0);
    let boxes = e.op(
        "Gather",
        &[&padded_lists, &compacted.flat],
        vec![int_attr("axis", 0)],
    );
    let box_column = e.unsqueeze(&boxes, &[1]);
    e.concat(&[&batch_class, &box_column], 1);
    e.finish_as(output);
    Some(compacted)
}

fn perm(values: &[i64]) -> AttributeProto {
    super::super::emit::ints_attr("perm", values)
}

/// int64 `[B, C, K]`: each batch and class's selected boxes in selection order, -1 after.
fn selected_lists(e: &mut Emitter, inputs: &Inputs, sizes: Sizes, k: i64) -> String {
    let Sizes {
        batches: b,
        classes: c,
        boxes: n,
    } = sizes;
    // Every box in score order, per batch and class.
    let all = e.ints(&[n]);
    let order = e.fresh("order");
    let sorted_scores = e.fresh("sorted_scores");
    let name = e.fresh("TopK");
    e.nodes.push(NodeProto {
        input: vec![inputs.scores.to_string(), all],
        output: vec![sorted_scores, order.clone()],
        name: Some(name),
        op_type: Some("TopK".into()),
        domain: Some(String::new()),
        attribute: vec![
            int_attr("axis", 2),
            int_attr("largest", 1),
            int_attr("sorted", 1),
        ],
        ..Default::default()
    });
    // Each box's corners and area ([B, N]), as SuppressByIOU computes them, then in each list's
    // order ([B, C, N]).
    let column = |e: &mut Emitter, i: i64| {
        let at = e.scalar(i);
        e.op("Gather", &[inputs.boxes, &at], vec![int_attr("axis", 2)])
    };
    let (c0, c1, c2, c3) = (column(e, 0), column(e, 1), column(e, 2), column(e, 3));
    let [x_min, x_max, y_min, y_max] = if inputs.center_point_box {
        let two = e.float_scalar(2.0);
        let half_w = e.binary("Div", &c2, &two);
        let half_h = e.binary("Div", &c3, &two);
        [
            e.binary("Sub", &c0, &half_w),
            e.binary("Add", &c0, &half_w),
            e.binary("Sub", &c1, &half_h),
            e.binary("Add", &c1, &half_h),
        ]
    } else {
        [
            e.binary("Min", &c1, &c3),
            e.binary("Max", &c1, &c3),
            e.binary("Min", &c0, &c2),
            e.binary("Max", &c0, &c2),
        ]
    };
    let width = e.binary("Sub", &x_max, &x_min);
    let height = e.binary("Sub", &y_max, &y_min);
    let area = e.binary("Mul", &width, &height);
    let spread = e.ints(&[b, c, n]);
    let in_order = |e: &mut Emitter, per_box: &str| {
        let per_batch = e.unsqueeze(per_box, &[1]);
        let per_list = e.op("Expand", &[&per_batch, &spread], vec![]);
        e.op(
            "GatherElements",
            &[&per_list, &order],
            vec![int_attr("axis", 2)],
        )
    };
    let corners: Vec<String> = [&x_min, &x_max, &y_min, &y_max, &area]
        .iter()
        .map(|q| in_order(e, q))
        .collect();
    let alive = match &inputs.candidates {
        Some(candidates) => e.op(
            "GatherElements",
            &[candidates, &order],
            vec![int_attr("axis", 2)],
        ),
        None => {
            let yes = e.bool_scalar(true);
            e.op("Expand", &[&yes, &spread], vec![])
        }
    };
    let none = e.scalar(-1);
    let lists_shape = e.ints(&[b, c, k]);
    let empty_lists = e.op("Expand", &[&none, &lists_shape], vec![]);
    // At most K per list, and no more than the input asks at run time.
    let scalar_shape = e.ints(&[]);
    let asked = e.op("Reshape", &[inputs.max_output, &scalar_shape], vec![]);
    // Clamped to [0, K] by Where: Max and Min take int64 only from opset 12.
    let zero = e.scalar(0);
    let negative = e.binary("Less", &asked, &zero);
    let asked = e.where_(&negative, &zero, &asked);
    let most = e.scalar(k);
    let over = e.binary("Greater", &asked, &most);
    let trips = e.where_(&over, &most, &asked);
    let threshold = match inputs.iou_threshold {
        Some(t) => t.to_string(),
        None => e.float_scalar(0.0),
    };
    let sorted = unrolled::Sorted {
        corners: &corners,
        alive: &alive,
        order: &order,
    };
    let run_time_trips = inputs.max_output_at_run_time.then_some(trips.as_str());
    if e.target.portable() && n <= unrolled::MAX_BOXES {
        return unrolled::lists(e, &sorted, &threshold, run_time_trips, [b, c, n], k);
    }
    if e.target.portable() && k <= picks::MAX_PICKS {
        return picks::unrolled(e, &sorted, &threshold, run_time_trips, n, k);
    }
    let go = e.bool_scalar(true);
    let zero_f = e.float_scalar(0.0);
    let ranks = e.range(k);
    let positions = e.range(n);

    // Small enough, every pair's overlap at once ([B, C, N, N]: row i, box i kept first), so that
    // an iteration reads one row; else each iteration computes its pick's row.
    let pairs = [b, c, n, n].iter().try_fold(1i64, |p, &d| p.checked_mul(d));
    let matrix = pairs.is_some_and(|p| p <= MATRIX_ELEMENTS).then(|| {
        let kept: Vec<String> = corners.iter().map(|q| e.unsqueeze(q, &[3])).collect();
        let each: Vec<String> = corners.iter().map(|q| e.unsqueeze(q, &[2])).collect();
        overlaps(e, &kept, &each, &threshold, &zero_f)
    });
    let row_shape = e.ints(&[b, c, 1, n]);

    // The body: one box picked per list, and the boxes it suppresses.
    let mark = e.nodes.len();
    let (iteration, go_in, alive_in, lists_in) = (
        e.fresh("iteration"),
        e.fresh("go"),
        e.fresh("alive"),
        e.fresh("lists"),
    );
    let lists = picks::Boxes {
        corners: &corners,
        order: &order,
        positions: &positions,
        none: &none,
        index_type: DataType::Int64,
        threshold: &threshold,
        zero: &zero_f,
    };
    let (pick, picked) = picks::pick(e, &lists, &alive_in, DataType::Int32);
    let this_rank = e.binary("Equal", &ranks, &iteration);
    let lists_out = e.where_(&this_rank, &picked, &lists_in);
    // The body's inner types, declared: IREE's importer needs them for the row's steps.
    let mut inner = vec![];
    // Row p of the overlaps computed once; else computed from the pick's corners.
    let suppressed = matrix.as_ref().map(|overlap| {
        let at = e.unsqueeze(&pick, &[3]);
        let at_row = e.op("Expand", &[&at, &row_shape], vec![]);
        let row = e.op(
            "GatherElements",
            &[overlap, &at_row],
            vec![int_attr("axis", 2)],
        );
        let int64 = DataType::Int64 as i32;
        inner.extend([
            tensor_value(&pick, int64, &[b, c, 1]),
            tensor_value(&at, int64, &[b, c, 1, 1]),
            tensor_value(&at_row, int64, &[b, c, 1, n]),
            tensor_value(&row, DataType::Bool as i32, &[b, c, 1, n]),
        ]);
        e.op("Reshape", &[&row, &spread], vec![])
    });
    let alive_out = picks::survivors(e, &lists, &alive_in, &pick, suppressed);
    let alive_any = e.cast(&alive_out, DataType::Int32);
    let any = e.op("ReduceMax", &[&alive_any], vec![int_attr("keepdims", 0)]);
    let go_out = e.cast(&any, DataType::Bool);
    let nodes: Vec<NodeProto> = e.nodes.drain(mark..).collect();
    let bool_type = DataType::Bool as i32;
    let int64 = DataType::Int64 as i32;
    let body = GraphProto {
        name: Some(e.fresh("greedy")),
        node: nodes,
        value_info: inner,
        input: vec![
            tensor_value(&iteration, int64, &[]),
            tensor_value(&go_in, bool_type, &[]),
            tensor_value(&alive_in, bool_type, &[b, c, n]),
            tensor_value(&lists_in, int64, &[b, c, k]),
        ],
        output: vec![
            tensor_value(&go_out, bool_type, &[]),
            tensor_value(&alive_out, bool_type, &[b, c, n]),
            tensor_value(&lists_out, int64, &[b, c, k]),
        ],
        ..Default::default()
    };
    let (alive_last, lists) = (e.fresh("alive_last"), e.fresh("lists"));
    e.value_info.extend([
        tensor_value(&alive_last, bool_type, &[b, c, n]),
        tensor_value(&lists, int64, &[b, c, k]),
    ]);
    let name = e.fresh("Loop");
    e.nodes.push(NodeProto {
        input: vec![trips, go, alive, empty_lists],
        output: vec![alive_last, lists.clone()],
        name: Some(name),
        op_type: Some("Loop".into()),
        domain: Some(String::new()),
        attribute: vec![AttributeProto {
            name: Some("body".into()),
            r#type: Some(nonzero_proto::onnx::attribute_proto::AttributeType::Graph as i32),
            g: Some(body),
            ..Default::default()
        }],
        ..Default::default()
    });
    lists
}

/// ONNX Runtime's SuppressByIOU of boxes `kept` (its corners and area, first) against `each`
/// (broadcasting): a side, the intersection, each area and the union positive, and the IoU above
/// `threshold`.
pub(super) fn overlaps(
    e: &mut Emitter,
    kept: &[String],
    each: &[String],
    threshold: &str,
    zero: &str,
) -> String {
    let ix_min = e.binary("Max", &kept[0], &each[0]);
    let ix_max = e.binary("Min", &kept[1], &each[1]);
    let iy_min = e.binary("Max", &kept[2], &each[2]);
    let iy_max = e.binary("Min", &kept[3], &each[3]);
    let i_width = e.binary("Sub", &ix_max, &ix_min);
    let i_height = e.binary("Sub", &iy_max, &iy_min);
    let inter = e.binary("Mul", &i_width, &i_height);
    let areas = e.binary("Add", &kept[4], &each[4]);
    let union = e.binary("Sub", &areas, &inter);
    let iou = e.binary("Div", &inter, &union);
    let tests = [
        e.binary("Greater", &ix_max, &ix_min),
        e.binary("Greater", &iy_max, &iy_min),
        e.binary("Greater", &inter, zero),
        e.binary("Greater", &kept[4], zero),
        e.binary("Greater", &each[4], zero),
        e.binary("Greater", &union, zero),
        e.binary("Greater", &iou, threshold),
    ];
    tests[1..]
        .iter()
        .fold(tests[0].clone(), |all, t| e.binary("And", &all, t))
}
