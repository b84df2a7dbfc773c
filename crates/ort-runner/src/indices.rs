//! Integer inputs that index a table (an embedding's token ids, a Gather's indices), found from
//! the graph, so that invented inputs stay within the table: random int64 token ids would index
//! far past an embedding, and the model would fail on data no user feeds it.

use nonzero_core::DataType;
use nonzero_harness::TensorData;
use nonzero_proto::onnx::{GraphProto, NodeProto};
use rand::rngs::StdRng;
use rand::Rng;
use std::collections::HashMap;

/// Ops whose first input's values reach their output unchanged (cast, moved or repeated), so
/// that indices fed to them are still indices after them.
const PASS_THROUGH: &[&str] = &[
    "Cast",
    "CastLike",
    "Identity",
    "Unsqueeze",
    "Squeeze",
    "Reshape",
    "Flatten",
    "Expand",
    "Transpose",
    "Tile",
    "Slice",
];

/// Ops that index their first input (the table) along `axis` with their second (the indices).
const GATHERS: &[&str] = &["Gather", "GatherElements"];

/// For each graph input that reaches the indices of a Gather (or GatherElements) over a table of
/// known shape (an initializer or a Constant), directly or through [`PASS_THROUGH`] ops: the size
/// of that table along the gather axis (the smallest, when it indexes several).
pub fn index_bounds(graph: &GraphProto) -> HashMap<String, u64> {
    let mut dims: HashMap<&str, &[i64]> = graph
        .initializer
        .iter()
        .map(|t| (t.name(), t.dims.as_slice()))
        .collect();
    for node in &graph.node {
        if node.op_type() == "Constant" && node.domain().is_empty() {
            let value = node.attribute.iter().find(|a| a.name() == "value");
            if let (Some(t), Some(out)) = (value.and_then(|a| a.t.as_ref()), node.output.first()) {
                dims.insert(out, t.dims.as_slice());
            }
        }
    }
    let mut readers: HashMap<&str, Vec<(&NodeProto, usize)>> = HashMap::new();
    for node in &graph.node {
        for (i, name) in node.input.iter().enumerate() {
            readers.entry(name).or_default().push((node, i));
        }
    }
    let mut bounds = HashMap::new();
    for input in &graph.input {
        if dims.contains_key(input.name()) {
            continue; // an initializer listed as an input (IR < 4): not fed
        }
        let mut bound: Option<u64> = None;
        let mut todo = vec![input.name()];
        let mut seen = vec![];
        while let Some(name) = todo.pop() {
            if seen.contains(&name) {
                continue;
            }
            seen.push(name);
            for &(node, slot) in readers.get(name).map(Vec::as_slice).unwrap_or_default() {
                let op = node.op_type();
                if !node.domain().is_empty() && node.domain() != "ai.onnx" {
                    continue;
                }
                if PASS_THROUGH.contains(&op) && slot == 0 {
                    todo.extend(node.output.first().map(String::as_str));
                } else if GATHERS.contains(&op) && slot == 1 {
                    if let Some(size) = gather_size(node, &dims) {
                        bound = Some(bound.map_or(size, |b| b.min(size)));
                    }
                }
            }
        }
        if let Some(b) = bound {
            bounds.insert(input.name().to_string(), b);
        }
    }
    bounds
}

/// The size of a gather's table along its axis, when the table's shape is known.
fn gather_size(node: &NodeProto, dims: &HashMap<&str, &[i64]>) -> Option<u64> {
    let table = dims.get(node.input.first()?.as_str())?;
    let axis = node
        .attribute
        .iter()
        .find(|a| a.name() == "axis")
        .map_or(0, |a| a.i());
    let rank = table.len() as i64;
    let axis = if axis < 0 { axis + rank } else { axis };
    let size = *table.get(usize::try_from(axis).ok()?)?;
    u64::try_from(size).ok()
}

/// `n` seeded random indices in `[0, bound)` (and within the type), or `None` for a type that
/// cannot index (floats, bool, strings).
pub fn index_data(dtype: DataType, n: usize, bound: u64, rng: &mut StdRng) -> Option<TensorData> {
    // Exclusive upper limits of the types' non-negative values.
    let mut draw = |limit: u64| -> u64 { rng.random_range(0..bound.min(limit).max(1)) };
    macro_rules! ints {
        ($variant:ident, $t:ty, $limit:expr) => {
            TensorData::$variant((0..n).map(|_| draw($limit) as $t).collect())
        };
    }
    Some(match dtype {
        DataType::Uint8 => ints!(Uint8, u8, 1 << 8),
        DataType::Int8 => ints!(Int8, i8, 1 << 7),
        DataType::Uint16 => ints!(Uint16, u16, 1 << 16),
        DataType::Int16 => ints!(Int16, i16, 1 << 15),
        DataType::Uint32 => ints!(Uint32, u32, 1 << 32),
        DataType::Int32 => ints!(Int32, i32, 1 << 31),
        DataType::Uint64 => ints!(Uint64, u64, u64::MAX),
        DataType::Int64 => ints!(Int64, i64, 1 << 63),
        _ => return None,
    })
}
