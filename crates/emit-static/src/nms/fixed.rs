//! A NonMaxSuppression whose inputs have fixed shapes becomes the fixed-shape form
//! ([`super::greedy`]) when the padding of its rows reaches only padding-safe readers
//! ([`crate::padding::follow_rows`]): its rows are then a padded list like a compacted NonZero's,
//! with the same sinks ([`crate::sinks`]) and a `<name>_count` where they are a graph output.

use super::greedy::{self, Sizes};
use crate::emit::Emitter;
use crate::graph::{describe, int_attr, is_onnx_op};
use crate::scope::Scope;
use crate::trace::View;
use crate::{padding, replace, sinks, static_dims, StaticError, StaticPass};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_analysis::dims::{checked_numel, MAX_PADDED_ELEMENTS};
use nonzero_rewrite_analysis::findings::Reason;
use nonzero_rewrite_graph::indexed::remove_dead;

/// An NMS and what its fixed-shape form needs.
struct Plan {
    at: usize,
    sizes: Sizes,
    /// The most boxes per batch and class ([`greedy::per_class`]), at most the rows its readers
    /// keep ([`kept_rows`]).
    k: i64,
    /// The first rows every reader keeps, where they are fewer than the boxes.
    kept: Option<i64>,
    /// `max_output_boxes_per_class` is not a constant.
    max_output_at_run_time: bool,
    flow: padding::Flow,
    sinks: sinks::Sinks,
}

/// The NMS at `at` planned, or why it stays as it is.
fn plan(view: &View, at: usize) -> Result<Plan, (Reason, String)> {
    let node = &view.graph.node[at];
    let not_fixed = |what: &str| {
        (
            Reason::ShapeNotFixed,
            format!("NonMaxSuppression: the shape of its {what} is not fixed"),
        )
    };
    let boxes = static_dims(view.shapes, &node.input[0]).ok_or_else(|| not_fixed("boxes"))?;
    let scores = static_dims(view.shapes, &node.input[1]).ok_or_else(|| not_fixed("scores"))?;
    let (&[b, n, 4], &[sb, c, sn]) = (boxes.as_slice(), scores.as_slice()) else {
        return Err(not_fixed("boxes [B, N, 4] and scores [B, C, N]"));
    };
    let float = Some(DataType::Float as i32);
    if (sb, sn) != (b, n)
        || view.shapes.get(&node.input[0]).elem_type != float
        || view.shapes.get(&node.input[1]).elem_type != float
    {
        return Err((
            Reason::DataDependent,
            "NonMaxSuppression: boxes and scores are not float32 [B, N, 4] and [B, C, N]"
                .to_string(),
        ));
    }
    // Every list the greedy Loop carries is [B, C, N]; the overlap matrix is checked where it
    // is built (greedy.rs).
    let lists = checked_numel(&[b, c, n]).filter(|&e| e <= MAX_PADDED_ELEMENTS);
    if lists.is_none() {
        return Err((
            Reason::DataDependent,
            format!("NonMaxSuppression: its scores [{b}, {c}, {n}] hold more than static mode's limit of 2^31 elements (docs/static.md, \"Capacity\")"),
        ));
    }
    let max_output = match node.input.get(2).filter(|m| !m.is_empty()) {
        // ONNX's default: no box.
        None => Some(0),
        Some(m) => view.const_ints(m).and_then(|v| v.first().copied()),
    };
    let center = int_attr(node, "center_point_box")
        .ok()
        .flatten()
        .unwrap_or(0);
    if !matches!(center, 0 | 1) {
        return Err((
            Reason::DataDependent,
            format!("NonMaxSuppression: center_point_box {center} is neither 0 nor 1"),
        ));
    }
    let k = greedy::per_class(max_output, n);
    let kept = kept_rows(view, &node.output[0], 0);
    let flow = padding::follow_rows(view, &[&node.output[0]], &[b, c, n])
        .map_err(|why| (Reason::PaddingUnsafe, why))?;
    let sinks = sinks::plan(view, &flow)?;
    Ok(Plan {
        at,
        sizes: Sizes {
            batches: b,
            classes: c,
            boxes: n,
        },
        k: kept.map_or(k, |d| k.min(d)),
        kept: kept.filter(|&d| d < k),
        max_output_at_run_time: max_output.is_none(),
        flow,
        sinks,
    })
}

/// How many steps from the rows to a Slice are followed.
const MAX_STEPS: usize = 8;

/// The most rows of `rows` (the NMS's output, or a column of it) any reader keeps, where every
/// reader keeps a prefix: torchvision's `keep[:detections_per_img]` after `batched_nms`, through
/// the column Gather and Squeeze. The rows are in (batch, class, pick) order, so the first D of
/// them hold at most D picks of any one list: the Loop stops after D picks per list and the
/// first D rows are the original's. `None` where a reader may read more (a reduction, an output).
fn kept_rows(view: &View, rows: &str, depth: usize) -> Option<i64> {
    if depth > MAX_STEPS || view.index.graph_outputs.contains(rows) {
        return None;
    }
    let readers = view.index.readers_of(rows);
    if readers.is_empty() {
        return None;
    }
    let mut most = 0;
    for &(r, slot) in readers {
        let node = &view.graph.node[r];
        let op = node.op_type.as_deref().unwrap_or("");
        if slot != 0 || !view.is_op(node, op) || node.output.len() != 1 {
            return None;
        }
        let constant = |i: usize| node.input.get(i).and_then(|n| view.const_ints(n));
        let kept = match op {
            // A column of the rows ([N, 3] -> [N] or [N, 1]).
            "Gather" => {
                let axis = int_attr(node, "axis").ok().flatten().unwrap_or(0);
                (axis == 1 && constant(1)?.len() == 1).then_some(())?;
                kept_rows(view, &node.output[0], depth + 1)?
            }
            "Squeeze" | "Unsqueeze" => {
                let axes = constant(1).or_else(|| {
                    let attr = node
                        .attribute
                        .iter()
                        .find(|a| a.name.as_deref() == Some("axes"));
                    attr.map(|a| a.ints.clone())
                })?;
                // Positive axes only: a negative one may name axis 0 (`[N]` unsqueezed at -2
                // puts the rows on axis 1, where a Slice of axis 0 keeps all of them).
                (!axes.is_empty() && axes.iter().all(|&a| a > 0)).then_some(())?;
                kept_rows(view, &node.output[0], depth + 1)?
            }
            "Cast" | "Identity" => kept_rows(view, &node.output[0], depth + 1)?,
            // `x[:D]`: starts 0, axes 0 (or none: the first), steps 1 (or none).
            "Slice" => {
                let single = |v: Option<Vec<i64>>, want: i64| v.is_some_and(|v| v == [want]);
                let axes_first =
                    node.input.get(3).is_none_or(|a| a.is_empty()) || single(constant(3), 0);
                let unit_steps =
                    node.input.get(4).is_none_or(|s| s.is_empty()) || single(constant(4), 1);
                let end = constant(2).filter(|e| e.len() == 1)?[0];
                (single(constant(1), 0) && axes_first && unit_steps && end >= 0).then_some(end)?
            }
            _ => return None,
        };
        most = most.max(kept);
    }
    Some(most)
}

impl StaticPass<'_> {
    /// Rewrites the first NMS of `graph` not yet tried into its fixed-shape form; `false` when
    /// none is left to try. An NMS that cannot be is recorded with its reason.
    pub(crate) fn fixed_nms(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
    ) -> Result<bool, StaticError> {
        let Some(at) = graph.node.iter().position(|n| {
            is_onnx_op(n, "NonMaxSuppression")
                && n.input.len() >= 2
                && n.output.len() == 1
                && !self.known.contains_key(&n.output[0])
        }) else {
            return Ok(false);
        };
        let output = graph.node[at].output[0].clone();
        let (index, shapes) = scope.shapes_of(graph);
        let view = View {
            graph,
            index: &index,
            shapes: &shapes,
        };
        let mut planned = plan(&view, at);
        if let (Ok(p), true) = (&planned, scope.depth > 0) {
            if let Some((name, _)) = p.flow.outputs.first() {
                planned = Err((
                    Reason::PaddingUnsafe,
                    format!(
                        "the padded '{name}' is an output of {}, whose length would change",
                        scope.label
                    ),
                ));
            }
        }
        let plan = match planned {
            Ok(plan) => plan,
            Err(why) => {
                self.known.insert(output, why);
                return Ok(true);
            }
        };
        let capacity = self.capacity_for(&plan.flow.outputs)?;
        let node = graph.node[plan.at].clone();
        let mut e = Emitter::new(graph, scope, &describe(&node));
        let candidates = node
            .input
            .get(4)
            .filter(|t| !t.is_empty())
            .map(|threshold| e.binary("Greater", &node.input[1], threshold));
        let max_output = match node.input.get(2).filter(|m| !m.is_empty()) {
            Some(m) => m.clone(),
            None => e.scalar(0),
        };
        let inputs = greedy::Inputs {
            boxes: &node.input[0],
            scores: &node.input[1],
            candidates,
            max_output: &max_output,
            max_output_at_run_time: plan.max_output_at_run_time,
            iou_threshold: node
                .input
                .get(3)
                .filter(|t| !t.is_empty())
                .map(String::as_str),
            center_point_box: int_attr(&node, "center_point_box").ok().flatten() == Some(1),
        };
        let Sizes {
            batches: b,
            classes: c,
            boxes: n,
        } = plan.sizes;
        let compacted = greedy::emit(&mut e, &inputs, plan.sizes, plan.k, capacity, &output)
            .expect("bool lists always compact");
        let kept = plan.kept.map_or(String::new(), |d| {
            format!(" (its readers keep the first {d} rows)")
        });
        let line = format!(
            "fixed-shape NMS: NonMaxSuppression {} over [{b}, {c}, {n}] boxes became {}{kept}, its rows [{}, 3] padded with -1 (outputs: {})",
            describe(&node),
            greedy::form(e.target.portable(), n, plan.k),
            compacted.capacity,
            crate::compact::outputs_text(&plan.flow)
        );
        let inputs = replace(graph, plan.at, e);
        self.report.removed_nodes += remove_dead(graph, inputs);
        self.emit_sinks(graph, scope, &plan.flow, plan.sinks, &compacted)?;
        self.remove_unread(graph);
        // What NMS keeps has a fixed size now: selections of it whose shape was not fixed may be.
        self.known
            .retain(|_, (reason, _)| *reason != Reason::ShapeNotFixed);
        self.summary
            .rewrites
            .push(("fixed-nms".to_string(), scope.line(line)));
        self.summary
            .compacted
            .push((scope.label.to_string(), describe(&node), compacted.capacity));
        Ok(true)
    }
}
