//! NonZeroCoordinates (domain `nonzero`, opset 1): DirectML's operator for ONNX Runtime models.
//! Count uint32 `[1]` and Coordinates uint32 `[numel(X), N]` (right-aligned, zero past Count),
//! both shapes static; the int attribute `columns` sets N (effective rank <= N <= rank).

use super::input::{input_error, refuse_foreign_attributes, Input};
use crate::ort::{Dim, ElementType, Error, Io, Kernel, KernelContext, KernelInfo, NodeSetup};
use crate::ort::{Operator, ShapeInferContext};
use nonzero_core::dml::{coordinates_columns, coordinates_for_onnx, coordinates_shapes};
use std::ffi::CStr;

const COLUMNS: &CStr = c"columns";

pub struct NonZeroCoordinates;

impl Operator for NonZeroCoordinates {
    type Kernel = CoordinatesKernel;
    const NAME: &'static CStr = c"NonZeroCoordinates";
    const INPUTS: &'static [Io] = &[Io::required(ElementType::Any)];
    const OUTPUTS: &'static [Io] = &[
        Io::required(ElementType::UInt32),
        Io::required(ElementType::UInt32),
    ];

    /// Count `[1]`; Coordinates `[numel, N]`, checked against the rule when X's shape is known
    /// (ONNX Runtime logs a broken rule here; compute refuses the call with the same text).
    fn infer_shape(&self, context: &mut ShapeInferContext<'_>) -> Result<(), Error> {
        context.set_output(0, ElementType::UInt32, &[Dim::Fixed(1)])?;
        let shape = context.input_shape(0)?;
        let columns = context.attribute_i64(COLUMNS)?;
        if shape.is_empty() {
            return Ok(()); // a scalar, or a shape ONNX Runtime does not know
        }
        let fixed: Option<Vec<usize>> = shape
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => usize::try_from(*n).ok(),
                _ => None,
            })
            .collect();
        let dims = match fixed {
            Some(sizes) => {
                let (_, [numel, n]) = coordinates_shapes(&sizes, columns).map_err(input_error)?;
                [Dim::Fixed(numel as i64), Dim::Fixed(n as i64)]
            }
            None => [
                Dim::Unknown,
                Dim::Fixed(columns.unwrap_or(shape.len() as i64)),
            ],
        };
        context.set_output(1, ElementType::UInt32, &dims)
    }

    fn create_kernel(
        &self,
        info: &KernelInfo<'_>,
        _: &NodeSetup<'_>,
    ) -> Result<CoordinatesKernel, Error> {
        refuse_foreign_attributes(info, "NonZeroCoordinates", &[COLUMNS])?;
        Ok(CoordinatesKernel {
            columns: info.attribute_i64(COLUMNS),
        })
    }
}

pub struct CoordinatesKernel {
    columns: Option<i64>,
}

impl Kernel for CoordinatesKernel {
    fn compute(&self, context: &KernelContext<'_>) -> Result<(), Error> {
        let input = Input::read(context, 0, "NonZeroCoordinates")?;
        let n = coordinates_columns(input.sizes(), self.columns).map_err(input_error)?;
        let pool = context.pool();
        let exec = input.executor(&pool);
        let count = context.output::<u32>(0, &[1])?;
        let numel = input.tensor.numel();
        let coordinates = context.output::<u32>(1, &[numel as i64, n as i64])?;
        input.with_source(|src| {
            coordinates_for_onnx(src, input.sizes(), n, count, coordinates, exec)
                .map_err(input_error)
        })?;
        Ok(())
    }
}
