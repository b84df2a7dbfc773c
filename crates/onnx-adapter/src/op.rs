//! The `OrtCustomOp` tables: NonZero in the ONNX domain for opsets 9-12 and 13+, any input type,
//! an int64 output whose shape is inferred as `[rank, nnz]`.

use crate::api::{Api, REQUIRED_API_VERSION};
use crate::guard::{guarded, panic_message};
use crate::kernel::Kernel;
use crate::opset;
use ort_sys::{
    ONNXTensorElementDataType, OrtApi, OrtCustomOp, OrtCustomOpInputOutputCharacteristic,
    OrtErrorCode, OrtKernelContext, OrtKernelInfo, OrtMemType, OrtShapeInferContext, OrtStatusPtr,
};
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::atomic::{AtomicU64, Ordering};

/// One registration of NonZero: the C table first, so a `*const OrtCustomOp` handed back by ONNX
/// Runtime can be read as a `*const NonZeroOp`.
#[repr(C)]
pub struct NonZeroOp {
    base: OrtCustomOp,
    start_version: c_int,
    end_version: c_int,
    /// Registered for a session that asked for the GPU on a host whose kernels cannot read their
    /// session's config (ONNX Runtime < 1.24): its kernels log that and run on the CPU.
    config_unreadable_gpu: bool,
}

const fn table() -> OrtCustomOp {
    OrtCustomOp {
        // We fill the table up to GetEndVersion (API 17) and tell ONNX Runtime so.
        version: REQUIRED_API_VERSION,
        CreateKernel: None,
        GetName: Some(name),
        GetExecutionProviderType: Some(provider),
        GetInputType: Some(input_type),
        GetInputTypeCount: Some(one),
        GetOutputType: Some(output_type),
        GetOutputTypeCount: Some(one),
        // Null: ONNX Runtime then uses CreateKernelV2/KernelComputeV2, which return a status.
        KernelCompute: None,
        KernelDestroy: Some(destroy_kernel),
        GetInputCharacteristic: Some(required),
        GetOutputCharacteristic: Some(required),
        GetInputMemoryType: Some(cpu_memory),
        GetVariadicInputMinArity: Some(one_int),
        GetVariadicInputHomogeneity: Some(one_int),
        GetVariadicOutputMinArity: Some(one_int),
        GetVariadicOutputHomogeneity: Some(one_int),
        CreateKernelV2: Some(create_kernel),
        KernelComputeV2: Some(compute),
        InferOutputShapeFn: Some(infer_output_shape),
        GetStartVersion: Some(start_version),
        GetEndVersion: Some(end_version),
    }
}

/// NonZero-9 (opsets 9 to 12).
pub static NONZERO_9: NonZeroOp = NonZeroOp {
    base: table(),
    start_version: opset::NONZERO_9.0,
    end_version: opset::NONZERO_9.1,
    config_unreadable_gpu: false,
};
/// NonZero-13 (opset 13 and later).
pub static NONZERO_13: NonZeroOp = NonZeroOp {
    base: table(),
    start_version: opset::NONZERO_13.0,
    end_version: opset::NONZERO_13.1,
    config_unreadable_gpu: false,
};
/// NonZero-9 for sessions that asked for the GPU on a host older than ONNX Runtime 1.24.
pub static NONZERO_9_CONFIG_UNREADABLE_GPU: NonZeroOp = NonZeroOp {
    base: table(),
    start_version: opset::NONZERO_9.0,
    end_version: opset::NONZERO_9.1,
    config_unreadable_gpu: true,
};
/// NonZero-13 for sessions that asked for the GPU on a host older than ONNX Runtime 1.24.
pub static NONZERO_13_CONFIG_UNREADABLE_GPU: NonZeroOp = NonZeroOp {
    base: table(),
    start_version: opset::NONZERO_13.0,
    end_version: opset::NONZERO_13.1,
    config_unreadable_gpu: true,
};

impl NonZeroOp {
    pub fn as_ptr(&'static self) -> *const OrtCustomOp {
        &self.base
    }

    /// # Safety
    /// `op` must be one of this module's statics, as handed back by ONNX Runtime.
    unsafe fn from_ptr<'a>(op: *const OrtCustomOp) -> &'a NonZeroOp {
        // SAFETY: NonZeroOp is repr(C) with `base` first; ONNX Runtime passes back the pointers
        // we registered, which all point into NonZeroOp statics.
        unsafe { &*(op as *const NonZeroOp) }
    }
}

unsafe extern "system" fn name(_: *const OrtCustomOp) -> *const c_char {
    c"NonZero".as_ptr()
}

unsafe extern "system" fn provider(_: *const OrtCustomOp) -> *const c_char {
    c"CPUExecutionProvider".as_ptr()
}

/// Undefined = "any tensor type": the schema then accepts every T, so models with types this
/// library does not know about keep loading (registering NonZero replaces ONNX Runtime's schema).
unsafe extern "system" fn input_type(_: *const OrtCustomOp, _: usize) -> ONNXTensorElementDataType {
    ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED
}

unsafe extern "system" fn output_type(
    _: *const OrtCustomOp,
    _: usize,
) -> ONNXTensorElementDataType {
    ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64
}

unsafe extern "system" fn one(_: *const OrtCustomOp) -> usize {
    1
}

unsafe extern "system" fn one_int(_: *const OrtCustomOp) -> c_int {
    1
}

unsafe extern "system" fn required(
    _: *const OrtCustomOp,
    _: usize,
) -> OrtCustomOpInputOutputCharacteristic {
    OrtCustomOpInputOutputCharacteristic::INPUT_OUTPUT_REQUIRED
}

unsafe extern "system" fn cpu_memory(_: *const OrtCustomOp, _: usize) -> OrtMemType {
    OrtMemType::OrtMemTypeDefault
}

unsafe extern "system" fn start_version(op: *const OrtCustomOp) -> c_int {
    // SAFETY: ONNX Runtime passes back one of our registered tables.
    unsafe { NonZeroOp::from_ptr(op) }.start_version
}

unsafe extern "system" fn end_version(op: *const OrtCustomOp) -> c_int {
    // SAFETY: as above.
    unsafe { NonZeroOp::from_ptr(op) }.end_version
}

unsafe extern "system" fn create_kernel(
    op: *const OrtCustomOp,
    _: *const OrtApi,
    info: *const OrtKernelInfo,
    kernel: *mut *mut c_void,
) -> OrtStatusPtr {
    guarded("creating a NonZero kernel", || {
        let api = Api::get().ok_or("nonzero_ort was not registered through RegisterCustomOps")?;
        // SAFETY: ONNX Runtime passes back one of our registered tables.
        let config_unreadable_gpu = unsafe { NonZeroOp::from_ptr(op) }.config_unreadable_gpu;
        // SAFETY: `info` is the live kernel info ONNX Runtime passes for this call.
        let created = Box::new(unsafe { Kernel::new(api, info, config_unreadable_gpu) }?);
        // SAFETY: `kernel` is ONNX Runtime's out-pointer for this call.
        unsafe { *kernel = Box::into_raw(created) as *mut c_void };
        Ok(())
    })
}

unsafe extern "system" fn compute(
    kernel: *mut c_void,
    context: *mut OrtKernelContext,
) -> OrtStatusPtr {
    // SAFETY: `kernel` came from `create_kernel` and lives until `destroy_kernel`; ONNX Runtime may
    // call compute from several threads at once, and Kernel::compute only reads `self`.
    let kernel = unsafe { &*(kernel as *const Kernel) };
    let Some(api) = Api::get() else {
        return OrtStatusPtr(std::ptr::null_mut());
    };
    // SAFETY: `context` is the live context of this compute call.
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe {
        kernel.compute(context)
    })) {
        Ok(Ok(())) => OrtStatusPtr(std::ptr::null_mut()),
        Ok(Err(e)) => OrtStatusPtr(api.status(
            e.code(),
            &format!("NonZero node '{}': {e}", kernel.node_name()),
        )),
        Err(panic) => OrtStatusPtr(api.status(
            OrtErrorCode::ORT_RUNTIME_EXCEPTION,
            &format!(
                "NonZero node '{}': internal error (panic: {})",
                kernel.node_name(),
                panic_message(&panic)
            ),
        )),
    }
}

unsafe extern "system" fn destroy_kernel(kernel: *mut c_void) {
    if !kernel.is_null() {
        // SAFETY: `kernel` came from Box::into_raw in `create_kernel` and is destroyed once.
        drop(unsafe { Box::from_raw(kernel as *mut Kernel) });
    }
}

/// Distinct symbolic names: two NonZero outputs must not be assumed to have the same length.
static NEXT_DIM: AtomicU64 = AtomicU64::new(0);

/// Output shape `[rank, nnz]`. A rank-0 input shape is skipped: ONNX Runtime reports an input of
/// unknown shape as rank 0 too, and claiming `[0, nnz]` for it could be wrong.
unsafe extern "system" fn infer_output_shape(
    _: *const OrtCustomOp,
    context: *mut OrtShapeInferContext,
) -> OrtStatusPtr {
    guarded("inferring NonZero's output shape", || {
        let api = Api::get().ok_or("nonzero_ort was not registered through RegisterCustomOps")?;
        let raw = api.raw();
        let mut input = std::ptr::null_mut();
        // SAFETY: the context is live for this call; the returned info is borrowed from it.
        api.check(unsafe { (raw.ShapeInferContext_GetInputTypeShape)(context, 0, &mut input) })?;
        let mut rank = 0usize;
        // SAFETY: `input` is a valid info borrowed from the context.
        api.check(unsafe { (raw.GetDimensionsCount)(input, &mut rank) })?;
        if rank == 0 {
            return Ok(());
        }
        let mut info = std::ptr::null_mut();
        // SAFETY: creates an info we own and release below.
        api.check(unsafe { (raw.CreateTensorTypeAndShapeInfo)(&mut info) })?;
        let name = CString::new(format!(
            "nonzero_nnz_{}",
            NEXT_DIM.fetch_add(1, Ordering::Relaxed)
        ))
        .expect("no NUL");
        let dims = [rank as i64, -1];
        let mut symbols = [c"".as_ptr(), name.as_ptr()];
        let result = (|| {
            let int64 = ONNXTensorElementDataType::ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
            // The arrays outlive the calls below, which copy them; the context is live.
            // SAFETY: `info` is ours and live.
            api.check(unsafe { (raw.SetTensorElementType)(info, int64) })?;
            // SAFETY: as above.
            api.check(unsafe { (raw.SetDimensions)(info, dims.as_ptr(), 2) })?;
            // SAFETY: as above.
            api.check(unsafe { (raw.SetSymbolicDimensions)(info, symbols.as_mut_ptr(), 2) })?;
            // SAFETY: as above.
            api.check(unsafe { (raw.ShapeInferContext_SetOutputTypeShape)(context, 0, info) })
        })();
        // SAFETY: `info` was created above and is released once.
        unsafe { (raw.ReleaseTensorTypeAndShapeInfo)(info) };
        result
    })
}
