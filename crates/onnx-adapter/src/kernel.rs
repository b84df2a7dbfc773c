//! One NonZero node: reads the input tensor, runs op-core's two passes on the session's pool and
//! writes the `[rank, nnz]` int64 output that ONNX Runtime allocates between the passes.

use crate::api::{host_version, Api, ConfigApi, CONFIG_API_VERSION};
use crate::device::{Device, DEVICE_ENV, DEVICE_KEY, LOG_DEVICE_ENV};
use crate::executor::OrtPool;
use crate::gpu::Gpu;
use nonzero_core::kernel::PARALLEL_THRESHOLD;
use nonzero_core::{
    Counted, DataType, Executor, FnSource, Layout, NumericSlice, Sequential, ZeroTest,
};
use ort_sys::{OrtErrorCode, OrtKernelContext, OrtKernelInfo, OrtLoggingLevel, OrtValue};
use std::ffi::{c_char, c_void};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a compute call failed; the message reaches the caller through an OrtStatus.
#[derive(Debug)]
pub enum ComputeError {
    /// ONNX Runtime refused a call (the message is its own).
    Host { call: &'static str, message: String },
    /// The input's element type is not one NonZero accepts (e.g. a float8 type).
    UnsupportedType(i32),
    /// The input's shape or data cannot be used.
    Input(String),
}

impl ComputeError {
    pub fn code(&self) -> OrtErrorCode {
        match self {
            ComputeError::Host { .. } => OrtErrorCode::ORT_FAIL,
            ComputeError::UnsupportedType(_) => OrtErrorCode::ORT_NOT_IMPLEMENTED,
            ComputeError::Input(_) => OrtErrorCode::ORT_INVALID_ARGUMENT,
        }
    }
}

impl fmt::Display for ComputeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComputeError::Host { call, message } => write!(f, "ONNX Runtime's {call} failed: {message}"),
            ComputeError::UnsupportedType(code) => write!(
                f,
                "input element type {code} is not a NonZero type (NonZero-13 accepts bool, (u)int8/16/32/64, float16, \
                 bfloat16, float, double, string, complex64, complex128)"
            ),
            ComputeError::Input(message) => f.write_str(message),
        }
    }
}

/// The input value, read by pool threads during one compute call.
struct SharedInput(*const OrtValue);
// SAFETY: the value stays alive and unmodified for the whole compute call, and
// GetStringTensorElementLength only reads it.
unsafe impl Sync for SharedInput {}

impl SharedInput {
    // A method, not a field access, so closures capture the Sync wrapper and not the pointer.
    fn get(&self) -> *const OrtValue {
        self.0
    }
}

/// Fault injection for the reliability tests: a node whose name equals this variable's value
/// panics on an ONNX Runtime pool thread during compute, which must reach the caller as an error
/// status while the process keeps running. Read once, when the kernel is created.
pub const INJECT_PANIC_ENV: &str = "NONZERO_ORT_INJECT_PANIC";

pub struct Kernel {
    api: Api,
    node_name: String,
    inject_panic: bool,
    /// The GPU context when this node's session asked for the GPU and one could be opened.
    gpu: Option<&'static Gpu>,
    /// A GPU failure was logged already (once per kernel; later failures fall back silently).
    gpu_failure_logged: AtomicBool,
    /// NONZERO_ORT_LOG_DEVICE=1: log where each compute ran.
    log_device: bool,
}

impl fmt::Debug for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kernel")
            .field("node_name", &self.node_name)
            .field("gpu", &self.gpu.map(Gpu::adapter))
            .finish_non_exhaustive()
    }
}

/// Where one compute ran, for NONZERO_ORT_LOG_DEVICE.
enum Ran {
    Cpu,
    Gpu(&'static str),
}

impl Kernel {
    /// Reads the node's name and its device choice. Fails only for an invalid device value.
    /// `config_unreadable_gpu`: the session asked for the GPU at registration but this host
    /// cannot show kernels their session's config (ONNX Runtime < 1.24); log that and use the CPU.
    ///
    /// # Safety
    /// `info` must be the live kernel info of this node.
    pub unsafe fn new(
        api: Api,
        info: *const OrtKernelInfo,
        config_unreadable_gpu: bool,
    ) -> Result<Kernel, String> {
        // SAFETY: forwarded from the caller.
        let node_name = unsafe { node_name(api, info) }.unwrap_or_default();
        let inject_panic =
            std::env::var(INJECT_PANIC_ENV).is_ok_and(|n| !n.is_empty() && n == node_name);
        let mut logger = std::ptr::null();
        // SAFETY: `info` is live; the logger it returns lives as long as the kernel info.
        let status = unsafe { (api.raw().KernelInfo_GetLogger)(info, &mut logger) };
        if api.check(status).is_err() {
            logger = std::ptr::null();
        }
        // SAFETY: `logger` is null or the live logger of this kernel info.
        let warn = |message: String| unsafe {
            api.log(logger, OrtLoggingLevel::ORT_LOGGING_LEVEL_WARNING, &message)
        };
        let key = DEVICE_KEY.to_string_lossy();
        let mut requested = None;
        if let Some(config) = ConfigApi::get() {
            // SAFETY: `info` is live (caller).
            if let Some(value) = unsafe { config.entry(api, info, DEVICE_KEY) }
                .map_err(|e| format!("reading the session config entry {key}: {e}"))?
            {
                requested = Some((value, format!("session config entry {key}")));
            }
        } else if config_unreadable_gpu {
            warn(format!(
                "NonZero node '{node_name}': the session config entry {key} = \"gpu\" cannot be \
                 read by custom ops on ONNX Runtime {} (KernelInfo_GetConfigEntries needs C API \
                 version {CONFIG_API_VERSION}, ONNX Runtime 1.{CONFIG_API_VERSION} or newer); the \
                 node runs on the CPU (set {DEVICE_ENV}=gpu to use the GPU on this host)",
                host_version()
            ));
        }
        if requested.is_none() {
            if let Ok(value) = std::env::var(DEVICE_ENV) {
                if !value.is_empty() {
                    requested = Some((value, format!("environment variable {DEVICE_ENV}")));
                }
            }
        }
        let device = match &requested {
            Some((value, source)) => Device::parse(value, source)
                .map_err(|e| format!("NonZero node '{node_name}': {e}"))?,
            None => Device::Cpu,
        };
        let gpu = match device {
            Device::Cpu => None,
            Device::Gpu => match Gpu::get() {
                Ok(gpu) => Some(gpu),
                Err(e) => {
                    warn(format!(
                        "NonZero node '{node_name}': the GPU was requested but cannot be used \
                         ({e}); the node runs on the CPU"
                    ));
                    None
                }
            },
        };
        Ok(Kernel {
            api,
            node_name,
            inject_panic,
            gpu,
            gpu_failure_logged: AtomicBool::new(false),
            log_device: std::env::var(LOG_DEVICE_ENV).is_ok_and(|v| v == "1"),
        })
    }

    /// # Safety
    /// `context` must be the live kernel context of the current compute call.
    unsafe fn log(&self, context: *mut OrtKernelContext, message: &str) {
        let raw = self.api.raw();
        let mut logger = std::ptr::null();
        // SAFETY: the context is live; its logger lives as long as the context.
        let status = unsafe { (raw.KernelContext_GetLogger)(context, &mut logger) };
        if self.api.check(status).is_ok() {
            // SAFETY: `logger` is the live logger just returned.
            unsafe {
                self.api
                    .log(logger, OrtLoggingLevel::ORT_LOGGING_LEVEL_WARNING, message)
            };
        }
    }

    pub fn node_name(&self) -> &str {
        &self.node_name
    }

    fn host<T>(
        &self,
        call: &'static str,
        status: ort_sys::OrtStatusPtr,
        value: T,
    ) -> Result<T, ComputeError> {
        self.api
            .check(status)
            .map(|()| value)
            .map_err(|message| ComputeError::Host { call, message })
    }

    /// Runs the node. Called concurrently from several threads: reads `self` only (and sets the
    /// once-per-kernel GPU failure flag).
    ///
    /// # Safety
    /// `context` must be the live kernel context ONNX Runtime passed to this compute call.
    pub unsafe fn compute(&self, context: *mut OrtKernelContext) -> Result<(), ComputeError> {
        // SAFETY: forwarded from the caller.
        let ran = unsafe { self.compute_on(context) }?;
        if self.log_device {
            let device = match ran {
                Ran::Cpu => "cpu".to_string(),
                Ran::Gpu(adapter) => format!("gpu ({adapter})"),
            };
            let message = format!("NonZero node '{}' ran on {device}", self.node_name);
            // SAFETY: the context is live (caller).
            unsafe { self.log(context, &message) };
        }
        Ok(())
    }

    /// # Safety
    /// As [`Kernel::compute`].
    unsafe fn compute_on(&self, context: *mut OrtKernelContext) -> Result<Ran, ComputeError> {
        let raw = self.api.raw();
        let mut input: *const OrtValue = std::ptr::null();
        // SAFETY: the context is live for this call; index 0 exists (the schema has one input).
        let input = self.host(
            "KernelContext_GetInput",
            unsafe { (raw.KernelContext_GetInput)(context, 0, &mut input) },
            input,
        )?;
        // SAFETY: `input` is the live input value.
        let (code, dims) = unsafe { self.type_and_shape(input) }?;
        let dtype = DataType::from_onnx_code(code).ok_or(ComputeError::UnsupportedType(code))?;
        let sizes = dims
            .iter()
            .map(|&d| {
                usize::try_from(d).map_err(|_| {
                    ComputeError::Input(format!("input shape {dims:?} has a negative size"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let layout = Layout::packed(&sizes).map_err(|e| ComputeError::Input(e.to_string()))?;
        let pool = OrtPool {
            api: self.api,
            context,
        };
        if self.inject_panic {
            pool.run(2, &|task| {
                assert!(task == 0, "panic injected by {INJECT_PANIC_ENV}")
            });
        }
        // Small inputs stay on this thread: waking the pool costs more than the work.
        let exec: &dyn Executor = if layout.numel() < PARALLEL_THRESHOLD {
            &Sequential
        } else {
            &pool
        };

        if dtype == DataType::String {
            let failed = AtomicBool::new(false);
            let value = SharedInput(input);
            let strings = FnSource::new(layout.numel(), |i| {
                let mut len = 0usize;
                // SAFETY: `value` is a live string tensor with `numel` elements, i < numel.
                let status =
                    unsafe { (raw.GetStringTensorElementLength)(value.get(), i, &mut len) };
                if self.api.check(status).is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                len != 0
            });
            self.run(context, &strings, &layout, exec)?;
            if failed.load(Ordering::Relaxed) {
                return Err(ComputeError::Input(
                    "ONNX Runtime could not report a string element's length".into(),
                ));
            }
            // Strings have no fixed size: never on the GPU.
            return Ok(Ran::Cpu);
        }

        let size = dtype.size_of().expect("fixed-size type");
        let bytes = if layout.numel() == 0 {
            &[][..]
        } else {
            let mut data: *mut c_void = std::ptr::null_mut();
            // SAFETY: `input` is a live tensor; API 17 has no const accessor, we never write through it.
            let data = self.host(
                "GetTensorMutableData",
                unsafe { (raw.GetTensorMutableData)(input as *mut OrtValue, &mut data) },
                data,
            )?;
            // SAFETY: a CPU tensor of `numel` elements of `size` bytes, alive and unchanged for the
            // duration of this compute call (ONNX Runtime does not write a kernel's inputs during it).
            unsafe { std::slice::from_raw_parts(data as *const u8, layout.numel() * size) }
        };
        if let Some(gpu) = self.gpu {
            match gpu.nonzero(dtype, bytes, &sizes) {
                Ok(coords)
                    if coords.rank == sizes.len()
                        && coords.data.len() == coords.rank * coords.nnz =>
                {
                    // SAFETY: the context is live (caller); the slice is used only here.
                    let out = unsafe { self.output(context, coords.rank, coords.nnz) }?;
                    out.copy_from_slice(&coords.data);
                    return Ok(Ran::Gpu(gpu.adapter()));
                }
                outcome => {
                    if !self.gpu_failure_logged.swap(true, Ordering::Relaxed) {
                        let why = match outcome {
                            Err(e) => e,
                            Ok(c) => format!(
                                "a [{}, {}] result for a rank-{} input",
                                c.rank,
                                c.nnz,
                                sizes.len()
                            ),
                        };
                        let message = format!(
                            "NonZero node '{}': the GPU kernel failed ({why}); running on the CPU \
                             (logged once per node)",
                            self.node_name
                        );
                        // SAFETY: the context is live (caller).
                        unsafe { self.log(context, &message) };
                    }
                }
            }
        }
        let slice = NumericSlice::from_bytes(dtype, bytes)
            .map_err(|e| ComputeError::Input(e.to_string()))?;
        self.run(context, &slice, &layout, exec)?;
        Ok(Ran::Cpu)
    }

    /// The `[rank, nnz]` int64 output, allocated by ONNX Runtime for this compute call.
    ///
    /// # Safety
    /// `context` must be the live kernel context of the current compute call, and the slice must
    /// not be used after that call returns (ONNX Runtime owns the output's memory).
    unsafe fn output<'out>(
        &self,
        context: *mut OrtKernelContext,
        rank: usize,
        nnz: usize,
    ) -> Result<&'out mut [i64], ComputeError> {
        let raw = self.api.raw();
        let dims = [rank as i64, nnz as i64];
        let mut output: *mut OrtValue = std::ptr::null_mut();
        // SAFETY: the context is live; ONNX Runtime allocates the [rank, nnz] int64 output.
        let output = self.host(
            "KernelContext_GetOutput",
            unsafe { (raw.KernelContext_GetOutput)(context, 0, dims.as_ptr(), 2, &mut output) },
            output,
        )?;
        let len = rank * nnz;
        if len == 0 {
            return Ok(&mut []);
        }
        let mut data: *mut c_void = std::ptr::null_mut();
        // SAFETY: `output` is the live output value just allocated.
        let data = self.host(
            "GetTensorMutableData",
            unsafe { (raw.GetTensorMutableData)(output, &mut data) },
            data,
        )?;
        if data.is_null() {
            return Err(ComputeError::Input(format!(
                "ONNX Runtime could not allocate the [{rank}, {nnz}] output"
            )));
        }
        // SAFETY: the output holds rank * nnz int64 elements, owned by this call until it returns.
        Ok(unsafe { std::slice::from_raw_parts_mut(data as *mut i64, len) })
    }

    fn run<S: ZeroTest + ?Sized>(
        &self,
        context: *mut OrtKernelContext,
        src: &S,
        layout: &Layout,
        exec: &dyn Executor,
    ) -> Result<(), ComputeError> {
        let counted =
            Counted::count(src, layout, exec).map_err(|e| ComputeError::Input(e.to_string()))?;
        // SAFETY: `run` is called from compute with its live context; the slice is used only
        // before this function returns.
        let out = unsafe { self.output(context, counted.rank(), counted.nnz()) }?;
        counted
            .write_onnx(src, out, exec)
            .map_err(|e| ComputeError::Input(e.to_string()))
    }

    /// # Safety
    /// `value` must be a live OrtValue.
    unsafe fn type_and_shape(
        &self,
        value: *const OrtValue,
    ) -> Result<(i32, Vec<i64>), ComputeError> {
        let raw = self.api.raw();
        let mut info = std::ptr::null_mut();
        // SAFETY: `value` is live (caller); we release `info` below.
        let info = self.host(
            "GetTensorTypeAndShape",
            unsafe { (raw.GetTensorTypeAndShape)(value, &mut info) },
            info,
        )?;
        let result = (|| {
            // Read the type as a plain integer: a newer host may report a type our enum lacks.
            let mut code: i32 = 0;
            // SAFETY: `info` is live; the out-pointer is a 4-byte integer, as the C enum is.
            let status =
                unsafe { (raw.GetTensorElementType)(info, &mut code as *mut i32 as *mut _) };
            self.host("GetTensorElementType", status, ())?;
            let mut rank = 0usize;
            // SAFETY: `info` is live.
            let status = unsafe { (raw.GetDimensionsCount)(info, &mut rank) };
            self.host("GetDimensionsCount", status, ())?;
            let mut dims = vec![0i64; rank];
            // SAFETY: `info` is live and `dims` holds `rank` elements.
            let status = unsafe { (raw.GetDimensions)(info, dims.as_mut_ptr(), rank) };
            self.host("GetDimensions", status, ())?;
            Ok((code, dims))
        })();
        // SAFETY: `info` was returned to us above and is released once.
        unsafe { (raw.ReleaseTensorTypeAndShapeInfo)(info) };
        result
    }
}

/// The node's name, for error messages.
///
/// # Safety
/// `info` must be a live kernel info.
unsafe fn node_name(api: Api, info: *const OrtKernelInfo) -> Option<String> {
    let raw = api.raw();
    let mut size = 0usize;
    // SAFETY: a null buffer asks for the size.
    api.check(unsafe { (raw.KernelInfo_GetNodeName)(info, std::ptr::null_mut(), &mut size) })
        .ok()?;
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: `buf` holds `size` bytes.
    api.check(unsafe {
        (raw.KernelInfo_GetNodeName)(info, buf.as_mut_ptr() as *mut c_char, &mut size)
    })
    .ok()?;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}
