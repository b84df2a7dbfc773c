//! `Transpose(Gather(grid, positions, axis = 1), perm = [1, 0])` of a constant `[rank, slots]`
//! grid (the coordinates of [`crate::portable::coordinates`], transposed where an exporter
//! writes `[count, rank]`: torch.argwhere, an NMS's selected rows) becomes
//! `Gather(grid', positions, axis = 0)` of the grid stored transposed, `[slots, rank]`: one
//! node fewer, and the rows come out in the exporter's order.
//!
//! Why: onnx2tf 2.6.9's `tf_converter` drops that Transpose where its result is square (3 picks
//! of 3 coordinates: `handmade/nms_140`'s third row read the pick's rank as its class), so the
//! rows came out transposed. The Gather by rows converts right on both backends. Exact: row `p`
//! of the transposed grid is column `p` of the grid.

use super::super::scope::names_in;
use crate::graph::{int_attr, ints_attr};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::GraphProto;
use std::collections::HashSet;

/// Rewrites every such pair; returns how many.
pub fn gather_rows(graph: &mut GraphProto) -> usize {
    let (mut replaced, mut changed) = (HashSet::new(), 0);
    while let Some((gather, transpose, grid)) = find(graph) {
        let mut names = HashSet::new();
        names_in(graph, &mut names, 0);
        let rows = (0..)
            .map(|i| {
                format!(
                    "{}/rows{i}",
                    graph.initializer[grid].name.as_deref().unwrap_or("grid")
                )
            })
            .find(|n| !names.contains(n))
            .expect("a free name");
        let transposed = transposed(&graph.initializer[grid], &rows).expect("checked by find");
        graph.initializer.push(transposed);
        replaced.extend(graph.initializer[grid].name.clone());
        let output = graph.node[transpose].output[0].clone();
        let node = &mut graph.node[gather];
        node.input[0] = rows;
        node.output[0] = output;
        for a in &mut node.attribute {
            if a.name.as_deref() == Some("axis") {
                a.i = Some(0);
            }
        }
        graph.node.remove(transpose);
        changed += 1;
    }
    drop_unread(graph, &replaced);
    changed
}

/// (Gather, Transpose, initializer) positions of the first pair to rewrite: a Gather on axis 1
/// of a rank-2 initializer held in raw bytes, whose result only a Transpose with perm [1, 0]
/// reads and no graph output or body names.
fn find(graph: &GraphProto) -> Option<(usize, usize, usize)> {
    let outputs: HashSet<&str> = graph
        .output
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    let mut in_bodies = HashSet::new();
    names_in_bodies(graph, &mut in_bodies);
    let readers = |name: &str| {
        graph
            .node
            .iter()
            .map(|n| n.input.iter().filter(|i| *i == name).count())
            .sum::<usize>()
    };
    graph.node.iter().enumerate().find_map(|(t, node)| {
        let swaps = crate::graph::is_onnx_op(node, "Transpose")
            && ints_attr(node, "perm").ok()? == Some(vec![1, 0]);
        let input = node.input.first().filter(|_| swaps)?;
        let g = graph.node.iter().position(|n| {
            n.output.first() == Some(input) && crate::graph::is_onnx_op(n, "Gather")
        })?;
        let gather = &graph.node[g];
        let on_columns = int_attr(gather, "axis").ok()? == Some(1);
        let grid = graph
            .initializer
            .iter()
            .position(|i| i.name.as_ref() == gather.input.first())?;
        let once = readers(input) == 1 && !outputs.contains(input.as_str());
        let plain = layout(&graph.initializer[grid]).is_some();
        (on_columns && once && plain && !in_bodies.contains(input)).then_some((g, t, grid))
    })
}

/// (rows, columns, bytes per element) of a rank-2 tensor held in raw little-endian bytes of a
/// fixed-width type, or `None`.
fn layout(tensor: &nonzero_proto::onnx::TensorProto) -> Option<(usize, usize, usize)> {
    let [rows, columns] = <[i64; 2]>::try_from(tensor.dims.as_slice()).ok()?;
    let width = match DataType::try_from(tensor.data_type?).ok()? {
        DataType::Int32 | DataType::Float => 4,
        DataType::Int64 | DataType::Double => 8,
        _ => return None,
    };
    let (rows, columns) = (usize::try_from(rows).ok()?, usize::try_from(columns).ok()?);
    let bytes = rows.checked_mul(columns)?.checked_mul(width)?;
    (tensor.raw_data.as_ref()?.len() == bytes).then_some((rows, columns, width))
}

/// `tensor` (as [`layout`] takes it) transposed, as `name`.
fn transposed(
    tensor: &nonzero_proto::onnx::TensorProto,
    name: &str,
) -> Option<nonzero_proto::onnx::TensorProto> {
    let (rows, columns, width) = layout(tensor)?;
    let raw = tensor.raw_data.as_ref()?;
    let mut out = Vec::with_capacity(raw.len());
    for c in 0..columns {
        for r in 0..rows {
            let at = (r * columns + c) * width;
            out.extend_from_slice(&raw[at..at + width]);
        }
    }
    Some(nonzero_proto::onnx::TensorProto {
        name: Some(name.into()),
        dims: vec![columns as i64, rows as i64],
        data_type: tensor.data_type,
        raw_data: Some(out.into()),
        ..Default::default()
    })
}

/// The `replaced` grids that no node, body or graph output reads any more.
fn drop_unread(graph: &mut GraphProto, replaced: &HashSet<String>) {
    let mut read: HashSet<String> = graph
        .node
        .iter()
        .flat_map(|n| n.input.iter().cloned())
        .collect();
    read.extend(graph.output.iter().filter_map(|o| o.name.clone()));
    names_in_bodies(graph, &mut read);
    graph.initializer.retain(|i| {
        i.name
            .as_ref()
            .is_none_or(|n| !replaced.contains(n) || read.contains(n))
    });
}

/// Every name of `graph`'s If, Loop and Scan bodies, into `names`.
fn names_in_bodies(graph: &GraphProto, names: &mut HashSet<String>) {
    for node in &graph.node {
        for body in node
            .attribute
            .iter()
            .flat_map(|a| a.g.iter().chain(&a.graphs))
        {
            names_in(body, names, 1);
        }
    }
}
