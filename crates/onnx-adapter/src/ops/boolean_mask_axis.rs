//! BooleanMaskAxis (domain `nonzero`, opset 1): `tf.boolean_mask(x, m, axis=a)` for a 1-D m, as
//! the gather exporters write for it, `Gather(X, positions of M's true entries, axis=a)`. Y is
//! `X.shape[..a] + [nnz] + X.shape[a+1..]` of X's type, strings included; M may be shorter or
//! longer than the axis, but a true entry past its end is refused (op-core's `mask::axis`).

use super::input::{element_type, input_error, refuse_foreign_attributes};
use crate::ort::{Dim, ElementType, Error, Io, Kernel, KernelContext, KernelInfo, NodeSetup};
use crate::ort::{Operator, ShapeInferContext};
use nonzero_core::kernel::PARALLEL_THRESHOLD;
use nonzero_core::mask::{check_axis, check_mask_type, MaskPlan};
use nonzero_core::{DataType, Executor, Sequential};
use std::ffi::CStr;

const AXIS: &CStr = c"axis";

pub struct BooleanMaskAxis;

impl Operator for BooleanMaskAxis {
    type Kernel = BooleanMaskAxisKernel;
    const NAME: &'static CStr = c"BooleanMaskAxis";
    // As BooleanMask: one input of any type (Y takes its type), the mask declared bool.
    const INPUTS: &'static [Io] = &[
        Io::required(ElementType::Any),
        Io::required(ElementType::Bool),
    ];
    const OUTPUTS: &'static [Io] = &[Io::required(ElementType::Any)];

    /// Y: X's type and shape, the axis's size a fresh symbol (nnz).
    fn infer_shape(&self, context: &mut ShapeInferContext<'_>) -> Result<(), Error> {
        let mut dims = context.input_shape(0)?;
        let axis = context.attribute_i64(AXIS)?.unwrap_or(0);
        let rank = dims.len() as i64;
        if rank == 0 || axis < -rank || axis >= rank {
            return Ok(()); // an unknown rank, or a bad axis compute refuses with the rule
        }
        let at = if axis < 0 { axis + rank } else { axis } as usize;
        dims[at] = Dim::fresh_symbol("boolean_mask_axis_nnz");
        context.set_output_code(0, context.input_element_code(0)?, &dims)
    }

    fn create_kernel(
        &self,
        info: &KernelInfo<'_>,
        _: &NodeSetup<'_>,
    ) -> Result<BooleanMaskAxisKernel, Error> {
        refuse_foreign_attributes(info, "BooleanMaskAxis", &[AXIS])?;
        Ok(BooleanMaskAxisKernel {
            axis: info.attribute_i64(AXIS).unwrap_or(0),
        })
    }
}

pub struct BooleanMaskAxisKernel {
    axis: i64,
}

impl Kernel for BooleanMaskAxisKernel {
    fn compute(&self, context: &KernelContext<'_>) -> Result<(), Error> {
        let x = context.input(0)?;
        let mask = context.input(1)?;
        let x_type = element_type(&x, "BooleanMaskAxis")?;
        check_mask_type(element_type(&mask, "BooleanMaskAxis")?).map_err(input_error)?;
        if mask.sizes().len() != 1 {
            return Err(input_error(format!(
                "BooleanMaskAxis's mask must be 1-D, its shape is {:?}",
                mask.sizes()
            )));
        }
        let shape = check_axis(x.sizes(), self.axis).map_err(input_error)?;
        let usable = shape.usable(mask.bools()?).map_err(input_error)?;
        let pool = context.pool();
        let exec: &dyn Executor = if x.numel() < PARALLEL_THRESHOLD {
            &Sequential
        } else {
            &pool
        };
        let plan = MaskPlan::count(usable, exec);
        let dims: Vec<i64> = shape
            .output_shape(plan.nnz())
            .iter()
            .map(|&d| d as i64)
            .collect();
        if x_type == DataType::String {
            let mut out = context.output_strings(0, &dims)?;
            let picked: Vec<usize> = plan.selected().collect();
            let mut at = 0;
            for o in 0..shape.outer {
                for &j in &picked {
                    for k in 0..shape.inner {
                        let from = (o * shape.axis_len + j) * shape.inner + k;
                        out.set(at, &x.string_element(from)?)?;
                        at += 1;
                    }
                }
            }
            return Ok(());
        }
        let size = x_type.size_of().expect("fixed-size type");
        let out = context.output_bytes(0, &dims, x_type)?;
        plan.gather_along(x.bytes(x_type)?, &shape, shape.inner * size, out, exec)
            .map_err(input_error)
    }
}
