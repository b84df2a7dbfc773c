//! What the ops that read one tensor X share: X's type, sizes and layout, the executor for its
//! size, and X as an op-core source (strings through their lengths, without copying them).

use crate::ort::{Error, KernelContext, OrtPool, Tensor};
use nonzero_core::kernel::{one_pass_dim, PARALLEL_THRESHOLD};
use nonzero_core::{DataType, Executor, FnSource, Layout, NumericSlice, Sequential, ZeroTest};
use smallvec::SmallVec;
use std::sync::atomic::{AtomicBool, Ordering};

pub(super) fn input_error(e: impl ToString) -> Error {
    Error::invalid_argument(e.to_string())
}

/// The error for an element type `op` does not take.
pub(super) fn unsupported_type(op: &str, code: i32) -> Error {
    Error::not_implemented(format!(
        "input element type {code} is not a {op} type ({op} accepts bool, (u)int8/16/32/64, float16, \
         bfloat16, float, double, string, complex64, complex128)"
    ))
}

/// Input `index` of a compute call, read and checked.
pub(super) struct Input<'a> {
    pub tensor: Tensor<'a>,
    pub dtype: DataType,
    /// Packed row-major; `layout.sizes()` is the input's shape.
    pub layout: Layout,
    /// X's data as a typed slice; `None` for strings.
    pub numeric: Option<NumericSlice<'a>>,
}

impl<'a> Input<'a> {
    /// Input `index` of the call; `op` names the operator in the unsupported-type error.
    pub fn read(context: &KernelContext<'a>, index: usize, op: &str) -> Result<Input<'a>, Error> {
        Input::new(context.input(index)?, op)
    }

    /// `tensor` read and checked; `op` names the operator in the unsupported-type error.
    pub fn new(tensor: Tensor<'a>, op: &str) -> Result<Input<'a>, Error> {
        let code = tensor.element_code();
        let dtype = DataType::from_onnx_code(code).ok_or_else(|| unsupported_type(op, code))?;
        let dims = tensor.dims();
        // Inline up to rank 8: a compute on a small input allocates nothing here.
        let sizes = dims
            .iter()
            .map(|&d| usize::try_from(d))
            .collect::<Result<SmallVec<[usize; 8]>, _>>()
            .map_err(|_| input_error(format!("input shape {dims:?} has a negative size")))?;
        let layout = Layout::packed(&sizes).map_err(input_error)?;
        let numeric = match dtype {
            DataType::String => None,
            _ => Some(NumericSlice::from_bytes(dtype, tensor.bytes(dtype)?).map_err(input_error)?),
        };
        Ok(Input {
            tensor,
            dtype,
            layout,
            numeric,
        })
    }

    /// Small inputs stay on this thread: waking the pool costs more than the work.
    pub fn executor<'p>(&self, pool: &'p OrtPool<'_>) -> &'p dyn Executor {
        if self.layout.numel() < PARALLEL_THRESHOLD {
            &Sequential
        } else {
            pool
        }
    }

    /// Runs `body` on X as an op-core source.
    pub fn with_source<R>(
        &self,
        body: impl FnOnce(&dyn ZeroTest) -> Result<R, Error>,
    ) -> Result<R, Error> {
        if let Some(slice) = &self.numeric {
            return body(slice);
        }
        // A string is non-zero when it is not empty.
        let failed = AtomicBool::new(false);
        let strings = FnSource::new(self.layout.numel(), |i| {
            self.tensor.string_is_nonempty(i).unwrap_or_else(|_| {
                failed.store(true, Ordering::Relaxed);
                false
            })
        });
        let result = body(&strings)?;
        if failed.load(Ordering::Relaxed) {
            return Err(input_error(
                "ONNX Runtime could not report a string element's length",
            ));
        }
        Ok(result)
    }
}

/// The shape of an input that op-core's one pass takes (rank at most 8).
pub(super) struct OnePassShape {
    sizes: [usize; 8],
    rank: usize,
}

impl OnePassShape {
    pub fn sizes(&self) -> &[usize] {
        &self.sizes[..self.rank]
    }
}

/// X as a token or score mask for op-core's one pass (`kernel/one_pass.rs`): one short loop
/// instead of the two-pass kernel, which costs microseconds when a model has evicted its code.
/// Reads no more than X's type and shape unless the pass takes them; `None` leaves X to the
/// two-pass path, which also reports whatever is wrong with it.
pub(super) fn one_pass_input<'a>(
    tensor: &Tensor<'a>,
) -> Result<Option<(NumericSlice<'a>, OnePassShape)>, Error> {
    let dims = tensor.dims();
    let mut shape = OnePassShape {
        sizes: [0; 8],
        rank: dims.len(),
    };
    if dims.len() > shape.sizes.len() {
        return Ok(None);
    }
    for (size, &d) in shape.sizes.iter_mut().zip(dims) {
        let Ok(d) = usize::try_from(d) else {
            return Ok(None);
        };
        *size = d;
    }
    let dtype = DataType::from_onnx_code(tensor.element_code());
    let Some(dtype) =
        dtype.filter(|&t| t != DataType::String && one_pass_dim(shape.sizes()).is_some())
    else {
        return Ok(None);
    };
    let src = NumericSlice::from_bytes(dtype, tensor.bytes(dtype)?).map_err(input_error)?;
    Ok(Some((src, shape)))
}
