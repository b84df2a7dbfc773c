//! An [`Operator`] as ONNX Runtime sees it: a private `#[repr(C)]` `OrtCustomOp` table whose
//! entries are generic trampolines over the op's type. The trampolines are the only code ONNX
//! Runtime calls for an op: each runs its body through [`guard`], and compute is where fault
//! injection fires (`fault-injection` builds only).

use super::api::{Api, ComputeApi, REQUIRED_API_VERSION};
use super::kernel_context::KernelContext;
use super::kernel_info::KernelInfo;
use super::registration::VersionRange;
use super::shape_infer::ShapeInferContext;
use super::status::guard;
use super::{ElementType, Io, Kernel, NodeSetup, Operator};
use ort_sys::{
    ONNXTensorElementDataType, OrtApi, OrtCustomOp, OrtCustomOpInputOutputCharacteristic,
    OrtKernelContext, OrtKernelInfo, OrtMemType, OrtShapeInferContext, OrtStatusPtr,
};
use std::cell::OnceCell;
use std::ffi::{c_char, c_int, c_void};

/// One op's table: the C table first, so the `*const OrtCustomOp` ONNX Runtime hands back to a
/// trampoline can be read as the whole `OpTable<O>`.
#[repr(C)]
pub(super) struct OpTable<O: Operator> {
    base: OrtCustomOp,
    versions: VersionRange,
    op: O,
}

impl<O: Operator> OpTable<O> {
    /// `op`'s table for the opsets `versions`, kept for the life of the process (ONNX Runtime
    /// holds pointers to it); returns the pointer ONNX Runtime is given.
    pub(super) fn leak(op: O, versions: VersionRange) -> *const OrtCustomOp {
        let table: &'static OpTable<O> = Box::leak(Box::new(OpTable {
            base: table::<O>(),
            versions,
            op,
        }));
        &table.base
    }

    /// # Safety
    /// `op` must be the `base` of an `OpTable<O>` built by [`OpSet::add`] (they are never freed).
    unsafe fn from_ptr<'a>(op: *const OrtCustomOp) -> &'a OpTable<O> {
        // SAFETY: OpTable is repr(C) with `base` first; ONNX Runtime passes back the pointer we
        // registered with these very trampolines, which were instantiated for this `O`.
        unsafe { &*(op as *const OpTable<O>) }
    }
}

pub(super) fn op_name<O: Operator>() -> &'static str {
    O::NAME.to_str().unwrap_or("custom op")
}

fn table<O: Operator>() -> OrtCustomOp {
    OrtCustomOp {
        // We fill the table up to GetEndVersion (API 17) and tell ONNX Runtime so.
        version: REQUIRED_API_VERSION,
        CreateKernel: None,
        GetName: Some(name::<O>),
        GetExecutionProviderType: Some(provider),
        GetInputType: Some(input_type::<O>),
        GetInputTypeCount: Some(input_count::<O>),
        GetOutputType: Some(output_type::<O>),
        GetOutputTypeCount: Some(output_count::<O>),
        // Null: ONNX Runtime then uses CreateKernelV2/KernelComputeV2, which return a status.
        KernelCompute: None,
        KernelDestroy: Some(destroy_kernel::<O>),
        GetInputCharacteristic: Some(input_characteristic::<O>),
        GetOutputCharacteristic: Some(output_characteristic::<O>),
        GetInputMemoryType: Some(cpu_memory),
        GetVariadicInputMinArity: Some(one),
        GetVariadicInputHomogeneity: Some(one),
        GetVariadicOutputMinArity: Some(one),
        GetVariadicOutputHomogeneity: Some(one),
        CreateKernelV2: Some(create_kernel::<O>),
        KernelComputeV2: Some(compute::<O>),
        InferOutputShapeFn: Some(infer_shape::<O>),
        GetStartVersion: Some(start_version::<O>),
        GetEndVersion: Some(end_version::<O>),
    }
}

unsafe extern "system" fn name<O: Operator>(_: *const OrtCustomOp) -> *const c_char {
    O::NAME.as_ptr()
}

unsafe extern "system" fn provider(_: *const OrtCustomOp) -> *const c_char {
    c"CPUExecutionProvider".as_ptr()
}

fn element(ios: &[Io], index: usize) -> ONNXTensorElementDataType {
    ios.get(index)
        .map_or(ElementType::Any, |io| io.element)
        .onnx()
}

fn characteristic(ios: &[Io], index: usize) -> OrtCustomOpInputOutputCharacteristic {
    match ios.get(index) {
        Some(io) if io.optional => OrtCustomOpInputOutputCharacteristic::INPUT_OUTPUT_OPTIONAL,
        _ => OrtCustomOpInputOutputCharacteristic::INPUT_OUTPUT_REQUIRED,
    }
}

unsafe extern "system" fn input_type<O: Operator>(
    _: *const OrtCustomOp,
    index: usize,
) -> ONNXTensorElementDataType {
    element(O::INPUTS, index)
}

unsafe extern "system" fn output_type<O: Operator>(
    _: *const OrtCustomOp,
    index: usize,
) -> ONNXTensorElementDataType {
    element(O::OUTPUTS, index)
}

unsafe extern "system" fn input_count<O: Operator>(_: *const OrtCustomOp) -> usize {
    O::INPUTS.len()
}

unsafe extern "system" fn output_count<O: Operator>(_: *const OrtCustomOp) -> usize {
    O::OUTPUTS.len()
}

unsafe extern "system" fn input_characteristic<O: Operator>(
    _: *const OrtCustomOp,
    index: usize,
) -> OrtCustomOpInputOutputCharacteristic {
    characteristic(O::INPUTS, index)
}

unsafe extern "system" fn output_characteristic<O: Operator>(
    _: *const OrtCustomOp,
    index: usize,
) -> OrtCustomOpInputOutputCharacteristic {
    characteristic(O::OUTPUTS, index)
}

unsafe extern "system" fn cpu_memory(_: *const OrtCustomOp, _: usize) -> OrtMemType {
    OrtMemType::OrtMemTypeDefault
}

unsafe extern "system" fn one(_: *const OrtCustomOp) -> c_int {
    1
}

unsafe extern "system" fn start_version<O: Operator>(op: *const OrtCustomOp) -> c_int {
    // SAFETY: ONNX Runtime passes back the table these trampolines were registered with.
    unsafe { OpTable::<O>::from_ptr(op) }.versions.start()
}

unsafe extern "system" fn end_version<O: Operator>(op: *const OrtCustomOp) -> c_int {
    // SAFETY: as above.
    unsafe { OpTable::<O>::from_ptr(op) }.versions.end()
}

/// What ONNX Runtime holds for one node: the kernel and the node's name for error messages.
struct NodeKernel<K> {
    node_name: String,
    /// The host functions a compute calls, read once here.
    calls: ComputeApi,
    /// This node panics in compute (`fault-injection` builds: [`super::fault`]).
    #[cfg(feature = "fault-injection")]
    inject_panic: bool,
    kernel: K,
}

unsafe extern "system" fn create_kernel<O: Operator>(
    op: *const OrtCustomOp,
    _: *const OrtApi,
    info: *const OrtKernelInfo,
    kernel: *mut *mut c_void,
) -> OrtStatusPtr {
    let name = op_name::<O>();
    let node_name = OnceCell::new();
    let where_ = || {
        let node = node_name.get().map_or("", String::as_str);
        format!("nonzero_ort: creating a {name} kernel: {name} node '{node}'")
    };
    guard(where_, || {
        let api = Api::get().ok_or("nonzero_ort was not registered through RegisterCustomOps")?;
        // SAFETY: ONNX Runtime passes back the table these trampolines were registered with.
        let table = unsafe { OpTable::<O>::from_ptr(op) };
        // SAFETY: `info` is the live kernel info of this call.
        let info = unsafe { KernelInfo::new(api, info) };
        let node = node_name.get_or_init(|| info.node_name());
        let setup = NodeSetup {
            node_name: node,
            host_version: super::api::host_version(),
        };
        let created = Box::new(NodeKernel {
            node_name: node.clone(),
            calls: ComputeApi::new(api),
            #[cfg(feature = "fault-injection")]
            inject_panic: super::fault::armed(node),
            kernel: table.op.create_kernel(&info, &setup)?,
        });
        // SAFETY: `kernel` is ONNX Runtime's out-pointer for this call.
        unsafe { *kernel = Box::into_raw(created) as *mut c_void };
        Ok(())
    })
}

unsafe extern "system" fn compute<O: Operator>(
    kernel: *mut c_void,
    context: *mut OrtKernelContext,
) -> OrtStatusPtr {
    // SAFETY: `kernel` came from `create_kernel::<O>` and lives until `destroy_kernel`; ONNX
    // Runtime may call compute from several threads at once, and kernels are Sync.
    let node = unsafe { &*(kernel as *const NodeKernel<O::Kernel>) };
    let where_ = || format!("{} node '{}'", op_name::<O>(), node.node_name);
    guard(where_, || {
        // SAFETY: `context` is the live context of this compute call, of a node of this op.
        let context =
            unsafe { KernelContext::new(&node.calls, context, &node.node_name, O::OUTPUTS) };
        #[cfg(feature = "fault-injection")]
        if node.inject_panic {
            super::fault::fire(&context.pool());
        }
        node.kernel.compute(&context)
    })
}

unsafe extern "system" fn destroy_kernel<O: Operator>(kernel: *mut c_void) {
    if !kernel.is_null() {
        // SAFETY: `kernel` came from Box::into_raw in `create_kernel::<O>`, destroyed once.
        drop(unsafe { Box::from_raw(kernel as *mut NodeKernel<O::Kernel>) });
    }
}

unsafe extern "system" fn infer_shape<O: Operator>(
    op: *const OrtCustomOp,
    context: *mut OrtShapeInferContext,
) -> OrtStatusPtr {
    let where_ = || format!("nonzero_ort: inferring {}'s output shape", op_name::<O>());
    guard(where_, || {
        let api = Api::get().ok_or("nonzero_ort was not registered through RegisterCustomOps")?;
        // SAFETY: ONNX Runtime passes back the table these trampolines were registered with.
        let table = unsafe { OpTable::<O>::from_ptr(op) };
        // SAFETY: `context` is the live context of this inference call.
        let mut context = unsafe { ShapeInferContext::new(api, context) };
        table.op.infer_shape(&mut context)
    })
}
