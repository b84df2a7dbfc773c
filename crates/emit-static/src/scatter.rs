//! Writes at padded coordinates, graph outputs whose padding row-wise work changed, and rows
//! picked from equal groups of the selection ([`super::padding::Flow`]'s `scatters`, `repad`
//! and `regrouped`).
//!
//! A ScatterElements or ScatterND whose indices are a selection's coordinates writes the
//! padding's rows at -1, a valid index: the last row, a real one. Here the data gains one slot
//! of zeros along the written axis, the padding's indices (the negative ones: coordinates are
//! never negative) point at it, and the slot is sliced off after the write. Any reduction
//! (none, add, mul, max, min) then writes the padding into the dropped slot only.

use super::compact::Compacted;
use super::emit::Emitter;
use super::padding::Regrouped;
use crate::graph::int_attr;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;

/// `node` (a ScatterElements or ScatterND) rewritten to send its negative indices to an
/// appended slot; `data_dims` are its data's fixed sizes, `index_type` its indices' type.
pub fn emit_scatter(
    e: &mut Emitter,
    node: &NodeProto,
    data_dims: &[i64],
    data_type: i32,
    index_type: i32,
    index_width: Option<i64>,
) -> Option<()> {
    let op = node.op_type.as_deref()?;
    let rank = data_dims.len() as i64;
    let axis = if op == "ScatterElements" {
        let a = int_attr(node, "axis").ok()?.unwrap_or(0);
        usize::try_from(if a < 0 { a + rank } else { a }).ok()?
    } else {
        0
    };
    let size = *data_dims.get(axis)?;
    let mut slot_dims = data_dims.to_vec();
    slot_dims[axis] = 1;
    let zero = e.zero(data_type)?;
    let slot_shape = e.ints(&slot_dims);
    let slot = e.op("Expand", &[&zero, &slot_shape], vec![]);
    let widened = e.concat(&[&node.input[0], &slot], axis as i64);
    let index_type = DataType::try_from(index_type).ok()?;
    let indices = &node.input[1];
    let zero_index = e.index_scalar(0, index_type);
    let negative = e.binary("Less", indices, &zero_index);
    // ScatterND: the padding's index tuple (all -1) becomes (size, 0, ...).
    let target = match (op, index_width) {
        ("ScatterND", Some(width)) if width >= 1 => {
            let mut tuple = vec![0; width as usize];
            tuple[0] = size;
            let t = e.ints(&tuple);
            if index_type == DataType::Int32 {
                e.cast(&t, DataType::Int32)
            } else {
                t
            }
        }
        ("ScatterElements", _) => e.index_scalar(size, index_type),
        _ => return None,
    };
    let redirected = e.where_(&negative, &target, indices);
    let mut write = node.clone();
    write.input = vec![widened, redirected, node.input[2].clone()];
    let written = e.fresh("written");
    write.output = vec![written.clone()];
    write.name = Some(e.fresh(op));
    e.nodes.push(write);
    let (starts, ends, axes) = (e.ints(&[0]), e.ints(&[size]), e.ints(&[axis as i64]));
    e.op("Slice", &[&written, &starts, &ends, &axes], vec![]);
    e.finish_as(&node.output[0]);
    Some(())
}

/// The fill past the count of graph output `name` (its producer's output renamed to
/// `unpadded`): -1 for int64, +0 otherwise (docs/static.md).
pub fn emit_repad(
    e: &mut Emitter,
    unpadded: &str,
    name: &str,
    axis: usize,
    rank: usize,
    elem_type: i32,
    compacted: &Compacted,
) -> Option<()> {
    let mut shape = vec![1; rank];
    *shape.get_mut(axis)? = compacted.capacity;
    let padding = e.reshape(&compacted.padding, &shape);
    let fill = if elem_type == DataType::Int64 as i32 {
        e.scalar(-1)
    } else {
        e.zero(elem_type)?
    };
    e.select(&padding, &fill, unpadded, elem_type);
    e.finish_as(name);
    Some(())
}

/// The Gather of a [`Regrouped`] pick, reading the padded rows at `g * (count / G) + i`
/// (`(g + 1) * (count / G) + i` for a negative i): the positions the original's Reshape and
/// Gather name among the count's rows.
pub fn emit_regrouped(e: &mut Emitter, pick: &Regrouped, compacted: &Compacted) {
    let groups = e.scalar(pick.groups);
    let per_group = e.binary("Div", &compacted.count, &groups);
    let first = i64::from(pick.index < 0);
    let starts: Vec<i64> = (first..first + pick.groups).collect();
    let starts = e.ints(&starts);
    let offsets = e.binary("Mul", &starts, &per_group);
    let index = e.scalar(pick.index);
    let positions = e.binary("Add", &offsets, &index);
    e.op(
        "Gather",
        &[&pick.rows, &positions],
        vec![super::emit::int_attr("axis", 0)],
    );
    e.finish_as(&pick.output);
}
