//! `Shape` of padded rows: in the original it reads the count, here the capacity. That is safe
//! only where the capacity stands for the count: as the shape of a tensor padded alike (an
//! Expand or Reshape to it, `full_like`), or as the size of the padded axis in a Reshape or a
//! Slice of data padded alike (`pred.reshape(len(boxes), -1, 4)`, a split by `len(boxes)`).

use super::steps::{shape_of_self, whole_shape};
use crate::infer::Dim;
use crate::trace::View;

/// How many steps may sit between the Shape and where its size is used.
pub(super) const MAX_STEPS: usize = 6;

/// A tensor padded alike that a shape read makes: its name, padded axis and rank.
pub(super) type Alike = (String, usize, usize);

/// `Shape` of the padded `t`: the tensors padded alike it makes (values, dirty), the Loops it
/// counts recorded in `flow`; `None` where the read is not safe.
pub(super) fn visit(
    view: &View,
    node: &nonzero_proto::onnx::NodeProto,
    t: &super::Padded,
    flow: &mut super::Flow,
) -> Option<Vec<super::Padded>> {
    let (mut trips, mut sized) = (vec![], vec![]);
    let uses = (&mut trips, &mut sized, &mut flow.sized_slices);
    let alike = read(view, &node.output[0], &t.name, (t.axis, t.rank), uses)?;
    let counted = trips.into_iter().map(|l| (l, t.name.clone()));
    flow.counted_loops.extend(counted);
    flow.sized_alike.extend(sized);
    let made = alike.into_iter().map(|(name, axis, rank)| super::Padded {
        name,
        axis,
        rank,
        coords: false,
        spread: false,
        dirty: true,
        index: None,
        count: t.count.clone(),
    });
    Some(made.collect())
}

/// `Shape(q)` -> `shape`, for `q` padded along `axis` of `rank`: the tensors padded alike it
/// makes (`full_like(q)`, or `zeros(len(q), ...)`: ConstantOfShape), or `None` where a read is
/// not one the capacity stands in for. A Loop whose trip count is the size itself
/// (`for i in range(len(boxes))`, Keypoint R-CNN's heatmaps to keypoints) is added to `trips`:
/// it gets the count, and so runs as the original's.
fn read(
    view: &View,
    shape: &str,
    q: &str,
    (axis, rank): (usize, usize),
    (trips, alike, sliced): (
        &mut Vec<String>,
        &mut Vec<(String, usize)>,
        &mut Vec<String>,
    ),
) -> Option<Vec<Alike>> {
    if shape_of_self(view, shape, q) || shape_read_alike(view, shape, q) {
        return Some(vec![]);
    }
    if filled_like(view, shape) {
        let readers = view.index.readers_of(shape);
        return Some(
            readers
                .iter()
                .map(|&(r, _)| (view.graph.node[r].output[0].clone(), axis, rank))
                .collect(),
        );
    }
    let count = super::rows::count_dim(view, q, axis)?;
    // The whole Shape of a list is the list of its one size too (TorchScript's index
    // broadcast, `Where(Shape(q) == -1, 1, Shape(q))`); else its readers pick the size below.
    if rank == 1 && whole_shape(view, shape).is_some() {
        let mut whole_trips = vec![];
        let mut uses = SizeUses {
            count: &count,
            made: vec![],
            trips: &mut whole_trips,
            alike: vec![],
            sized_slices: vec![],
        };
        if uses.used_as_size(view, shape, Some(0), true, 0) {
            let (made, mut used_alike, mut cuts) = (uses.made, uses.alike, uses.sized_slices);
            alike.append(&mut used_alike);
            sliced.append(&mut cuts);
            trips.append(&mut whole_trips);
            return Some(made);
        }
    }
    let mut uses = SizeUses {
        count: &count,
        made: vec![],
        trips,
        alike: vec![],
        sized_slices: vec![],
    };
    // `Shape(q, start, end)` of the padded axis alone (the dynamo exporter's `len(q)`): a list
    // of that one size.
    if shape_of_axis(view, shape, axis, rank) {
        let sizes = uses.used_as_size(view, shape, Some(0), true, 0);
        alike.append(&mut uses.alike);
        sliced.append(&mut uses.sized_slices);
        return sizes.then_some(uses.made);
    }
    let sizes = view.index.readers_of(shape).iter().all(|&(r, slot)| {
        let node = &view.graph.node[r];
        let picked = (view.is_op(node, "Gather") && slot == 0 && node.input.len() == 2)
            .then(|| view.const_ints(&node.input[1]))
            .flatten()
            .filter(|i| i.len() == 1)
            .and_then(|i| crate::infer::axis_in(i[0], rank))
            .or_else(|| one_size_sliced(view, node, slot, rank));
        // Another axis's size is fixed: the same in the original, whatever reads it.
        if picked.is_some_and(|p| p != axis && q_dim_fixed(view, q, p)) {
            return true;
        }
        let at = (view.shapes.get(&node.output[0]).rank() == Some(1)).then_some(0);
        picked == Some(axis) && uses.used_as_size(view, &node.output[0], at, true, 0)
    });
    alike.append(&mut uses.alike);
    sliced.append(&mut uses.sized_slices);
    sizes.then_some(uses.made)
}

/// The axis `Slice(shape, [a], [a + 1])` (`q.shape[a:a + 1]`) keeps of the sizes of a rank-`rank`
/// tensor: a list of that one size.
fn one_size_sliced(
    view: &View,
    node: &nonzero_proto::onnx::NodeProto,
    slot: usize,
    rank: usize,
) -> Option<usize> {
    (view.is_op(node, "Slice") && slot == 0).then_some(())?;
    let operand = |i: usize| node.input.get(i).filter(|n| !n.is_empty());
    let ints = |i: usize| view.const_ints(operand(i)?);
    let unit = |i: usize, value: i64| operand(i).is_none() || ints(i) == Some(vec![value]);
    let (start, end) = (ints(1)?, ints(2)?);
    let ([start], [end]) = (start.as_slice(), end.as_slice()) else {
        return None;
    };
    let axis = crate::infer::axis_in(*start, rank)?;
    (*end == axis as i64 + 1 && unit(3, 0) && unit(4, 1)).then_some(axis)
}

/// True when `shape` is `Shape(q, start, end)` of axis `axis` alone, q of rank `rank`.
fn shape_of_axis(view: &View, shape: &str, axis: usize, rank: usize) -> bool {
    let Some(node) = view.producer(shape) else {
        return false;
    };
    let attr = |name: &str| crate::graph::int_attr(node, name).ok().flatten();
    // A whole Shape (no start or end) is read by the steps below, as a list of every size.
    if attr("start").is_none() && attr("end").is_none() {
        return false;
    }
    let bound = |v: Option<i64>, default: i64| {
        let v = v.unwrap_or(default);
        (if v < 0 { v + rank as i64 } else { v }).clamp(0, rank as i64)
    };
    let (start, end) = (bound(attr("start"), 0), bound(attr("end"), rank as i64));
    view.is_op(node, "Shape") && start == axis as i64 && end == start + 1
}

/// True when axis `at` of `q` has a fixed size.
fn q_dim_fixed(view: &View, q: &str, at: usize) -> bool {
    let dims = view.shapes.get(q).dims;
    dims.is_some_and(|d| d.get(at).and_then(Dim::as_static).is_some())
}

/// Where the padded axis's size is used: the tensors padded alike it makes (`made`), and the
/// Loops it gives their trip count (`trips`, by first output).
struct SizeUses<'a> {
    count: &'a Dim,
    made: Vec<Alike>,
    trips: &'a mut Vec<String>,
    /// (tensor, axis) taken to be padded alike: the flow must pad each along that axis.
    alike: Vec<(String, usize)>,
    /// The Slices (by output) cutting such a tensor to this size: the capacity's.
    sized_slices: Vec<String>,
}

/// `size` (the padded axis's size, or a sum or cast of it; at position `at` of a list of sizes
/// when it is one) is used only as the size of data padded alike: a Reshape's shape, a Slice's
/// end, or a ConstantOfShape's shape (`zeros(len(q), ...)`, padded alike along `at`: `made`).
impl SizeUses<'_> {
    fn used_as_size(
        &mut self,
        view: &View,
        size: &str,
        at: Option<usize>,
        exact: bool,
        depth: usize,
    ) -> bool {
        if depth > MAX_STEPS {
            return false;
        }
        let count = self.count;
        let readers = view.index.readers_of(size);
        !readers.is_empty()
            && readers.iter().all(|&(r, slot)| {
                let node = &view.graph.node[r];
                let op = node.op_type.as_deref().unwrap_or("");
                let has_count = |name: &str| {
                    let dims = view.shapes.get(name).dims;
                    dims.is_some_and(|d| d.contains(count))
                };
                let data_alike = || has_count(&node.input[0]);
                // Rows regrouped by a Reshape on their way back to rows, which this Reshape
                // is (reshape.rs `regrouped_back`).
                let regrouped = || {
                    view.producer(&node.input[0])
                        .filter(|p| view.is_op(p, "Reshape"))
                        .is_some_and(|p| has_count(&p.input[0]))
                };
                if view.is_op(node, "TopK") {
                    return slot == 1 && data_alike();
                }
                // The size itself (no sum of it) as a Loop's trip count: the count stands there.
                if view.is_op(node, "Loop") {
                    let scalar = view.shapes.get(size).rank() == Some(0);
                    if slot == 0 && exact && scalar && !node.output.is_empty() {
                        self.trips.push(node.output[0].clone());
                        return true;
                    }
                    return false;
                }
                if !view.is_op(node, op) || node.output.len() != 1 {
                    return false;
                }
                match op {
                    // `min(K, len(q))` (torchvision's `_topk_min`): k of a TopK of data padded
                    // alike, where the capacity stands in for the count as the TopK's count is
                    // min(count, k) (topk.rs).
                    "ReduceMin" | "Min" => {
                        let others_fixed = node
                            .input
                            .iter()
                            .enumerate()
                            .all(|(i, n)| i == slot || view.const_ints(n).is_some());
                        let list = op == "Min" || super::topk::minimum_of_list(view, size);
                        others_fixed
                            && list
                            && super::topk::used_as_k(view, &node.output[0], count, depth + 1)
                    }
                    "Reshape" if slot == 1 => data_alike() || regrouped(),
                    "Expand" if slot == 1 && data_alike() => true,
                    // `zeros(len(q), ...)` as the dynamo exporter writes it: a fixed fill
                    // expanded to the sizes, padded alike along `at`.
                    "Expand" => {
                        // The sizes' own rank: a fill of more axes would shift `at`.
                        let out_rank = view.shapes.get(&node.output[0]).rank();
                        let listed =
                            super::static_dims(view.shapes, size).and_then(|d| d.first().copied());
                        let fill =
                            super::static_dims(view.shapes, &node.input[0]).is_some_and(|d| {
                                d.iter().all(|&x| x == 1)
                                    && listed.is_some_and(|n| d.len() as i64 <= n)
                            });
                        let made = slot == 1 && fill && at.is_some() && out_rank.is_some();
                        if let (true, Some(at), Some(rank)) = (made, at, out_rank) {
                            self.made.push((node.output[0].clone(), at, rank));
                        }
                        made
                    }
                    // The list itself reshaped to a list, or TorchScript's expand of -1
                    // (`Where(sizes == -1, 1, sizes)`): still sizes, the count never -1.
                    "Reshape" | "Equal" | "Where" => {
                        let fixed_rest = node.input.iter().enumerate().all(|(i, n)| {
                            i == slot || view.const_ints(n).is_some() || op == "Where"
                        });
                        let rank = view.shapes.get(&node.output[0]).rank();
                        fixed_rest
                            && rank == Some(1)
                            && self.used_as_size(view, &node.output[0], at, false, depth + 1)
                    }
                    // `x[:len(boxes)]`: the end, from a start of 0 (the whole of the capacity).
                    "Slice" => {
                        let from_zero = node
                            .input
                            .get(1)
                            .and_then(|s| view.const_ints(s))
                            .is_some_and(|s| s.iter().all(|&v| v == 0));
                        // Data whose size there is not the count's by name (a shape computed from
                        // the selection's rows) is padded alike if the flow pads it (checked at
                        // the end: `alike`).
                        let axes = node.input.get(3).and_then(|a| view.const_ints(a));
                        let axis = match axes.as_deref() {
                            Some([a]) => view
                                .shapes
                                .get(&node.input[0])
                                .rank()
                                .and_then(|r| crate::infer::axis_in(*a, r)),
                            None => Some(0),
                            _ => None,
                        };
                        let deferred = !data_alike() && axis.is_some() && at.is_some();
                        if slot == 2 && from_zero && deferred {
                            let axis = axis.unwrap_or(0);
                            self.alike.push((node.input[0].clone(), axis));
                            self.sized_slices.push(node.output[0].clone());
                            return true;
                        }
                        slot == 2 && from_zero && data_alike()
                    }
                    // `arange(len(q))` (torchvision's `mask_probs[arange(N), labels]`): 0, 1, ...
                    // along the padded axis, the padding's values past the count.
                    "Range" if slot == 1 && exact => {
                        let from_zero = view.const_ints(&node.input[0]) == Some(vec![0]);
                        let by_one = view.const_ints(&node.input[2]) == Some(vec![1]);
                        if from_zero && by_one {
                            self.made.push((node.output[0].clone(), 0, 1));
                        }
                        from_zero && by_one
                    }
                    "ConstantOfShape" => {
                        let rank = view.shapes.get(&node.output[0]).rank();
                        if let (Some(at), Some(rank)) = (at, rank) {
                            self.made.push((node.output[0].clone(), at, rank));
                        }
                        at.is_some()
                    }
                    "Unsqueeze" | "Squeeze" | "Cast" | "Identity" => {
                        let rank = view.shapes.get(&node.output[0]).rank();
                        let at = at.or((op == "Unsqueeze" && rank == Some(1)).then_some(0));
                        slot == 0 && self.used_as_size(view, &node.output[0], at, exact, depth + 1)
                    }
                    // A size in a list of sizes, or the end of a split (`0 + len(boxes)`).
                    "Concat" | "Add" => {
                        let others_fixed = node
                            .input
                            .iter()
                            .enumerate()
                            .all(|(i, n)| i == slot || view.const_ints(n).is_some());
                        // Its place in the list: the sizes before it.
                        let before: Option<usize> = node.input[..slot]
                            .iter()
                            .map(|n| view.const_ints(n).map(|v| v.len()))
                            .sum();
                        let at = match op {
                            "Concat" => at.zip(before).map(|(a, b)| a + b),
                            _ => at,
                        };
                        others_fixed
                            && self.used_as_size(view, &node.output[0], at, false, depth + 1)
                    }
                    _ => false,
                }
            })
    }
}

/// `Shape(q)` of a padded `q`, read only as the shape of an Expand or a Reshape whose data is
/// padded alike (the dynamo and TorchScript exporters' `p.expand_as(q)`, `p.view_as(q)`): the
/// shape is the capacity's then, as the data's is.
fn shape_read_alike(view: &View, shape: &str, q: &str) -> bool {
    if whole_shape(view, shape).is_none() {
        return false;
    }
    let Some(q_dims) = view.shapes.get(q).dims else {
        return false;
    };
    let padded: Vec<&Dim> = q_dims.iter().filter(|d| d.as_static().is_none()).collect();
    let [count] = padded[..] else { return false };
    // The shape's readers: Expand or Reshape of data padded alike, or a Concat (axis 0) of
    // sizes whose readers are (`x.view(*q.shape, 1)`).
    let sized = |name: &str| {
        view.index.readers_of(name).iter().all(|&(r, slot)| {
            let reader = &view.graph.node[r];
            let data = view.shapes.get(&reader.input[0]).dims;
            slot == 1
                && (view.is_op(reader, "Expand") || view.is_op(reader, "Reshape"))
                && data.is_some_and(|d| d.contains(count))
        })
    };
    view.index.readers_of(shape).iter().all(|&(r, _)| {
        let reader = &view.graph.node[r];
        let concat = view.is_op(reader, "Concat")
            && crate::graph::int_attr(reader, "axis").ok().flatten() == Some(0);
        if concat {
            sized(&reader.output[0])
        } else {
            sized(shape)
        }
    })
}

/// True when `shape` is a whole `Shape` output read only by ConstantOfShape (`full_like`) or as
/// the shape of an Expand (`c.expand_as(q)`, torchvision's labels): tensors of q's shape.
fn filled_like(view: &View, shape: &str) -> bool {
    let readers = view.index.readers_of(shape);
    whole_shape(view, shape).is_some()
        && !readers.is_empty()
        && readers.iter().all(|&(r, slot)| {
            let reader = &view.graph.node[r];
            let made = (slot == 0 && view.is_op(reader, "ConstantOfShape"))
                || (slot == 1 && view.is_op(reader, "Expand"));
            made && reader.output.len() == 1
        })
}
