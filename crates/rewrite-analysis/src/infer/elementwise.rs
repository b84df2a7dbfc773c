//! Element-wise ops: same shape as the input, or numpy broadcasting of all inputs.

use super::{Ctx, Dim, TensorInfo};
use nonzero_proto::onnx::tensor_proto::DataType;

const BOOL: Option<i32> = Some(DataType::Bool as i32);

/// Ops whose output 0 has input 0's type and shape (any other inputs are scalars, per-channel
/// parameters or statistics that broadcast into input 0).
const SAME_SHAPE_OPS: &[&str] = &[
    "Identity",
    "Abs",
    "Neg",
    "Relu",
    "Sigmoid",
    "Tanh",
    "Exp",
    "Log",
    "Sqrt",
    "Ceil",
    "Floor",
    "Round",
    "Sign",
    "Reciprocal",
    "Erf",
    "Sin",
    "Cos",
    "Tan",
    "Asin",
    "Acos",
    "Atan",
    "Sinh",
    "Cosh",
    "Asinh",
    "Acosh",
    "Atanh",
    "LeakyRelu",
    "Elu",
    "Selu",
    "Celu",
    "HardSigmoid",
    "HardSwish",
    "Softplus",
    "Softsign",
    "Gelu",
    "Mish",
    "ThresholdedRelu",
    "Shrink",
    "Clip",
    "Dropout",
    "Softmax",
    "LogSoftmax",
    "Hardmax",
    "BatchNormalization",
    "InstanceNormalization",
    "LayerNormalization",
    "GroupNormalization",
    "LpNormalization",
    "MeanVarianceNormalization",
    "LRN",
    "PRelu",
    "CumSum",
    "Trilu",
    "BitwiseNot",
];
/// Ops whose output 0 has input 0's shape but an element type of their own (attribute `dtype`,
/// else input 0's).
const RANDOM_LIKE_OPS: &[&str] = &["RandomNormalLike", "RandomUniformLike", "Bernoulli"];
/// Same shape, bool output.
const BOOL_SAME_SHAPE_OPS: &[&str] = &["IsNaN", "IsInf", "Not"];
/// Broadcasting, bool output.
const COMPARE_OPS: &[&str] = &[
    "Greater",
    "Less",
    "GreaterOrEqual",
    "LessOrEqual",
    "Equal",
    "And",
    "Or",
    "Xor",
];
/// Broadcasting, input 0's type.
const ARITHMETIC_OPS: &[&str] = &[
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Pow",
    "Max",
    "Min",
    "Mod",
    "Sum",
    "Mean",
    "BitShift",
    "BitwiseAnd",
    "BitwiseOr",
    "BitwiseXor",
];

/// Multidirectional (numpy) broadcasting of two shapes, assuming the op runs without error;
/// `fresh(axis)` names a size the two operands do not determine.
pub fn broadcast(a: &[Dim], b: &[Dim], fresh: impl Fn(usize) -> Dim) -> Vec<Dim> {
    let rank = a.len().max(b.len());
    (0..rank)
        .map(|i| {
            let da = (i + a.len()).checked_sub(rank).map(|j| &a[j]);
            let db = (i + b.len()).checked_sub(rank).map(|j| &b[j]);
            match (da, db) {
                (Some(x), None) | (None, Some(x)) => x.clone(),
                (Some(x), Some(y)) if x.same(y) => x.clone(),
                (Some(x), Some(y)) if x.as_static() == Some(1) => y.clone(),
                (Some(x), Some(y)) if y.as_static() == Some(1) => x.clone(),
                // A valid broadcast of a number other than 1 against anything gives that number.
                (Some(x), _) if x.as_static().is_some() => x.clone(),
                (_, Some(y)) if y.as_static().is_some() => y.clone(),
                // Two sizes, either of which may be 1: which one wins is not known.
                _ => fresh(i),
            }
        })
        .collect()
}

/// The type and shape of output 0 of an element-wise op.
pub fn infer_elementwise(op: &str, ctx: &Ctx) -> Option<TensorInfo> {
    if ctx.node.input.is_empty() {
        return None;
    }
    let broadcast_all = |first: usize| {
        (first..ctx.node.input.len())
            .map(|i| ctx.dims(i))
            .try_fold(vec![], |acc: Vec<Dim>, d| {
                Some(broadcast(&acc, &d?, |axis| ctx.fresh(0, axis)))
            })
    };
    let info = if SAME_SHAPE_OPS.contains(&op) {
        ctx.input(0)
    } else if BOOL_SAME_SHAPE_OPS.contains(&op) {
        TensorInfo {
            elem_type: BOOL,
            dims: ctx.dims(0),
        }
    } else if RANDOM_LIKE_OPS.contains(&op) {
        TensorInfo {
            elem_type: match ctx.int("dtype", 0)? {
                0 => ctx.elem(0),
                t => Some(t as i32),
            },
            dims: ctx.dims(0),
        }
    } else if op == "Cast" {
        TensorInfo {
            elem_type: ctx.int("to", 0).filter(|&t| t != 0).map(|t| t as i32),
            dims: ctx.dims(0),
        }
    } else if op == "CastLike" {
        TensorInfo {
            elem_type: ctx.elem(1),
            dims: ctx.dims(0),
        }
    } else if COMPARE_OPS.contains(&op) {
        TensorInfo {
            elem_type: BOOL,
            dims: broadcast_all(0),
        }
    } else if ARITHMETIC_OPS.contains(&op) {
        TensorInfo {
            elem_type: ctx.elem(0),
            dims: broadcast_all(0),
        }
    } else if op == "Where" {
        TensorInfo {
            elem_type: ctx.elem(1).or(ctx.elem(2)),
            dims: broadcast_all(0),
        }
    } else if op == "Expand" {
        // Expand broadcasts both ways: a size-1 target axis keeps the input's size.
        let target = ctx.values(1)?;
        TensorInfo {
            elem_type: ctx.elem(0),
            dims: ctx
                .dims(0)
                .map(|d| broadcast(&d, &target, |axis| ctx.fresh(0, axis))),
        }
    } else {
        return None;
    };
    Some(info)
}
