//! Mask, then NonMaxSuppression: `nms(boxes[m], scores[m])` as torchvision exports it,
//! `NonMaxSuppression(Unsqueeze(boxes[m]), Unsqueeze(Unsqueeze(scores[m])), ...)` (with Casts),
//! runs NMS over every box instead, so that NMS's input no longer depends on values (IREE cannot
//! compile NMS on a NonZero-filtered box count).
//!
//! - The boxes masked out are scored -inf and a score threshold is given (-inf where the model
//!   has none): no threshold passes -inf, so NMS selects only among the candidates, and every
//!   row of its output names one. That NMS has fixed input shapes: the fixed-shape form
//!   ([`greedy`], [`fixed`]) then pads its rows.
//! - `selected_indices` names boxes by their index among all; the original's index among the
//!   masked ones is `CumSum(m) - 1` at it, so the output is remapped there.
//! - A gather of `boxes[m]` (or any x[m] by the same mask) at the selected box column reads
//!   `x` at the unremapped column instead ([`reader`]), which leaves the selections dead.
//!
//! Exact but where a candidate's own score is NaN (ONNX Runtime's NMS has no order for it) or,
//! without a score threshold, -inf (it passes no threshold; for the NPU targets, whose masked
//! score is the lowest finite one ([`Emitter::unscored`]), also that lowest finite score).

mod fixed;
mod greedy;
mod picks;
mod unrolled;

use super::emit::{ints_attr, Emitter};
use super::static_dims;
use crate::graph::{describe, int_attr};
use crate::trace::{trace, View};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;
use nonzero_rewrite_match::gathers::leading_dims_match;
use std::collections::HashMap;

/// How many Cast/Unsqueeze/Identity steps may sit between a selection and NMS.
const MAX_STEPS: usize = 4;

/// `x[m]` along axis 0 for a 1-D mask m: (x, m).
fn selection(view: &View, name: &str) -> Option<(String, String)> {
    let node = view.producer(name)?;
    let (gather_nd, gather) = (view.is_op(node, "GatherND"), view.is_op(node, "Gather"));
    if !(gather_nd || gather) || node.input.len() != 2 {
        return None;
    }
    let t = trace(view, &node.input[1])?;
    let axis0 = int_attr(node, "axis").ok()?.unwrap_or(0) == 0;
    let batch0 = int_attr(node, "batch_dims").ok()?.unwrap_or(0) == 0;
    let form = if gather_nd {
        !t.squeezed && batch0
    } else {
        t.squeezed && axis0
    };
    if !form || t.mask_rank != 1 {
        return None;
    }
    leading_dims_match(view, &node.input[0], &t, 1).ok()?;
    Some((node.input[0].clone(), t.mask))
}

/// `name` as steps that commute with a row selection (Cast, Identity, Unsqueeze) of a
/// selection: the selection's (x, m).
fn through_steps(view: &View, name: &str) -> Option<(String, String)> {
    let mut at = name.to_string();
    for _ in 0..=MAX_STEPS {
        if let Some(found) = selection(view, &at) {
            return Some(found);
        }
        let node = view.producer(&at)?;
        let op = node.op_type.as_deref()?;
        // A Cast is elementwise: NMS gets the same cast of every box.
        let ok = matches!(op, "Unsqueeze" | "Identity" | "Cast");
        if !ok || !view.is_op(node, op) || node.input.is_empty() {
            return None;
        }
        at = node.input[0].clone();
    }
    None
}

/// A mask-then-NMS chain.
pub struct NmsRewrite {
    pub node: usize,
    boxes: String,
    scores: String,
    mask: String,
    mask_type: i32,
    count: i64,
    /// Element types of boxes and scores, and of NMS's inputs (the Casts between).
    boxes_type: i32,
    scores_type: i32,
    box_type: i32,
    score_type: i32,
    pub line: String,
}

/// The first NMS whose boxes and scores are selections by one 1-D mask of fixed size.
pub fn find(view: &View) -> Option<NmsRewrite> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        if !view.is_op(node, "NonMaxSuppression") || node.input.len() < 2 || node.output.len() != 1 {
            return None;
        }
        let (boxes, box_mask) = through_steps(view, &node.input[0])?;
        let (scores, mask) = through_steps(view, &node.input[1])?;
        // NMS wants [1, n, 4] boxes and [1, 1, n] scores: the selections' rows with leading 1s.
        let rank3 = |name: &str, last: usize| {
            let dims = view.shapes.info(name)?.dims.clone()?;
            let ones = dims.len() == 3 && (0..last).all(|a| dims[a].as_static() == Some(1));
            ones.then_some(())
        };
        rank3(&node.input[0], 1)?;
        rank3(&node.input[1], 2)?;
        let mask_dims = static_dims(view.shapes, &mask)?;
        if box_mask != mask || static_dims(view.shapes, &boxes)? != [mask_dims[0], 4] {
            return None;
        }
        let line = format!(
            "mask then NMS: NonMaxSuppression {} over {boxes}[{mask}], {scores}[{mask}] runs over every box, the masked ones scored -inf; its box indices are remapped with CumSum({mask}) - 1",
            describe(node)
        );
        Some(NmsRewrite {
            node: i,
            mask_type: view.shapes.get(&mask).elem_type?,
            box_type: view.shapes.get(&node.input[0]).elem_type?,
            score_type: view.shapes.get(&node.input[1]).elem_type?,
            count: mask_dims[0],
            boxes_type: view.shapes.get(&boxes).elem_type?,
            scores_type: view.shapes.get(&scores).elem_type?,
            boxes,
            scores,
            mask,
            line,
        })
    })
}

impl NmsRewrite {
    fn cast(&self, e: &mut Emitter, x: &str, from: i32, to: DataType) -> String {
        if from == to as i32 {
            x.to_string()
        } else {
            e.cast(x, to)
        }
    }

    /// Writes the NMS over every box and the remap; the last node outputs `output`. Returns the
    /// unremapped `selected_indices` (box indices among all boxes) and the mask, for [`reader`].
    pub fn emit(&self, e: &mut Emitter, nms: &NodeProto, output: &str) -> Option<(String, String)> {
        let n = self.count;
        let score_type = DataType::try_from(self.score_type).ok()?;
        let box_type = DataType::try_from(self.box_type).ok()?;
        let axis1 = || vec![super::emit::int_attr("axis", 1)];
        let mut selection = super::mask::Selection::of(e, &self.mask, self.mask_type, n)?;
        let boxes = self.cast(e, &self.boxes, self.boxes_type, box_type);
        let boxes = e.reshape(&boxes, &[1, n, 4]);
        let scores = self.cast(e, &self.scores, self.scores_type, score_type);
        // The boxes masked out are scored -inf, which no score threshold passes (a model
        // without one gets -inf, which every score but -inf passes): NMS takes only the
        // candidates, so every row of its output names one, and none needs cutting off (a Slice
        // to a count would keep the rows' number dynamic). Not NaN: OpenVINO 2026.4's CPU
        // plugin finds NaN > -inf true here.
        let lowest = e.unscored(self.score_type)?;
        let scores = e.where_(&selection.selected, &scores, &lowest);
        let scores = e.reshape(&scores, &[1, 1, n]);
        let threshold = match nms.input.get(4).filter(|t| !t.is_empty()) {
            Some(threshold) => threshold.clone(),
            None => e.reshape(&lowest, &[1]),
        };
        let mut inputs = vec![boxes, scores];
        for slot in 2..4 {
            inputs.push(nms.input.get(slot).cloned().unwrap_or_default());
        }
        inputs.push(threshold);
        let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let kept = e.op("NonMaxSuppression", &inputs, nms.attribute.clone());
        // Box index among all -> among the masked ones. The portable targets' running count
        // is an int32 CumSum (onnx2tf's flatbuffer_direct miscompiles an int64 one).
        let running = super::portable::running_count(e, &mut selection);
        let one = e.scalar(1);
        let position = e.binary("Sub", &running, &one);
        let kept_boxes = if matches!(e.target, crate::Target::Litert | crate::Target::Qnn) {
            // onnx2tf's flatbuffer_direct leaves a Gather of one column by a scalar without a
            // fixed shape (-1 in its shape_signature, and in everything after it); it keeps a
            // Slice's and a Squeeze's. QNN HTP runs them too, so the qnn form converts as well.
            let (start, end, axes) = (e.ints(&[2]), e.ints(&[3]), e.ints(&[1]));
            let column = e.op("Slice", &[&kept, &start, &end, &axes], vec![]);
            match e.opset() {
                ..13 => e.op("Squeeze", &[&column], vec![ints_attr("axes", &[1])]),
                _ => e.op("Squeeze", &[&column, &axes], vec![]),
            }
        } else {
            let box_column = e.scalar(2);
            e.op("Gather", &[&kept, &box_column], axis1())
        };
        let remapped = e.op("Gather", &[&position, &kept_boxes], vec![]);
        let remapped = e.unsqueeze(&remapped, &[1]);
        let (start, end, axes) = (e.ints(&[0]), e.ints(&[2]), e.ints(&[1]));
        let batch_class = e.op("Slice", &[&kept, &start, &end, &axes], vec![]);
        e.concat(&[&batch_class, &remapped], 1);
        e.finish_as(output);
        Some((kept, self.mask.clone()))
    }
}

/// A gather of a selection at a rewritten NMS's box column ([`reader`]).
pub struct NmsReader<'a> {
    pub node: usize,
    /// The selection's data x.
    x: String,
    /// The steps from the NMS output to the index, first first.
    steps: Vec<&'a NodeProto>,
    /// The unremapped NMS output.
    unremapped: String,
    pub line: String,
}

/// `Gather(x[m], I, axis=0)` or `GatherND(x[m], I)` (I `[.., 1]`) where I is the box column of
/// a rewritten NMS's output, taken through column steps: it reads `x` at the same steps of the
/// unremapped output. `full` maps each rewritten NMS output to its unremapped one and the mask
/// its boxes were selected by: only a selection by that same mask is read this way.
pub fn reader<'a>(
    view: &View<'a>,
    full: &HashMap<String, (String, String)>,
) -> Option<NmsReader<'a>> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let gather_nd = view.is_op(node, "GatherND");
        let gather = view.is_op(node, "Gather") && int_attr(node, "axis").ok()?.unwrap_or(0) == 0;
        if !(gather || gather_nd) || node.input.len() != 2 || node.output.len() != 1 {
            return None;
        }
        if gather_nd && int_attr(node, "batch_dims").ok()?.unwrap_or(0) != 0 {
            return None;
        }
        let (x, mask) = selection(view, &node.input[0])?;
        let (mut steps, source) = box_column_steps(view, &node.input[1])?;
        let (unremapped, nms_mask) = full.get(&source)?.clone();
        (mask == nms_mask).then_some(())?;
        if gather_nd {
            let dims = view.shapes.info(&node.input[1])?.dims.clone()?;
            (dims.last()?.as_static() == Some(1)).then_some(())?;
        }
        steps.reverse();
        let line = format!(
            "mask then NMS: {} gathers {} at NMS's box column: it reads {x} at the unremapped boxes",
            describe(node),
            node.input[0]
        );
        Some(NmsReader {
            node: i,
            x,
            steps,
            unremapped,
            line,
        })
    })
}

impl NmsReader<'_> {
    /// The same steps on the unremapped output, then the gather of x; the last node outputs
    /// `output`.
    pub fn emit(&self, e: &mut Emitter, gather: &NodeProto, output: &str) {
        let mut previous = self.unremapped.clone();
        for step in &self.steps {
            let mut inputs: Vec<&str> = step.input.iter().map(String::as_str).collect();
            inputs[0] = &previous;
            let op = step.op_type.clone().unwrap_or_default();
            previous = e.op(&op, &inputs, step.attribute.clone());
        }
        let op = gather.op_type.clone().unwrap_or_default();
        e.op(&op, &[&self.x, &previous], gather.attribute.clone());
        e.finish_as(output);
    }
}

/// The steps (last first) from an NMS output to `name` when they pick its box column and only
/// reshape it: `Gather(axis=1, 2)`, `Slice` of column 2, then Squeeze, Unsqueeze, Reshape.
fn box_column_steps<'a>(view: &View<'a>, name: &str) -> Option<(Vec<&'a NodeProto>, String)> {
    let mut steps = vec![];
    let mut at = name.to_string();
    for _ in 0..=MAX_STEPS {
        let node = view.producer(&at)?;
        let op = node.op_type.as_deref()?;
        if node.input.is_empty() || node.output.len() != 1 || !view.is_op(node, op) {
            return None;
        }
        let consts = |slot: usize| view.const_ints(node.input.get(slot)?);
        steps.push(node);
        match op {
            "Squeeze" | "Unsqueeze" | "Reshape" | "Identity" => {
                let operands_fixed = node.input.len() == 1 || consts(1).is_some();
                operands_fixed.then_some(())?;
            }
            "Gather" => {
                let column = int_attr(node, "axis").ok()? == Some(1) && consts(1)? == [2];
                return column.then_some((steps, node.input[0].clone()));
            }
            "Slice" => {
                let column = consts(1)? == [2]
                    && consts(2)? == [3]
                    && consts(3)? == [1]
                    && node
                        .input
                        .get(4)
                        .is_none_or(|s| s.is_empty() || consts(4) == Some(vec![1]));
                return column.then_some((steps, node.input[0].clone()));
            }
            _ => return None,
        }
        at = node.input[0].clone();
    }
    None
}
