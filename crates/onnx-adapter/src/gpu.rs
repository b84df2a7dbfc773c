//! The process-wide GPU context of the opt-in GPU path, created on first use by a kernel whose
//! session asked for `custom_op.NonZero.device = "gpu"` and shared by every such kernel.
//!
//! Every failure (no adapter, device creation, a GPU error or a wgpu panic) comes back as an
//! `Err(message)`; the kernel then runs on the CPU and logs why.

use nonzero_core::DataType;

/// One GPU context and the name of its adapter (e.g. "llvmpipe (LLVM 19.1.7, 256 bits)").
#[cfg(feature = "gpu")]
pub struct Gpu {
    context: nonzero_gpu::GpuNonZero,
    adapter: String,
}

#[cfg(feature = "gpu")]
static GPU: std::sync::OnceLock<Result<Gpu, String>> = std::sync::OnceLock::new();

#[cfg(feature = "gpu")]
fn caught<T>(what: &str, body: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    crate::ort::catch_panic(body).unwrap_or_else(|panic| Err(format!("{what} panicked: {panic}")))
}

#[cfg(feature = "gpu")]
impl Gpu {
    /// The shared context, created on the first call (the answer, success or not, is kept).
    pub fn get() -> Result<&'static Gpu, String> {
        GPU.get_or_init(|| {
            caught("opening the GPU", || {
                let (adapter, device, queue) = // SUBGROUP when the adapter has it: the kernel's subgroup scans; otherwise the fallback.
                nonzero_gpu::request_device(wgpu::Features::SUBGROUP)
                    .map_err(|e| e.to_string())?;
                let info = adapter.get_info();
                let context =
                    nonzero_gpu::GpuNonZero::new(device, queue, nonzero_gpu::GpuConfig::default())
                        .map_err(|e| e.to_string())?;
                Ok(Gpu {
                    context,
                    adapter: format!("{}, {:?}", info.name, info.backend),
                })
            })
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    /// NonZero of a packed little-endian tensor, read back straight into the memory that
    /// `output([rank, nnz])` returns (ONNX Runtime's output). The outer error is the GPU's (the
    /// caller falls back to the CPU); the inner one is `output`'s own, passed on as it is.
    pub fn nonzero_into<'o, E>(
        &self,
        dtype: DataType,
        bytes: &[u8],
        shape: &[usize],
        output: impl FnOnce([usize; 2]) -> Result<&'o mut [i64], E>,
    ) -> Result<Result<(), E>, String> {
        caught("the GPU kernel", || {
            let mut output_error = None;
            let ran = self
                .context
                .nonzero_bytes_into(dtype, bytes, shape, |dims| {
                    output(dims).map_err(|e| {
                        output_error = Some(e);
                        GpuFailure::Output
                    })
                });
            match (ran, output_error) {
                (_, Some(e)) => Ok(Err(e)),
                (Ok(()), None) => Ok(Ok(())),
                (Err(GpuFailure::Gpu(e)), None) => Err(e.to_string()),
                (Err(GpuFailure::Output), None) => Err("the output callback failed".into()),
            }
        })
    }
}

/// Why `nonzero_bytes_into` stopped: the GPU, or the output callback (its error kept aside).
#[cfg(feature = "gpu")]
enum GpuFailure {
    Gpu(nonzero_gpu::GpuError),
    Output,
}

#[cfg(feature = "gpu")]
impl From<nonzero_gpu::GpuError> for GpuFailure {
    fn from(e: nonzero_gpu::GpuError) -> Self {
        GpuFailure::Gpu(e)
    }
}

/// The CPU-only build: asking for the GPU always fails with an explanation.
#[cfg(not(feature = "gpu"))]
pub struct Gpu {
    never: std::convert::Infallible,
}

#[cfg(not(feature = "gpu"))]
impl Gpu {
    pub fn get() -> Result<&'static Gpu, String> {
        Err("this libnonzero_ort was built without its `gpu` feature".into())
    }

    pub fn adapter(&self) -> &str {
        match self.never {}
    }

    pub fn nonzero_into<'o, E>(
        &self,
        _: DataType,
        _: &[u8],
        _: &[usize],
        _: impl FnOnce([usize; 2]) -> Result<&'o mut [i64], E>,
    ) -> Result<Result<(), E>, String> {
        match self.never {}
    }
}
