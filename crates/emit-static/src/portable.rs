//! The portable forms of `--target qnn|litert|rknn` (docs/static.md, "Targets"): what the
//! compaction writes instead of the generic forms where an NPU toolchain refuses or miscomputes
//! them. The output contract does not change (int64 coordinates, -1 past the count).
//!
//! - The compacted positions are padded with a pad slot, `numel`, not -1: no gather index is
//!   ever negative (QNN HTP and onnx2tf's flatbuffer_direct read -1 wrongly or refuse it).
//! - Coordinates are gathered from a constant int32 grid `[rank, numel + 1]` (each position's
//!   coordinate per axis, -1 in the pad slot's column), then cast to int64, not computed by
//!   integer Div and Mod: QNN HTP computes integers in fp16, exact only to 2048 (and takes no
//!   Gather of int64 data).
//! - The running count is a CumSum of int32 ones, cast to int64 after.
//! - A Transpose of the int64 coordinates (the exporters' `[count, rank]`) is moved before their
//!   last Cast ([`transpose_before_cast`]): QNN HTP fails on a Transpose of int64 data.
//! - A gather by padded coordinates reads index 0 at the padding (`Max(index, 0)`), which a
//!   Where then replaces with 0; a gather by positions reads the pad slot in the zero slab, or
//!   the last position (`Min(position, numel - 1)`) where there is no slab.

use super::emit::{int_attr, ints_attr, Emitter};
use super::mask::Selection;
use super::Target;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{GraphProto, NodeProto};
use nonzero_rewrite_analysis::dims::checked_numel;
use std::collections::{HashMap, HashSet};

/// The grids hold `rank x (numel + 1)` int32s: past this many elements the generic Div and Mod
/// are written instead (a 64 MiB constant is no NPU model's).
pub const GRID_MAX_ELEMENTS: i64 = 1 << 24;

/// The running count as int64: for the portable targets a CumSum of int32 ones, cast (onnx2tf's
/// flatbuffer_direct gives an int64 CumSum an int32 input and an int64 output), where every
/// count fits.
pub fn running_count(e: &mut Emitter, selection: &mut Selection) -> String {
    if !e.target.portable() || selection.numel > i64::from(i32::MAX) {
        return selection.running_count(e);
    }
    let k = selection.running_count_as(e, DataType::Int32);
    e.cast(&k, DataType::Int64)
}

/// What the compaction writes in the unused positions: the pad slot `numel` for the portable
/// targets, -1 for the generic one.
pub fn pad_position(e: &Emitter, numel: i64) -> i64 {
    if e.target.portable() {
        numel
    } else {
        -1
    }
}

/// The first `keep` elements of a 1-D tensor of `len`: a Slice, but for RKNN a Split in two
/// whose second part nothing reads. rknn-toolkit2 2.5.0's converter rewrites a 1-D Slice into a
/// Gather of the wrong length and then fails in its own gather fusion
/// (`_p_fuse_gather_gather_reshape`: IndexError); it takes the Split.
pub fn head(e: &mut Emitter, x: &str, keep: i64, len: i64) -> String {
    if e.target != Target::Rknn {
        return e.slice1(x, 0, keep);
    }
    if keep >= len {
        return x.to_string();
    }
    let head = if e.opset() >= 13 {
        let sizes = e.ints(&[keep, len - keep]);
        e.op("Split", &[x, &sizes], vec![int_attr("axis", 0)])
    } else {
        let attributes = vec![int_attr("axis", 0), ints_attr("split", &[keep, len - keep])];
        e.op("Split", &[x], attributes)
    };
    let tail = e.fresh("split_tail");
    e.nodes.last_mut().expect("the Split").output.push(tail);
    head
}

/// `Where(empty, zero, result)`: a reduction of an empty selection is +0. For RKNN, floats get
/// no Where: rknn-toolkit2 2.5.0's native build dies (SIGSEGV) on a Where at a whole
/// reduction's one element (masked_count_mean). There `result + (1 - 2 * nonempty) * 0`: +0
/// when empty, and -0.0 otherwise, which changes nothing (x + -0.0 is x, -0.0 and NaN included).
pub fn zero_if_empty(
    e: &mut Emitter,
    empty: &str,
    zero: &str,
    result: &str,
    data_type: i32,
) -> Option<String> {
    use DataType as T;
    let float = matches!(
        T::try_from(data_type),
        Ok(T::Float | T::Double | T::Float16 | T::Bfloat16)
    );
    if e.target != Target::Rknn || !float {
        return Some(e.where_(empty, zero, result));
    }
    let nonempty = e.op("Not", &[empty], vec![]);
    let nonempty = e.cast(&nonempty, T::try_from(data_type).ok()?);
    let one = e.one(data_type)?;
    let sign = e.binary("Sub", &one, &nonempty);
    let sign = e.binary("Sub", &sign, &nonempty);
    let signed_zero = e.binary("Mul", &sign, zero);
    Some(e.binary("Add", result, &signed_zero))
}

/// `[rank, C]` int64 coordinates of the positions `flat` (`[C]`, padded with `numel`), -1 at
/// the padding, gathered from a constant grid; `None` past [`GRID_MAX_ELEMENTS`].
pub fn coordinates(e: &mut Emitter, flat: &str, dims: &[i64]) -> Option<String> {
    let numel = checked_numel(dims)?;
    let rank = dims.len() as i64;
    if rank.checked_mul(numel + 1)? > GRID_MAX_ELEMENTS {
        return None;
    }
    let mut grid: Vec<i32> = Vec::with_capacity((rank * (numel + 1)) as usize);
    for axis in 0..dims.len() {
        let stride: i64 = dims[axis + 1..].iter().product();
        let (stride, size) = (stride.max(1), dims[axis].max(1));
        grid.extend((0..numel).map(|p| i32::try_from(p / stride % size).unwrap_or(i32::MAX)));
        grid.push(-1);
    }
    let grid = e.int32s(&grid, &[rank, numel + 1]);
    let gathered = e.op("Gather", &[&grid, flat], vec![int_attr("axis", 1)]);
    Some(e.cast(&gathered, DataType::Int64))
}

/// Indices that read something valid at the padding: `Max(index, 0)` for padded coordinates
/// (-1 there), `Min(position, numel - 1)` for padded positions (`numel` there). Before opset 12
/// (no int64 Max or Min) as arithmetic: `index * Not(index < 0)`, `position - (position == numel)`.
pub fn in_range(e: &mut Emitter, index: &str, by_position: bool, numel: i64) -> String {
    match (by_position, e.opset() >= 12) {
        (true, true) => {
            let last = e.scalar(numel - 1);
            e.binary("Min", index, &last)
        }
        (false, true) => {
            let zero = e.scalar(0);
            e.binary("Max", index, &zero)
        }
        (true, false) => {
            let pad = e.scalar(numel);
            let at_pad = e.binary("Equal", index, &pad);
            let step = e.cast(&at_pad, DataType::Int64);
            e.binary("Sub", index, &step)
        }
        (false, false) => {
            let zero = e.scalar(0);
            let negative = e.binary("Less", index, &zero);
            let keep = e.op("Not", &[&negative], vec![]);
            let keep = e.cast(&keep, DataType::Int64);
            e.binary("Mul", index, &keep)
        }
    }
}

/// The last steps of a portable form over the whole graph (none for the generic target), and
/// their report lines (kind, line) added to `lines`: Loops and Ifs over fixed-shape work
/// written out ([`super::fixed`]);
/// [`transpose_before_cast`]; for QNN the model's own OneHots in standard ops
/// and Einsums as MatMuls, and GatherNDs at constant indices as Gathers ([`super::qnn`]); for LiteRT
/// the rewrites [`super::litert`] lists (Splits as Slices, integer Clips as Max and Min, a GELU's
/// divisor as `[1]`, ...); for RKNN distinct integer outputs and one Gather per data tensor
/// ([`super::rknn`]); for LiteRT and RKNN, rank-0 inputs declared `[1]` ([`super::scalar_inputs`]).
pub fn finish(
    graph: &mut GraphProto,
    scope: &super::scope::Scope,
    lines: &mut Vec<(String, String)>,
) {
    if !scope.target.portable() {
        return;
    }
    // First, so that the bodies' nodes get the rewrites below.
    lines.extend(super::fixed::write_out(graph, scope));
    transpose_before_cast(graph);
    match scope.target {
        Target::Qnn => {
            super::qnn::rewrite(graph, scope);
        }
        Target::Rknn => {
            super::rknn::rewrite(graph, scope);
        }
        Target::Litert => {
            super::litert::rewrite(graph, scope);
        }
        Target::Generic => {}
    }
    if matches!(scope.target, Target::Rknn | Target::Litert) {
        let inputs = super::scalar_inputs::declared_as_one(graph);
        lines.extend(super::scalar_inputs::lines(inputs, scope.target));
    }
}

/// `Transpose(Cast(x, to = int64))` becomes `Cast(Transpose(x), to = int64)` where the Cast's
/// output has no other reader and is no graph output: QNN HTP fails at run time on a Transpose of
/// int64 data ("ORT Tensor data size does not match QNN tensor data size"), and the exporters
/// transpose NonZero's coordinates (torch.nonzero, argwhere, tf.where), which the portable forms
/// cast from int32 last. Exact: a Transpose moves elements, a Cast maps each. Returns how many.
pub fn transpose_before_cast(graph: &mut GraphProto) -> usize {
    let mut swapped = 0;
    while let Some((c, t)) = cast_then_transpose(graph) {
        let mut names = HashSet::new();
        super::scope::names_in(graph, &mut names, 0);
        let source = graph.node[c].input[0].clone();
        let moved = (0..)
            .map(|i| match i {
                0 => format!("{source}/transposed"),
                i => format!("{source}/transposed_{i}"),
            })
            .find(|n| !names.contains(n))
            .expect("an unused name exists");
        let result = graph.node[t].output[0].clone();
        graph.node[t].input[0] = source;
        graph.node[t].output[0] = moved.clone();
        graph.node[c].input[0] = moved;
        graph.node[c].output[0] = result;
        // The Cast now reads the Transpose: it goes right after it.
        let cast = graph.node.remove(c);
        let at = if c < t { t } else { t + 1 };
        graph.node.insert(at, cast);
        swapped += 1;
    }
    swapped
}

/// The first (Cast to int64, Transpose of it) pair whose Cast output nothing else reads.
fn cast_then_transpose(graph: &GraphProto) -> Option<(usize, usize)> {
    let outputs: HashSet<&str> = graph
        .output
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    let mut readers: HashMap<&str, usize> = HashMap::new();
    let mut in_bodies = HashSet::new();
    for node in &graph.node {
        for input in &node.input {
            *readers.entry(input.as_str()).or_default() += 1;
        }
        for body in node
            .attribute
            .iter()
            .flat_map(|a| a.g.iter().chain(&a.graphs))
        {
            super::scope::names_in(body, &mut in_bodies, 1);
        }
    }
    let to_int64 = |n: &NodeProto| {
        n.op_type.as_deref() == Some("Cast")
            && n.attribute
                .iter()
                .any(|a| a.name.as_deref() == Some("to") && a.i == Some(DataType::Int64 as i64))
    };
    graph.node.iter().enumerate().find_map(|(t, node)| {
        let input = node
            .input
            .first()
            .filter(|_| node.op_type.as_deref() == Some("Transpose"))?;
        let c = graph
            .node
            .iter()
            .position(|c| c.output.first() == Some(input) && to_int64(c))?;
        let once = readers.get(input.as_str()) == Some(&1);
        (once && !outputs.contains(input.as_str()) && !in_bodies.contains(input)).then_some((c, t))
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::emit::int_attr;

    /// A node of one input and one output.
    pub(crate) fn node(op: &str, input: &str, output: &str) -> NodeProto {
        NodeProto {
            op_type: Some(op.into()),
            input: vec![input.into()],
            output: vec![output.into()],
            ..Default::default()
        }
    }

    #[test]
    fn a_transpose_of_a_cast_to_int64_goes_first() {
        let mut cast = node("Cast", "grid_rows", "coordinates");
        cast.attribute.push(int_attr("to", DataType::Int64 as i64));
        let mut graph = GraphProto {
            node: vec![cast.clone(), node("Transpose", "coordinates", "y")],
            ..Default::default()
        };
        assert_eq!(transpose_before_cast(&mut graph), 1);
        let ops: Vec<(&str, &str, &str)> = graph
            .node
            .iter()
            .map(|n| {
                (
                    n.op_type.as_deref().unwrap(),
                    n.input[0].as_str(),
                    n.output[0].as_str(),
                )
            })
            .collect();
        assert_eq!(
            ops,
            [
                ("Transpose", "grid_rows", "grid_rows/transposed"),
                ("Cast", "grid_rows/transposed", "y")
            ]
        );
        // A Cast whose output is read twice, or is a graph output, stays where it is.
        let mut graph = GraphProto {
            node: vec![
                cast,
                node("Transpose", "coordinates", "y"),
                node("Identity", "coordinates", "z"),
            ],
            ..Default::default()
        };
        assert_eq!(transpose_before_cast(&mut graph), 0);
    }
}
