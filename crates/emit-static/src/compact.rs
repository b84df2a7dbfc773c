//! Fixed capacity for what must stay a list: NonZero becomes `[rank, capacity]` coordinates,
//! -1 in the unused columns (QNN's convention), plus the count, by a compaction every compiler
//! takes:
//!
//! ```text
//! k    = CumSum(selected)                           [numel]
//! slot = Where(selected and k <= C, k - 1, C)       the C-th slot takes everything else
//! flat = ScatterElements(Expand(-1, [C + 1]), slot, Range(numel))[0:C]
//! coordinates[a] = flat / stride[a] % dims[a], and -1 past the count
//! ```
//!
//! (positions.rs writes `flat`; for `--target rknn` on at most 2048 elements it is float
//! arithmetic that RKNN's NPU runs instead, and so are the coordinates and the count.) Past
//! the capacity C the first C in row-major order are kept and the count saturates at C.
//! A gather of the padded coordinates reads the last row at the padding (valid: the padding
//! exists only when the mask, and so the data's leading dims, are not empty): a row of zeros
//! appended to the data, or, where that copy would cost more than the output, the data's own
//! last row, which a Where then replaces with 0.

use super::emit::{int_attr, Emitter};
use super::mask::Selection;
use super::padding::{Flow, GatherKind};
use super::portable;
use super::positions;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;
use nonzero_rewrite_analysis::dims::checked_numel;

/// `condition ? a : b` for int64 `a` and `b` (broadcasting), as `b + condition * (a - b)`.
pub(crate) fn choose(e: &mut Emitter, condition: &str, a: &str, b: &str) -> String {
    let flag = e.cast(condition, DataType::Int64);
    let step = e.binary("Sub", a, b);
    let scaled = e.binary("Mul", &flag, &step);
    e.binary("Add", b, &scaled)
}

/// The tensors the compaction of one NonZero leaves for its readers.
#[derive(Debug, Clone)]
pub struct Compacted {
    /// int64 scalar: the selected count, at most the capacity.
    pub count: String,
    /// bool `[C]`: true for the padding (the negation of `valid`). Values that must keep their
    /// bits go in Where's last operand: ONNX Runtime's Where turns a -0.0 taken from its
    /// middle operand into +0.0 (1.17.3 and 1.31.1 alike; docs/static.md).
    pub padding: String,
    /// int64 `[C]`: the row-major position of each selected element, past the count -1 (the
    /// pad slot `numel` for the portable targets, [`portable`]).
    pub flat: String,
    /// Elements of the mask.
    pub numel: i64,
    pub capacity: i64,
}

/// Writes the compaction of `mask` (element type `mask_type`, fixed `dims`); the last node
/// outputs `output` (the NonZero's output).
pub fn emit(
    e: &mut Emitter,
    mask: &str,
    mask_type: i32,
    dims: &[i64],
    capacity: Option<i64>,
    output: &str,
) -> Option<Compacted> {
    let numel = checked_numel(dims)?;
    let c = capacity.map_or(numel, |cap| cap.min(numel));
    if numel == 0 {
        return Some(empty_selection(e, dims.len() as i64, output));
    }
    let mut selection = Selection::of(e, mask, mask_type, numel)?;
    // RKNN's NPU form reads the selection as float 0/1 (cast once); the others, the running count.
    let npu = positions::npu_form(e, numel).then(|| e.cast(&selection.selected, DataType::Float));
    let k = npu
        .is_none()
        .then(|| portable::running_count(e, &mut selection));
    // The count (saturated at the capacity), the positions, the scatter's pad position (`fill`,
    // -1 for the generic form, reused below) and the NPU form's one-hot rows (`picks`, which
    // also give its coordinates).
    let (count, flat, fill, picks) = match (&k, &npu) {
        (Some(k), _) => {
            let total = selection.count_from(e, k, numel);
            // Integer selections are written as arithmetic, not Where: ONNX Runtime 1.17.3's
            // Where gave the bytes of its bool condition as int64 indices here (all-true masks).
            let cap = e.scalar(c);
            let fits = e.binary("Less", &total, &cap);
            let count = choose(e, &fits, &total, &cap);
            let (flat, fill) = positions::by_scatter(e, &mut selection, k, &cap, numel, c);
            (count, flat, fill, None)
        }
        (None, Some(ones)) => {
            let count = positions::npu_count(e, ones, numel, c);
            let (flat, picks) = positions::on_npu(e, ones, numel, c);
            (count, flat, None, Some(picks))
        }
        (None, None) => unreachable!("one of the two forms"),
    };
    let portable = e.target.portable();
    let columns = e.range(c);
    let valid = e.binary("Less", &columns, &count);
    let padding = e.op("Not", &[&valid], vec![]);
    let grid = match &picks {
        Some(picks) => Some(positions::npu_coordinates(e, picks, dims)),
        None if portable => portable::coordinates(e, &flat, dims),
        None => None,
    };
    if grid.is_some() {
        // Gathered from the grid (portable targets), or picked by the NPU form's one-hot rows:
        // the last node is the coordinates.
    } else if dims.len() == 1 && !portable {
        e.unsqueeze(&flat, &[0]);
    } else {
        let mut rows = vec![];
        for axis in 0..dims.len() {
            let stride: i64 = dims[axis + 1..].iter().product();
            let mut coordinate = flat.clone();
            if stride > 1 {
                let s = e.scalar(stride);
                coordinate = e.binary("Div", &coordinate, &s);
            }
            // An empty mask (a size 0) leaves nothing to divide; ONNX Runtime refuses a
            // constant integer divisor of 0 when it loads the model, so 1 stands in for it.
            if axis > 0 {
                let d = e.scalar(dims[axis].max(1));
                coordinate = e.binary("Mod", &coordinate, &d);
            }
            rows.push(e.unsqueeze(&coordinate, &[0]));
        }
        let refs: Vec<&str> = rows.iter().map(String::as_str).collect();
        let coordinates = e.concat(&refs, 0);
        let valid_row = e.unsqueeze(&valid, &[0]);
        let minus_one = match fill {
            Some(fill) if !portable => fill,
            _ => e.scalar(-1),
        };
        choose(e, &valid_row, &coordinates, &minus_one);
    }
    e.finish_as(output);
    Some(Compacted {
        count,
        padding,
        flat,
        numel,
        capacity: c,
    })
}

/// The padding as a bool mask for a tensor of sizes `dims` (-1 where not fixed) padded along
/// `axis`. With the padded axis first and every later size fixed, the mask has the tensor's
/// full shape (`Range(C * row) < count * row`): ONNX Runtime's Where is about 20 times slower
/// when its condition broadcasts. Otherwise it broadcasts.
pub(crate) fn padding_like(
    e: &mut Emitter,
    compacted: &Compacted,
    axis: usize,
    dims: &[i64],
) -> Option<String> {
    let later = checked_numel(dims.get(axis + 1..)?);
    match later {
        Some(row) if axis == 0 && row > 1 && compacted.capacity > 0 => {
            let elements = e.range(compacted.capacity * row);
            let row_size = e.scalar(row);
            let limit = e.binary("Mul", &compacted.count, &row_size);
            let valid = e.binary("Less", &elements, &limit);
            let padding = e.op("Not", &[&valid], vec![]);
            let mut shape = vec![compacted.capacity];
            shape.extend_from_slice(&dims[1..]);
            Some(e.reshape(&padding, &shape))
        }
        _ => {
            let mut shape = vec![1; dims.len()];
            *shape.get_mut(axis)? = -1;
            Some(e.reshape(&compacted.padding, &shape))
        }
    }
}

/// A mask without elements selects nothing, whatever its values: `[rank, 0]` coordinates and a
/// count of 0, as constants (no Reshape to a size 0, which ONNX Runtime reads as "copy" before
/// opset 14, and no division by a size 0).
fn empty_selection(e: &mut Emitter, rank: i64, output: &str) -> Compacted {
    let int64 = DataType::Int64 as i32;
    let coordinates = e.empty(int64, &[rank, 0]);
    e.op("Identity", &[&coordinates], vec![]);
    e.finish_as(output);
    Compacted {
        count: e.scalar(0),
        padding: e.empty(DataType::Bool as i32, &[0]),
        flat: e.empty(int64, &[0]),
        numel: 0,
        capacity: 0,
    }
}

/// What a gather of padded coordinates reads and writes.
pub struct GatherSizes {
    pub kind: GatherKind,
    /// The data's sizes and the output's (-1 where not fixed).
    pub data_dims: Vec<i64>,
    pub out_dims: Vec<i64>,
    pub data_type: i32,
}

/// Rewrites a gather indexed by padded coordinates (`GatherND` by `[C, r]`, or `Gather` by a
/// `[C]` column along `kind`'s axis) to write 0 at the padding; the last node outputs the
/// gather's output.
pub fn emit_gather(
    e: &mut Emitter,
    gather: &NodeProto,
    compacted: &Compacted,
    sizes: &GatherSizes,
) -> Option<()> {
    let (kind, data_type) = (sizes.kind, sizes.data_type);
    let (data_dims, out_dims) = (sizes.data_dims.as_slice(), sizes.out_dims.as_slice());
    // The padding's -1 coordinates are valid indices: padding exists only when the mask has
    // elements, so each of the data's indexed sizes (the mask's) is at least 1. They read the
    // last element along the gathered axis: a slab of zeros appended there, or, where copying
    // the data would cost more than the output, whatever is there, which a Where replaces.
    let (data, coordinates) = (&gather.input[0], &gather.input[1]);
    let axis = match kind {
        GatherKind::Nd { .. } => 0,
        GatherKind::Axis(axis) => axis,
    };
    let mut dims = out_dims.to_vec();
    *dims.get_mut(axis)? = compacted.capacity;
    if dims.contains(&0) {
        // Nothing to gather (no capacity, or rows of no element): an empty output of the
        // gather's fixed sizes, without Reshapes to a size 0.
        if dims.iter().all(|&d| d >= 0) {
            let empty = e.empty(data_type, &dims);
            e.op("Identity", &[&empty], vec![]);
            e.finish_as(&gather.output[0]);
            return Some(());
        }
    }
    let fixed = |d: &[i64]| -> Option<i64> {
        let d: Option<Vec<i64>> = d.iter().map(|&x| (x >= 0).then_some(x)).collect();
        checked_numel(&d?)
    };
    // The copy is about the output's size at the default capacity (every element a slot).
    let row: Option<Vec<i64>> = out_dims
        .get(1..)
        .map(|d| d.to_vec())
        .filter(|d| d.iter().all(|&x| x >= 0));
    // Portable targets read no index -1: only the gather by positions reads a slab (its pad slot).
    let portable = e.target.portable();
    let by_position = matches!(kind, GatherKind::Nd { direct: true }) && row.is_some();
    let zero_slab = matches!((fixed(data_dims), fixed(&dims)), (Some(d), Some(o)) if d <= 2 * o)
        && (by_position || !portable);
    let index = match (portable && !zero_slab, by_position) {
        (true, true) => portable::in_range(e, &compacted.flat, true, compacted.numel),
        (true, false) => portable::in_range(e, coordinates, false, compacted.numel),
        (false, true) => compacted.flat.clone(),
        (false, false) => coordinates.clone(),
    };
    let (rows, padded_axis) = match (kind, row) {
        // The data's leading dims are the mask's: a Gather of the flattened data at the
        // row-major positions reads the same rows, without coordinates (their Div, Mod,
        // Transpose and GatherND go once nothing else reads them).
        (GatherKind::Nd { direct: true }, Some(row)) => {
            let mut shape = vec![compacted.numel];
            shape.extend_from_slice(&row);
            let mut flat_data = e.reshape(data, &shape);
            if zero_slab {
                flat_data = with_zero_slab(e, &flat_data, &shape, 0, data_type)?;
            }
            let gathered = if row.is_empty() {
                e.gather_1d(&flat_data, &index)
            } else {
                let axis = vec![int_attr("axis", 0)];
                e.op("Gather", &[&flat_data, &index], axis)
            };
            (gathered, 0)
        }
        (GatherKind::Nd { .. }, _) => {
            let data = if zero_slab {
                with_zero_slab(e, data, data_dims, 0, data_type)?
            } else {
                data.clone()
            };
            (e.op("GatherND", &[&data, &index], vec![]), 0)
        }
        (GatherKind::Axis(axis), _) => {
            let data = if zero_slab {
                with_zero_slab(e, data, data_dims, axis, data_type)?
            } else {
                data.clone()
            };
            let attribute = vec![int_attr("axis", axis as i64)];
            (e.op("Gather", &[&data, &index], attribute), axis)
        }
    };
    if !zero_slab {
        let padding_rows = padding_like(e, compacted, padded_axis, out_dims)?;
        let zero = e.zero(data_type)?;
        e.select(&padding_rows, &zero, &rows, data_type);
    }
    e.finish_as(&gather.output[0]);
    Some(())
}

/// `data` (fixed sizes `dims`) with a slab of zeros (all bits clear: +0.0) appended along
/// `axis`, which an index of -1 there reads.
fn with_zero_slab(
    e: &mut Emitter,
    data: &str,
    dims: &[i64],
    axis: usize,
    data_type: i32,
) -> Option<String> {
    let mut slab = dims.to_vec();
    *slab.get_mut(axis)? = 1;
    let zero = e.zero(data_type)?;
    let shape = e.ints(&slab);
    let zeros = e.op("Expand", &[&zero, &shape], vec![]);
    Some(e.concat(&[data, &zeros], axis as i64))
}

/// A 1-D mask computed from padded rows, with the padding deselected (`And(mask != 0, valid)`,
/// bool), so that a NonZero of it selects only real rows.
pub fn emit_unpadded_mask(e: &mut Emitter, mask: &str, compacted: &Compacted) -> String {
    let valid = e.op("Not", &[&compacted.padding], vec![]);
    e.binary("And", mask, &valid)
}

/// The count output of a padded graph output.
pub fn count_output_type() -> i32 {
    DataType::Int64 as i32
}

/// Which padded outputs the flow reached (for reports).
pub fn outputs_text(flow: &Flow) -> String {
    let names: Vec<&str> = flow.outputs.iter().map(|(n, _)| n.as_str()).collect();
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}
