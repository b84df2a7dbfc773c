//! NonZero (ONNX opsets 9-12 and 13+, and `nonzero` opset 1): any input type, an int64
//! `[rank, nnz]` output, on op-core's two passes over the session's thread pool, or the GPU when
//! the session asked.

use super::input::{input_error, refuse_foreign_attributes, Input};
use crate::device::{self, Device, DEVICE_ENV, DEVICE_KEY, LOG_DEVICE_ENV};
use crate::gpu::Gpu;
use crate::ort::{Dim, ElementType, Error, Io, Kernel, KernelContext, KernelInfo, NodeSetup};
use crate::ort::{Operator, ShapeInferContext};
use nonzero_core::Counted;
use std::borrow::Cow;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};

/// NonZero, as registered for one kind of session.
#[derive(Debug, Clone)]
pub struct NonZero {
    /// The session asked for the GPU where kernels cannot read its config (see `ops::Settings`).
    pub gpu_requested_unreadable: bool,
}

impl Operator for NonZero {
    type Kernel = NonZeroKernel;
    const NAME: &'static CStr = c"NonZero";
    const INPUTS: &'static [Io] = &[Io::required(ElementType::Any)];
    const OUTPUTS: &'static [Io] = &[Io::required(ElementType::Int64)];

    /// `[rank, nnz]`, nnz a fresh symbol. ONNX Runtime reports an unknown input shape as rank 0,
    /// like a scalar's, so there the rank is a fresh symbol too: the output is rank 2 either way,
    /// and an output left undeclared reads as a scalar to ONNX Runtime 1.17's inference
    /// downstream.
    fn infer_shape(&self, context: &mut ShapeInferContext<'_>) -> Result<(), Error> {
        let dims = output_shape(context.input_shape(0)?.len());
        context.set_output(0, ElementType::Int64, &dims)
    }

    fn create_kernel(
        &self,
        info: &KernelInfo<'_>,
        node: &NodeSetup<'_>,
    ) -> Result<NonZeroKernel, Error> {
        refuse_foreign_attributes(info, "NonZero", &[])?;
        let entry = info.config_entry(DEVICE_KEY)?;
        let env = std::env::var(DEVICE_ENV).ok();
        let choice = device::choose(
            &entry,
            self.gpu_requested_unreadable,
            env.as_deref(),
            node.host_version,
        )?;
        let warn = |message: String| {
            if let Some(logger) = info.logger() {
                logger.warn(&format!("NonZero node '{}': {message}", node.node_name));
            }
        };
        if let Some(warning) = choice.warning {
            warn(warning);
        }
        let gpu = match choice.device {
            Device::Cpu => None,
            Device::Gpu => Gpu::get()
                .map_err(|e| {
                    warn(format!(
                        "the GPU was requested but cannot be used ({e}); the node runs on the CPU"
                    ))
                })
                .ok(),
        };
        Ok(NonZeroKernel {
            gpu,
            gpu_failure_logged: AtomicBool::new(false),
            log_device: std::env::var(LOG_DEVICE_ENV).is_ok_and(|v| v == "1"),
        })
    }
}

/// The inferred output shape for an input reported as rank `rank` (0: a scalar, or unknown).
fn output_shape(rank: usize) -> [Dim; 2] {
    let rank = match rank {
        0 => Dim::fresh_symbol("nonzero_rank"),
        rank => Dim::Fixed(rank as i64),
    };
    [rank, Dim::fresh_symbol("nonzero_nnz")]
}

pub struct NonZeroKernel {
    /// The GPU context when this node's session asked for the GPU and one could be opened.
    gpu: Option<&'static Gpu>,
    /// A GPU failure was logged already (once per kernel; later failures fall back silently).
    gpu_failure_logged: AtomicBool,
    /// NONZERO_ORT_LOG_DEVICE=1: log where each compute ran.
    log_device: bool,
}

/// Why the GPU's result did not go into ONNX Runtime's output: ONNX Runtime refused to allocate
/// it (passed on), or the GPU reported another rank (the node falls back to the CPU).
enum OffGpu {
    Output(Error),
    Rank(String),
}

impl Kernel for NonZeroKernel {
    fn compute(&self, context: &KernelContext<'_>) -> Result<(), Error> {
        let ran_on = self.run(context)?;
        if self.log_device {
            if let Some(logger) = context.logger() {
                logger.warn(&format!(
                    "NonZero node '{}' ran on {ran_on}",
                    context.node_name()
                ));
            }
        }
        Ok(())
    }
}

impl NonZeroKernel {
    /// Runs the node; returns where it ran ("cpu", "gpu (adapter)").
    fn run(&self, context: &KernelContext<'_>) -> Result<Cow<'static, str>, Error> {
        let input = Input::read(context, 0, "NonZero")?;
        if let (None, Some(src)) = (self.gpu, &input.numeric) {
            // Token and score masks: op-core's one pass (it declines every other shape).
            let one_pass = src.nonzero_one_pass(input.sizes(), |[rank, nnz]| {
                context.output::<i64>(0, &[rank as i64, nnz as i64])
            })?;
            if one_pass {
                return Ok(Cow::Borrowed("cpu"));
            }
        }
        let layout = input.layout()?;
        // Strings have no bytes and never go to the GPU.
        if let (Some(gpu), Some(bytes)) = (self.gpu, input.bytes) {
            let rank = layout.rank();
            let ran = gpu.nonzero_into(input.dtype, bytes, layout.sizes(), |[r, nnz]| {
                if r != rank {
                    // Checked before ONNX Runtime allocates: the CPU then allocates the output.
                    return Err(OffGpu::Rank(format!(
                        "a [{r}, {nnz}] result for a rank-{rank} input"
                    )));
                }
                context
                    .output::<i64>(0, &[r as i64, nnz as i64])
                    .map_err(OffGpu::Output)
            });
            match ran {
                Ok(Ok(())) => return Ok(Cow::Owned(format!("gpu ({})", gpu.adapter()))),
                Ok(Err(OffGpu::Output(output_error))) => return Err(output_error),
                Ok(Err(OffGpu::Rank(why))) | Err(why) => self.log_gpu_failure(context, why),
            }
        }
        let pool = context.pool();
        let exec = input.executor(&pool);
        input.with_source(|src| {
            // op-core's two passes, the [rank, nnz] output allocated by ONNX Runtime between them.
            let counted = Counted::count(src, &layout, exec).map_err(input_error)?;
            let dims = [counted.rank() as i64, counted.nnz() as i64];
            let out = context.output::<i64>(0, &dims)?;
            counted.write_onnx(src, out, exec).map_err(input_error)
        })?;
        Ok(Cow::Borrowed("cpu"))
    }

    fn log_gpu_failure(&self, context: &KernelContext<'_>, why: String) {
        if self.gpu_failure_logged.swap(true, Ordering::Relaxed) {
            return;
        }
        if let Some(logger) = context.logger() {
            logger.warn(&format!(
                "NonZero node '{}': the GPU kernel failed ({why}); running on the CPU (logged once per node)",
                context.node_name()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_is_rank_by_a_fresh_symbol_and_an_unknown_rank_is_a_symbol_too() {
        let [Dim::Symbolic(rank), Dim::Symbolic(_)] = output_shape(0) else {
            panic!("{:?}", output_shape(0))
        };
        assert!(rank.starts_with("nonzero_rank_"), "{rank}");
        let [rank, nnz] = output_shape(3);
        assert_eq!(rank, Dim::Fixed(3));
        let Dim::Symbolic(first) = nnz else {
            panic!("{nnz:?}")
        };
        let [_, Dim::Symbolic(second)] = output_shape(3) else {
            panic!()
        };
        assert!(first.starts_with("nonzero_nnz_") && second.starts_with("nonzero_nnz_"));
        assert_ne!(first, second, "two outputs must not share a length symbol");
    }

    #[test]
    fn unknown_types_are_not_implemented_and_say_which_types_are() {
        let e = super::super::input::unsupported_type("NonZero", 17);
        assert!(
            e.to_string()
                .starts_with("input element type 17 is not a NonZero type (NonZero accepts bool"),
            "{e}"
        );
        assert!(
            nonzero_core::DataType::from_onnx_code(17).is_none(),
            "17 (float8e4m3fn) must stay unsupported here"
        );
    }
}
