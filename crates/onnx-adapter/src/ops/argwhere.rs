//! ArgWhere (domain `nonzero`, opset 1): int64 `[nnz, rank]`, NonZero transposed, as
//! `torch.argwhere` and `tf.where` lay it out; written directly by op-core, no transpose pass.

use super::input::{input_error, refuse_foreign_attributes, Input};
use crate::ort::{Dim, ElementType, Error, Io, Kernel, KernelContext, KernelInfo, NodeSetup};
use crate::ort::{Operator, ShapeInferContext};
use nonzero_core::Counted;
use std::ffi::CStr;

pub struct ArgWhere;

impl Operator for ArgWhere {
    type Kernel = ArgWhereKernel;
    const NAME: &'static CStr = c"ArgWhere";
    const INPUTS: &'static [Io] = &[Io::required(ElementType::Any)];
    const OUTPUTS: &'static [Io] = &[Io::required(ElementType::Int64)];

    /// `[nnz, rank]`; where the input is reported as rank 0 (a scalar, or an unknown shape) the
    /// rank is a fresh symbol: the output is rank 2 either way.
    fn infer_shape(&self, context: &mut ShapeInferContext<'_>) -> Result<(), Error> {
        let rank = match context.input_shape(0)?.len() {
            0 => Dim::fresh_symbol("argwhere_rank"),
            rank => Dim::Fixed(rank as i64),
        };
        let dims = [Dim::fresh_symbol("argwhere_nnz"), rank];
        context.set_output(0, ElementType::Int64, &dims)
    }

    fn create_kernel(
        &self,
        info: &KernelInfo<'_>,
        _: &NodeSetup<'_>,
    ) -> Result<ArgWhereKernel, Error> {
        refuse_foreign_attributes(info, "ArgWhere", &[])?;
        Ok(ArgWhereKernel {})
    }
}

pub struct ArgWhereKernel {}

impl Kernel for ArgWhereKernel {
    fn compute(&self, context: &KernelContext<'_>) -> Result<(), Error> {
        let input = Input::read(context, 0, "ArgWhere")?;
        if let Some(src) = &input.numeric {
            // Token and score masks: op-core's one pass (it declines every other shape).
            let one_pass = src.argwhere_one_pass(input.sizes(), |[nnz, rank]| {
                context.output::<i64>(0, &[nnz as i64, rank as i64])
            })?;
            if one_pass {
                return Ok(());
            }
        }
        let layout = input.layout()?;
        let pool = context.pool();
        let exec = input.executor(&pool);
        input.with_source(|src| {
            let counted = Counted::count(src, &layout, exec).map_err(input_error)?;
            let dims = [counted.nnz() as i64, counted.rank() as i64];
            let out = context.output::<i64>(0, &dims)?;
            counted.write_argwhere(src, out, exec).map_err(input_error)
        })
    }
}
