//! Reductions over a padded selection (`x[m].sum()`, `.max()`, `.all()`): the padding is read
//! as the reduction's identity, so that the padded rows change nothing, and an empty selection
//! gives what ONNX Runtime gives (docs/static.md, "Reductions over the selection").

use crate::compact::{choose, padding_like, Compacted};
use crate::emit::Emitter;
use crate::padding::Reduction;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;
use nonzero_rewrite_analysis::dims::checked_numel;

/// The padding of a ReduceMin (or ReduceMax) read only as a truth value: an integer no lower
/// (no higher) than any real value where that decides, 1 (-1 for signed types; 0, the lowest,
/// for unsigned ones). `x != 0` of the result is then the extreme's, for an empty selection too
/// (both nonzero), and QNN HTP, which holds int64 as int32, mangles no int64 extreme (dynamo's
/// `all()` of nothing was False there). Floats keep their extremes.
fn truth_identity(e: &mut Emitter, max: bool, data_type: i32) -> Option<String> {
    use DataType as T;
    let t = T::try_from(data_type).ok()?;
    let signed = matches!(t, T::Int8 | T::Int16 | T::Int32 | T::Int64);
    let unsigned = matches!(t, T::Uint8 | T::Uint16 | T::Uint32 | T::Uint64);
    match max {
        false if signed || unsigned => e.one(data_type),
        // -1: every byte set, in two's complement.
        true if signed => {
            let size = crate::graph::element_size(data_type)?;
            Some(e.initializer(data_type, &[], vec![0xff; size]))
        }
        // An unsigned max: its lowest, 0, is small already; floats keep their extremes.
        _ => e.extreme(data_type, max),
    }
}

/// Rewrites a ReduceSum or ReduceMean over the padded axis to read the padding as the sum's
/// identity (-0.0 or 0); a mean divides that sum by the count times the other reduced sizes.
/// An empty selection gives +0, as ONNX Runtime's kernels give for both.
/// Float sums and means are then equal to the original's up to rounding (the order of the
/// additions differs), which static mode allows; integer sums are exact.
pub fn emit_reduction(
    e: &mut Emitter,
    node: &NodeProto,
    compacted: &Compacted,
    reduction: &Reduction,
    input_dims: &[i64],
    data_type: i32,
) -> Option<()> {
    let padding = padding_like(e, compacted, reduction.axis, input_dims)?;
    let op = node.op_type.as_deref();
    if matches!(op, Some("ReduceMax" | "ReduceMin" | "ReduceProd")) {
        // The padding reads as the type's lowest (max) or highest (min) value: exact, and an
        // empty selection gives what ONNX Runtime gives for an empty max or min (-inf, the
        // type's minimum; +inf, its maximum). For a product it reads as 1: exact for integers,
        // up to rounding for floats (static mode allows it); an empty product is 1 either way.
        let identity = match op {
            Some("ReduceProd") => e.one(data_type)?,
            _ if reduction.truth_only => truth_identity(e, op == Some("ReduceMax"), data_type)?,
            _ => e.extreme(data_type, op == Some("ReduceMax"))?,
        };
        let masked = e.select(&padding, &identity, &node.input[0], data_type);
        let mut reduce = node.clone();
        reduce.input[0] = masked;
        reduce.name = Some(e.fresh(node.op_type.as_deref().unwrap_or("Reduce")));
        e.nodes.push(reduce);
        return Some(());
    }
    let identity = e.sum_identity(data_type)?;
    let masked = e.where_(&padding, &identity, &node.input[0]);
    let axes: Vec<i64> = reduction.axes.iter().map(|&a| a as i64).collect();
    let mut result = e.reduce_sum(&masked, &axes, reduction.keepdims);
    let none = e.scalar(0);
    let empty = e.binary("Equal", &compacted.count, &none);
    if node.op_type.as_deref() == Some("ReduceMean") {
        let others: Vec<i64> = reduction
            .axes
            .iter()
            .filter(|&&a| a != reduction.axis)
            .map(|&a| input_dims.get(a).copied())
            .collect::<Option<_>>()?;
        let others = checked_numel(&others)?;
        let others = e.scalar(others);
        let one = e.scalar(1);
        let count = choose(e, &empty, &one, &compacted.count);
        let count = e.binary("Mul", &count, &others);
        let to = DataType::try_from(data_type).ok()?;
        let count = e.cast(&count, to);
        result = e.binary("Div", &result, &count);
    }
    // ONNX Runtime sums (and averages) an empty selection to +0: so does this.
    let zero = e.zero(data_type)?;
    crate::portable::zero_if_empty(e, &empty, &zero, &result, data_type)?;
    e.finish_as(&node.output[0]);
    Some(())
}
