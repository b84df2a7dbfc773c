//! Where the padding of a fixed-capacity tensor may flow: only through padding-safe readers
//! (column steps, row-wise work [`rows`], gathers at the coordinates [`coords`], masked
//! reductions, Concats [`joins`], a masked write's update list [`listed`], shape reads [`shapes`], NMS over the valid rows, the first rows
//! [`steps::prefix`], TopK on a count [`topk`], a traced loop's Split [`split`]) to sinks that
//! the compaction rewrites (crate::sinks) and graph outputs. Anything else leaves the list dynamic; the refusal names it.

use super::static_dims;
use crate::graph::{describe, int_attr};
use crate::trace::View;

mod columns;
mod coords;
mod flow;
mod index;
mod joins;
mod listed;
mod picks;
mod regroup;
mod reshape;
mod rows;
mod shapes;
mod spatial;
mod split;
mod steps;
mod topk;

pub use flow::{CountStep, Flow, GatherKind, MaskedIndex, Reduction, Regrouped, TopK};
pub use picks::RowPick;
pub use split::WholeSplit;
use std::collections::HashSet;
use steps::{shape_of_self, BOOL, INT64, ROW_OPS};
pub(crate) use steps::{BINARY, UNARY};

/// One padded tensor on the way: its padded axis, its rank, and whether it still holds
/// coordinates (-1 padding) rather than values.
#[derive(Debug, Clone)]
struct Padded {
    name: String,
    axis: usize,
    rank: usize,
    coords: bool,
    /// Coordinates of one column copied along other axes (an index_add's indices): -1 in
    /// the padding, the column's index elsewhere; only writes and Expand read them.
    spread: bool,
    /// Row-wise work ran on the padding: it may no longer hold the fill.
    dirty: bool,
    /// An integer index computed from the coordinates (`r * W + c`): the padding's one value
    /// (the coordinates' -1 through the same arithmetic); real rows are valid indices.
    index: Option<i64>,
    /// How its count follows from the selection's (`x[:L]`, rows regrouped: [`CountStep`]).
    count: Vec<CountStep>,
}

/// Follows the padded NonZero output `coordinates` (`[r, C]`, padded along axis 1) of a mask of
/// shape `mask_dims`. `Err` names the first reader that is not padding-safe.
pub fn follow(view: &View, coordinates: &str, mask_dims: &[i64]) -> Result<Flow, String> {
    follow_from(view, coordinates, &[coordinates], 1, mask_dims)
}

/// Follows padded rows of coordinates (`[C, r]`, padded along axis 0, -1 in the padding) into a
/// tensor of shape `dims`, not in row-major order: a fixed-shape NonMaxSuppression's
/// `[batch, class, box]` rows, into its scores' shape. Each of `rows` is padded alike.
pub fn follow_rows(view: &View, rows: &[&str], dims: &[i64]) -> Result<Flow, String> {
    follow_from(view, "", rows, 0, dims)
}

/// `coordinates` names a NonZero's output (row-major coordinates, which gathers may read as
/// flat positions), or nothing.
fn follow_from(
    view: &View,
    coordinates: &str,
    starts: &[&str],
    axis: usize,
    mask_dims: &[i64],
) -> Result<Flow, String> {
    let mut flow = Flow::default();
    let mut todo: Vec<Padded> = starts
        .iter()
        .map(|name| Padded {
            name: name.to_string(),
            axis,
            rank: 2,
            coords: true,
            spread: false,
            dirty: false,
            index: None,
            count: vec![],
        })
        .collect();
    let (mut scatter_updates, mut scatter_indices) = (vec![], vec![]);
    // Writes into padded data (at indices not padded here, checked at the end).
    let mut scatter_data: Vec<String> = vec![];
    let mut seen = HashSet::new();
    // (indices, gather) of gathers along the padded axis, to be proven second selections.
    let mut selected_by = vec![];
    let mut joins = joins::Joins::default();
    // (NMS output, slot) of each NMS input padded here.
    let mut nms_reads: Vec<(String, usize)> = vec![];
    let mut tk_reads = vec![];
    let mut loop_reads = vec![];
    let mut padded_axes = std::collections::HashMap::new();
    loop {
        while let Some(t) = todo.pop() {
            if !seen.insert(t.name.clone()) {
                continue;
            }
            padded_axes.insert(t.name.clone(), t.axis);
            if view.index.graph_outputs.contains(&t.name) {
                if t.spread {
                    return Err(format!(
                        "the spread coordinates {} are a graph output (not padding-safe)",
                        t.name
                    ));
                }
                flow.outputs.push((t.name.clone(), t.axis));
                // The fill of int64 values is -1, which a gather's zero padding is not.
                if t.dirty || (!t.coords && view.shapes.get(&t.name).elem_type == Some(INT64)) {
                    flow.repad.push((t.name.clone(), t.axis));
                }
            }
            let count = rows::count_dim(view, &t.name, t.axis);
            let readers = view.index.readers_of(&t.name);
            flow.record_count(view, &t.name, &t.count);
            for &(r, slot) in readers {
                let node = &view.graph.node[r];
                let op = node.op_type.as_deref().unwrap_or("");
                let refuse = || {
                    Err(format!(
                        "{op} {} reads the padded {} (not padding-safe)",
                        describe(node),
                        t.name
                    ))
                };
                // Read inside a Loop's body: cut to the count there, if the count is its trip
                // count (checked at the end).
                if slot == usize::MAX && view.is_op(node, "Loop") && !t.coords {
                    loop_reads.push((t.name.clone(), node.output[0].clone(), t.axis));
                    continue;
                }
                if slot != 0
                    && !matches!(op, "GatherND" | "Gather" | "GatherElements" | "Concat")
                    && !BINARY.contains(&op)
                    && !ROW_OPS.contains(&op)
                {
                    return refuse();
                }
                if slot == usize::MAX || !view.is_op(node, op) || node.output.is_empty() {
                    return refuse();
                }
                let step = |axis: usize, rank: usize, coords: bool| Padded {
                    name: node.output[0].clone(),
                    axis,
                    rank,
                    coords,
                    spread: false,
                    dirty: t.dirty,
                    index: None,
                    count: t.count.clone(),
                };
                if t.spread && !matches!(op, "Expand" | "ScatterElements" | "ScatterND" | "Shape") {
                    return refuse();
                }
                // The first L rows (`keep[:L]`): the count is at most L.
                if let Some(limit) = steps::prefix(view, node, op, slot, t.axis) {
                    let mut count = t.count.clone();
                    count.push(CountStep::Limit(limit));
                    todo.push(Padded {
                        count,
                        ..step(t.axis, t.rank, t.coords)
                    });
                    continue;
                }
                // A traced loop's Split, which the original runs only on whole rows.
                if let Some(split) = split::whole(view, node, op, slot, t.axis, t.rank) {
                    flow.splits.push(split);
                    continue;
                }
                if let Some(pick) = regroup::regrouped(view, node, op, slot, &t) {
                    flow.regrouped.push(pick);
                    continue;
                }
                if steps::cut_to_read_size(view, node, slot, &t) {
                    flow.cut_to_size.push(node.output[0].clone());
                    todo.push(step(t.axis, t.rank, t.coords));
                    continue;
                }
                // A masked write's update list, gathered at a running count: the padding is
                // never read ([`listed`]).
                if listed::read_at_running_count(view, node, slot, &t) {
                    continue;
                }
                match topk::visit(view, node, slot, &t, &mut flow, &mut tk_reads, &mut todo) {
                    Some(true) => continue,
                    Some(false) => return refuse(),
                    None => {}
                }
                if let Some(picked) = picks::visit(view, node, slot, &t, &mut flow) {
                    todo.push(picked);
                    continue;
                }
                if let Some(back) = (op == "Reshape" && slot == 0)
                    .then(|| reshape::regrouped_back(view, node, &t, count.as_ref()))
                    .flatten()
                {
                    todo.push(back);
                    continue;
                }
                match rows::row_work(view, node, op, slot, &t, count.as_ref()) {
                    rows::Next::Push(next) => {
                        if slot == 0 && matches!(op, "ScatterElements" | "ScatterND") {
                            scatter_data.push(node.output[0].clone());
                        }
                        // Row-wise work may regroup the rows (`next.count`'s steps).
                        let count = [t.count.clone(), next.count.clone()].concat();
                        // Every output (a Split's parts).
                        for name in &node.output {
                            let (name, count) = (name.clone(), count.clone());
                            todo.push(Padded {
                                name,
                                count,
                                ..next.clone()
                            });
                        }
                        continue;
                    }
                    rows::Next::Write { indices: true } => {
                        scatter_indices.push(node.output[0].clone());
                        continue;
                    }
                    rows::Next::Write { indices: false } => {
                        scatter_updates.push(node.output[0].clone());
                        continue;
                    }
                    rows::Next::Refuse => return refuse(),
                    rows::Next::Other => {}
                }
                let coords_2d = t.coords && t.rank == 2 && t.axis == 0;
                let rows_2d = t.coords && t.rank == 2 && t.axis == 1;
                let column = t.coords && t.rank == 1;
                match op {
                    "Transpose" if node.output.len() == 1 => {
                        let Some(to) = steps::transposed_axis(node, t.axis, t.rank) else {
                            return refuse();
                        };
                        todo.push(step(to, t.rank, t.coords));
                    }
                    // Max, Min and Concat of one input return it (`torch.cat([boxes])`).
                    "Identity" | "Cast" | "Max" | "Min" | "Concat"
                        if node.output.len() == 1 && node.input.len() == 1 =>
                    {
                        todo.push(step(t.axis, t.rank, t.coords))
                    }
                    // The dynamo exporter's Expand(p, Shape(Max(p))) is p: the Shape's only readers
                    // are such Expands, and each Expand is p again.
                    "Expand"
                        if node.input.len() == 2
                            && shape_of_self(view, &node.input[1], &t.name) =>
                    {
                        todo.push(step(t.axis, t.rank, t.coords))
                    }
                    // A second selection over the padded rows (a filter of filtered boxes).
                    "NonZero"
                        if !t.coords
                            && t.rank == 1
                            && node.input.len() == 1
                            && view.shapes.get(&t.name).elem_type == Some(BOOL) =>
                    {
                        flow.nested.push(node.output[0].clone());
                    }
                    // Gathers of values: along the padded axis at a second selection's
                    // coordinates (checked at the end), along another within each row.
                    "Gather" if !t.coords && slot == 0 && node.input.len() == 2 => {
                        match coords::values_gather(view, node, &t) {
                            Ok(Some((axis, rank))) => todo.push(step(axis, rank, false)),
                            Ok(None) => selected_by.push((node.input[1].clone(), describe(node))),
                            Err(()) => return refuse(),
                        }
                    }
                    // GatherND of padded rows at a second selection's coordinates, as Gather
                    // above; rows of coordinates too (SuperPoint's keypoints kept off the border).
                    "GatherND"
                        if (!t.coords || coords_2d)
                            && slot == 0
                            && t.axis == 0
                            && node.input.len() == 2 =>
                    {
                        if int_attr(node, "batch_dims").ok().flatten().unwrap_or(0) != 0 {
                            return refuse();
                        }
                        selected_by.push((node.input[1].clone(), describe(node)));
                    }
                    // NMS over padded boxes `[1, C, 4]` and scores `[1, 1, C]`: it runs on the
                    // valid rows only (checked below: both padded here).
                    "NonMaxSuppression"
                        if !t.coords
                            && t.rank == 3
                            && ((slot == 0 && t.axis == 1) || (slot == 1 && t.axis == 2)) =>
                    {
                        nms_reads.push((node.output[0].clone(), slot));
                    }
                    // The shape of padded rows, read only where the capacity stands for the
                    // count ([`shapes`]); `full_like(p)` is padded alike.
                    "Shape" => match shapes::visit(view, node, &t, &mut flow) {
                        Some(alike) => todo.extend(alike),
                        None => return refuse(),
                    },
                    // Columns put side by side ([`joins`]).
                    "Concat" if joins.arrive(node, &t) || joins.rejoin(node, &t) => {}
                    // Coordinates taken apart into columns ([`columns`]).
                    _ if columns::applies(op, slot, coords_2d, rows_2d, column) => {
                        match columns::step(view, node, op, &t, mask_dims) {
                            Some(next) => todo.extend(next),
                            None => return refuse(),
                        }
                    }
                    "GatherND" if coords_2d && slot == 1 && node.input.len() == 2 => {
                        let Some((kind, rank)) =
                            coords::gather_nd(view, node, &t, coordinates, mask_dims)
                        else {
                            return refuse();
                        };
                        flow.gathers.push((node.output[0].clone(), kind));
                        todo.push(step(0, rank, false));
                    }
                    "Gather" if column && slot == 1 && node.input.len() == 2 => {
                        let Some((axis, rank)) = coords::gather_column(view, node) else {
                            return refuse();
                        };
                        flow.gathers
                            .push((node.output[0].clone(), GatherKind::Axis(axis)));
                        todo.push(step(axis, rank, false));
                    }
                    "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd"
                        if !t.coords =>
                    {
                        match steps::reduction(view, node, t.axis, t.rank) {
                            Some(Ok((axis, rank))) => todo.push(step(axis, rank, false)),
                            Some(Err(reduction)) => flow.reductions.push(reduction),
                            None => return refuse(),
                        }
                    }
                    // Norms within each row (`normalize(x, dim=1)` of descriptors): row-wise.
                    "ReduceL1" | "ReduceL2" | "ReduceSumSquare" if !t.coords => {
                        match steps::reduction(view, node, t.axis, t.rank) {
                            Some(Ok((axis, rank))) => todo.push(Padded {
                                dirty: true,
                                ..step(axis, rank, false)
                            }),
                            _ => return refuse(),
                        }
                    }
                    // f(0) is not the fill (Exp, Neg's -0.0): a graph output is padded again.
                    _ if UNARY.contains(&op) && !t.coords && node.output.len() == 1 => {
                        let dirty = t.dirty || !matches!(op, "Identity" | "Cast");
                        todo.push(Padded {
                            dirty,
                            ..step(t.axis, t.rank, false)
                        })
                    }
                    _ if (BINARY.contains(&op) || op == "Where") && !t.coords => {
                        if !steps::binary_row_wise(view, node, (op, slot), &t, &mut flow) {
                            return refuse();
                        }
                        // The padding holds f(0, v) now: a graph output is padded again.
                        todo.push(Padded {
                            dirty: true,
                            ..step(t.axis, t.rank, false)
                        });
                    }
                    _ => return refuse(),
                }
            }
        }
        match joins.ready() {
            ready if ready.is_empty() => break,
            ready => todo.extend(ready),
        }
    }
    joins.finish(&mut flow)?;
    flow.check_nms(nms_reads)?;
    flow.check_topk(tk_reads)?;
    flow.check_loop_reads(loop_reads)?;
    flow.check_sized_alike(&padded_axes)?;
    flow.finish_picks();
    let partnered = !crate::partners::sharing_count(view, coordinates).is_empty();
    flow.check_writes(scatter_updates, scatter_indices, &scatter_data, partnered)?;
    flow.check_selected_by(view, selected_by)?;
    flow.padded = seen;
    Ok(flow)
}
