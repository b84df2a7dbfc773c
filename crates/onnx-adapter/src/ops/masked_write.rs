//! MaskedFill and MaskedScatter (domain `nonzero`, opset 1): masked writes without coordinates
//! (op-core's [`nonzero_core::write`] has the rules). Y has X's type and shape.
//!
//! - `MaskedFill(X, M, V)` = `Where(M, V, X)`, V broadcast to X's shape: `x[m] = v`,
//!   `masked_fill`.
//! - `MaskedScatter(X, M, S)`: the j-th selected element takes `S.flat[j]`: `masked_scatter`.

use super::input::{element_type, input_error, refuse_foreign_attributes};
use crate::ort::{Dim, ElementType, Error, Io, Kernel, KernelContext, KernelInfo, NodeSetup};
use crate::ort::{Operator, ShapeInferContext, Tensor};
use nonzero_core::kernel::PARALLEL_THRESHOLD;
use nonzero_core::write::{check_fill_value, check_write_mask, masked_fill_bytes, MaskedPlan};
use nonzero_core::{DataType, Executor, Sequential};
use std::ffi::CStr;

// X and the values are both of any type (the kernel checks they agree), the mask is bool.
const INPUTS: &[Io] = &[
    Io::required(ElementType::Any),
    Io::required(ElementType::Bool),
    Io::required(ElementType::Any),
];
// Y is declared optional: ONNX Runtime (1.17 and others) refuses an op with two inputs of any type
// and a *required* output of any type, since it would infer the output's type from the one
// such input; our shape inference declares Y's type (X's) itself.
const OUTPUTS: &[Io] = &[Io::optional(ElementType::Any)];

/// Y: X's type and shape.
fn infer_like_x(context: &mut ShapeInferContext<'_>) -> Result<(), Error> {
    let x: Vec<Dim> = context.input_shape(0)?;
    context.set_output_code(0, context.input_element_code(0)?, &x)
}

/// X, the mask and the values of a call, checked: X's type, the mask bool of X's shape, the
/// values of X's type.
struct Call<'a> {
    x: Tensor<'a>,
    mask: &'a [bool],
    values: Tensor<'a>,
    dtype: DataType,
}

impl<'a> Call<'a> {
    fn read(context: &KernelContext<'a>, op: &'static str) -> Result<Call<'a>, Error> {
        let x = context.input(0)?;
        let mask = context.input(1)?;
        let values = context.input(2)?;
        let dtype = element_type(&x, op)?;
        let mask_type = element_type(&mask, op)?;
        check_write_mask(op, mask_type, x.sizes(), mask.sizes()).map_err(input_error)?;
        let values_type = element_type(&values, op)?;
        if values_type != dtype {
            return Err(input_error(format!(
                "{op}'s values must have X's element type {}, not {}",
                dtype.onnx_name(),
                values_type.onnx_name()
            )));
        }
        Ok(Call {
            mask: mask.bools()?,
            x,
            values,
            dtype,
        })
    }

    fn dims(&self) -> Vec<i64> {
        self.x.sizes().iter().map(|&d| d as i64).collect()
    }

    /// Small writes stay on this thread: waking the pool costs more than the work.
    fn executor<'p>(&self, pool: &'p crate::ort::OrtPool<'_>) -> &'p dyn Executor {
        if self.mask.len() < PARALLEL_THRESHOLD {
            &Sequential
        } else {
            pool
        }
    }

    /// Writes string output elements: `pick(i)` is `Some(j)` for values element j, `None` for X's.
    fn write_strings(
        &self,
        context: &KernelContext<'a>,
        pick: impl Fn(usize) -> Option<usize>,
    ) -> Result<(), Error> {
        let mut out = context.output_strings(0, &self.dims())?;
        for i in 0..self.mask.len() {
            let s = match pick(i) {
                Some(j) => self.values.string_element(j)?,
                None => self.x.string_element(i)?,
            };
            out.set(i, &s)?;
        }
        Ok(())
    }
}

pub struct MaskedFill;

impl Operator for MaskedFill {
    type Kernel = MaskedFillKernel;
    const NAME: &'static CStr = c"MaskedFill";
    const INPUTS: &'static [Io] = INPUTS;
    const OUTPUTS: &'static [Io] = OUTPUTS;

    fn infer_shape(&self, context: &mut ShapeInferContext<'_>) -> Result<(), Error> {
        infer_like_x(context)
    }

    fn create_kernel(
        &self,
        info: &KernelInfo<'_>,
        _: &NodeSetup<'_>,
    ) -> Result<MaskedFillKernel, Error> {
        refuse_foreign_attributes(info, "MaskedFill", &[])?;
        Ok(MaskedFillKernel {})
    }
}

pub struct MaskedFillKernel {}

impl Kernel for MaskedFillKernel {
    fn compute(&self, context: &KernelContext<'_>) -> Result<(), Error> {
        let call = Call::read(context, "MaskedFill")?;
        let pattern = check_fill_value(call.x.sizes(), call.values.sizes()).map_err(input_error)?;
        if call.dtype == DataType::String {
            // Which value element each pattern slot holds, through the same expansion.
            let slots: Vec<u8> = (0..call.values.numel() as u64)
                .flat_map(u64::to_le_bytes)
                .collect();
            let slots = pattern.expand(&slots, 8);
            let slots: &[u8] = &slots;
            let period = pattern.pattern_len;
            return call.write_strings(context, |i| {
                call.mask[i].then(|| {
                    let at = (i % period) * 8;
                    u64::from_le_bytes(slots[at..at + 8].try_into().expect("8 bytes")) as usize
                })
            });
        }
        let size = call.dtype.size_of().expect("fixed-size type");
        let expanded = pattern.expand(call.values.bytes(call.dtype)?, size);
        let out = context.output_bytes(0, &call.dims(), call.dtype)?;
        let pool = context.pool();
        masked_fill_bytes(
            call.x.bytes(call.dtype)?,
            call.mask,
            &expanded,
            size,
            out,
            call.executor(&pool),
        )
        .map_err(input_error)
    }
}

pub struct MaskedScatter;

impl Operator for MaskedScatter {
    type Kernel = MaskedScatterKernel;
    const NAME: &'static CStr = c"MaskedScatter";
    const INPUTS: &'static [Io] = INPUTS;
    const OUTPUTS: &'static [Io] = OUTPUTS;

    fn infer_shape(&self, context: &mut ShapeInferContext<'_>) -> Result<(), Error> {
        infer_like_x(context)
    }

    fn create_kernel(
        &self,
        info: &KernelInfo<'_>,
        _: &NodeSetup<'_>,
    ) -> Result<MaskedScatterKernel, Error> {
        refuse_foreign_attributes(info, "MaskedScatter", &[])?;
        Ok(MaskedScatterKernel {})
    }
}

pub struct MaskedScatterKernel {}

impl Kernel for MaskedScatterKernel {
    fn compute(&self, context: &KernelContext<'_>) -> Result<(), Error> {
        let call = Call::read(context, "MaskedScatter")?;
        let pool = context.pool();
        let exec = call.executor(&pool);
        if call.dtype == DataType::String {
            let plan =
                MaskedPlan::count(call.mask, call.values.numel(), exec).map_err(input_error)?;
            let mut picks = vec![None; call.mask.len()];
            plan.for_each(|i, j| picks[i] = j);
            return call.write_strings(context, |i| picks[i]);
        }
        let size = call.dtype.size_of().expect("fixed-size type");
        // One count, which also checks the source's length before Y is allocated.
        let plan = MaskedPlan::count(call.mask, call.values.numel(), exec).map_err(input_error)?;
        let out = context.output_bytes(0, &call.dims(), call.dtype)?;
        plan.scatter_bytes(
            call.x.bytes(call.dtype)?,
            call.values.bytes(call.dtype)?,
            size,
            out,
            exec,
        )
        .map_err(input_error)
    }
}
