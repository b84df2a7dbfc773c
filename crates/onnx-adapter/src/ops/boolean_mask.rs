//! BooleanMask (domain `nonzero`, opset 1): `tf.boolean_mask(x, mask)` / torch's `x[mask]`.
//! Mask is bool of rank k >= 1 with shape `X.shape[..k]`; Y is `[nnz] + X.shape[k:]` of X's type,
//! strings included. X and Mask are read once and Y written once: no coordinates are built.

use super::input::{element_type, input_error, refuse_foreign_attributes};
use crate::ort::{Dim, ElementType, Error, Io, Kernel, KernelContext, KernelInfo, NodeSetup};
use crate::ort::{Operator, ShapeInferContext};
use nonzero_core::kernel::PARALLEL_THRESHOLD;
use nonzero_core::mask::{check_mask_shape, check_mask_type, MaskPlan};
use nonzero_core::{DataType, Executor, Sequential};
use std::ffi::CStr;

pub struct BooleanMask;

impl Operator for BooleanMask {
    type Kernel = BooleanMaskKernel;
    const NAME: &'static CStr = c"BooleanMask";
    // Y takes X's type: ONNX Runtime (1.17 at least) requires exactly one input of any type
    // when an output is of any type, and gives the output that input's type. So the mask is
    // declared bool, and a mask of another type is refused by ONNX Runtime's schema check.
    const INPUTS: &'static [Io] = &[
        Io::required(ElementType::Any),
        Io::required(ElementType::Bool),
    ];
    const OUTPUTS: &'static [Io] = &[Io::required(ElementType::Any)];

    /// Y: X's type, `[nnz] + X.shape[k:]`. ONNX Runtime only logs an inference error (unless
    /// `session.strict_shape_type_inference` is set), so Y is declared first and a rule that
    /// known dimensions break is reported after; compute then refuses the call with the same text.
    fn infer_shape(&self, context: &mut ShapeInferContext<'_>) -> Result<(), Error> {
        let x = context.input_shape(0)?;
        let mask = context.input_shape(1)?;
        if x.is_empty() || mask.is_empty() {
            return Ok(()); // unknown ranks, or a scalar, which compute refuses with a clear error
        }
        let mut dims = vec![Dim::fresh_symbol("boolean_mask_nnz")];
        dims.extend(x.iter().skip(mask.len()).cloned());
        context.set_output_code(0, context.input_element_code(0)?, &dims)?;
        if let Some(mask_type) = DataType::from_onnx_code(context.input_element_code(1)?) {
            check_mask_type(mask_type).map_err(input_error)?;
        }
        let clash = mask.len() > x.len()
            || x.iter().zip(&mask).any(|pair| match pair {
                (Dim::Fixed(a), Dim::Fixed(b)) => a != b,
                _ => false,
            });
        if clash {
            return Err(Error::invalid_argument(format!(
                "BooleanMask's mask shape {} must equal the leading dimensions of X's shape {}",
                show(&mask),
                show(&x)
            )));
        }
        Ok(())
    }

    fn create_kernel(
        &self,
        info: &KernelInfo<'_>,
        _: &NodeSetup<'_>,
    ) -> Result<BooleanMaskKernel, Error> {
        refuse_foreign_attributes(info, "BooleanMask", &[])?;
        Ok(BooleanMaskKernel {})
    }
}

fn show(dims: &[Dim]) -> String {
    let dims: Vec<String> = dims
        .iter()
        .map(|d| match d {
            Dim::Fixed(n) => n.to_string(),
            Dim::Symbolic(s) => s.clone(),
            Dim::Unknown => "?".into(),
        })
        .collect();
    format!("[{}]", dims.join(", "))
}

pub struct BooleanMaskKernel {}

impl Kernel for BooleanMaskKernel {
    fn compute(&self, context: &KernelContext<'_>) -> Result<(), Error> {
        let x = context.input(0)?;
        let mask = context.input(1)?;
        let x_type = element_type(&x, "BooleanMask")?;
        check_mask_type(element_type(&mask, "BooleanMask")?).map_err(input_error)?;
        let shape = check_mask_shape(x.sizes(), mask.sizes()).map_err(input_error)?;
        let pool = context.pool();
        // Small copies stay on this thread: waking the pool costs more than the work.
        let work = shape.mask_len.saturating_mul(shape.slice_len);
        let exec: &dyn Executor = if work < PARALLEL_THRESHOLD {
            &Sequential
        } else {
            &pool
        };
        let plan = MaskPlan::count_for_slices(mask.bools()?, shape.slice_len, exec);
        let dims: Vec<i64> = shape
            .output_shape(plan.nnz())
            .iter()
            .map(|&d| d as i64)
            .collect();
        if x_type == DataType::String {
            let mut out = context.output_strings(0, &dims)?;
            let mut result = Ok(());
            plan.for_each_selected(|slice, row| {
                for j in 0..shape.slice_len {
                    let copied = x
                        .string_element(slice * shape.slice_len + j)
                        .and_then(|s| out.set(row * shape.slice_len + j, &s));
                    if result.is_ok() {
                        result = copied;
                    }
                }
            });
            return result;
        }
        let size = x_type.size_of().expect("fixed-size type");
        let out = context.output_bytes(0, &dims, x_type)?;
        plan.gather_bytes(x.bytes(x_type)?, shape.slice_len * size, out, exec)
            .map_err(input_error)
    }
}
