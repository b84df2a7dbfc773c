//! What the ops that read one tensor X share: X read once (its type, shape and data), the
//! executor for its size, and X as an op-core source (strings through their lengths, without
//! copying them).

use crate::ort::{Error, KernelContext, KernelInfo, OrtPool, Tensor};
use nonzero_core::kernel::PARALLEL_THRESHOLD;
use nonzero_core::{DataType, Executor, FnSource, Layout, NumericSlice, Sequential, ZeroTest};
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};

pub(super) fn input_error(e: impl ToString) -> Error {
    Error::invalid_argument(e.to_string())
}

/// The attribute names the library's ops take (BooleanMaskAxis's `axis`, NonZeroCoordinates'
/// `columns`), and the names a later version may give new meaning to. ONNX Runtime accepts any
/// attribute on a custom op and cannot list them, so each kernel refuses, by name, these when
/// they are not its own: a model written for other semantics (BooleanMask with `axis`) is
/// refused instead of run along axis 0. Other unknown names go unseen (docs/ops.md).
const RESERVED_ATTRIBUTES: &[&CStr] = &[
    c"axis",
    c"columns",
    c"reduction",
    c"batch_dims",
    c"fill_value",
];

/// Refuses a node of `op` that sets a reserved attribute `op` does not take (`own`).
pub(super) fn refuse_foreign_attributes(
    info: &KernelInfo<'_>,
    op: &str,
    own: &[&CStr],
) -> Result<(), Error> {
    for name in RESERVED_ATTRIBUTES.iter().filter(|n| !own.contains(n)) {
        if info.has_attribute(name) {
            return Err(Error::invalid_argument(format!(
                "{op} takes no attribute '{}'{}; this library would not apply it, so the node is refused",
                name.to_string_lossy(),
                if *name == c"axis" && op == "BooleanMask" {
                    " (BooleanMaskAxis selects along an axis)"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

/// The error for an element type `op` does not take.
pub(super) fn unsupported_type(op: &str, code: i32) -> Error {
    Error::not_implemented(format!(
        "input element type {code} is not a {op} type ({op} accepts bool, (u)int8/16/32/64, float16, \
         bfloat16, float, double, string, complex64, complex128)"
    ))
}

/// The element type of `tensor`, or the error that names what `op` accepts.
pub(super) fn element_type(tensor: &Tensor<'_>, op: &str) -> Result<DataType, Error> {
    let code = tensor.element_code();
    DataType::from_onnx_code(code).ok_or_else(|| unsupported_type(op, code))
}

/// Input `index` of a compute call, read once: every path of a kernel (op-core's one pass, its
/// two passes, the GPU) takes what it needs from here.
pub(super) struct Input<'a> {
    pub tensor: Tensor<'a>,
    pub dtype: DataType,
    /// The packed little-endian bytes of a fixed-size type; `None` for strings.
    pub bytes: Option<&'a [u8]>,
    /// The same data as a typed slice; `None` for strings.
    pub numeric: Option<NumericSlice<'a>>,
}

impl<'a> Input<'a> {
    /// Input `index` of the call; `op` names the operator in the unsupported-type error.
    pub fn read(context: &KernelContext<'a>, index: usize, op: &str) -> Result<Input<'a>, Error> {
        let tensor = context.input(index)?;
        let dtype = element_type(&tensor, op)?;
        let (bytes, numeric) = match dtype {
            DataType::String => (None, None),
            _ => {
                let bytes = tensor.bytes(dtype)?;
                let numeric = NumericSlice::from_bytes(dtype, bytes).map_err(input_error)?;
                (Some(bytes), Some(numeric))
            }
        };
        Ok(Input {
            tensor,
            dtype,
            bytes,
            numeric,
        })
    }

    /// X's shape.
    pub fn sizes(&self) -> &[usize] {
        self.tensor.sizes()
    }

    /// X's packed row-major layout, for op-core's two passes (the one pass needs none).
    pub fn layout(&self) -> Result<Layout, Error> {
        Layout::packed(self.sizes()).map_err(input_error)
    }

    /// Small inputs stay on this thread: waking the pool costs more than the work.
    pub fn executor<'p>(&self, pool: &'p OrtPool<'_>) -> &'p dyn Executor {
        if self.tensor.numel() < PARALLEL_THRESHOLD {
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
        let strings = FnSource::new(self.tensor.numel(), |i| {
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
