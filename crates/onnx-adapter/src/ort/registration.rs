//! Registration: each [`Operator`] becomes a private `#[repr(C)]` `OrtCustomOp` table whose
//! entries are generic trampolines over the op's type, and the tables are grouped into domains
//! that are added to the session options `RegisterCustomOps` receives.

use super::api::{Api, Api24, ComputeApi, REQUIRED_API_VERSION};
use super::kernel_context::KernelContext;
use super::kernel_info::KernelInfo;
use super::shape_infer::ShapeInferContext;
use super::status::{guard, Error};
use super::strings::read_string;
use super::{ElementType, Io, Kernel, NodeSetup, Operator};
use ort_sys::{
    ONNXTensorElementDataType, OrtApi, OrtApiBase, OrtCustomOp, OrtCustomOpDomain,
    OrtCustomOpInputOutputCharacteristic, OrtKernelContext, OrtKernelInfo, OrtMemType,
    OrtSessionOptions, OrtShapeInferContext, OrtStatus, OrtStatusPtr,
};
use std::cell::OnceCell;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

/// The opset versions an op registration covers, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VersionRange {
    start: c_int,
    end: c_int,
}

impl VersionRange {
    /// Opsets `start` to `end`.
    pub fn between(start: c_int, end: c_int) -> VersionRange {
        VersionRange { start, end }
    }

    #[cfg(test)]
    fn contains(&self, opset: c_int) -> bool {
        (self.start..=self.end).contains(&opset)
    }

    fn check(&self) -> Result<(), String> {
        if self.start < 1 || self.end < self.start {
            return Err(format!(
                "opset range {}..={} is empty or starts below 1",
                self.start, self.end
            ));
        }
        Ok(())
    }
}

/// What registration decided for the session whose options it received; every kernel of that
/// session sees it through [`NodeSetup`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Registration {
    /// The host's ONNX Runtime version ("1.17.3").
    pub host_version: &'static str,
    /// The session asked for the GPU through its config, but this host cannot show kernels the
    /// config (ONNX Runtime < 1.24): kernels say so and run on the CPU.
    pub gpu_requested_unreadable: bool,
}

/// The ops of one registration, by domain, as [`OpSet::add`] collects them.
#[derive(Debug)]
pub(crate) struct OpSet {
    registration: Registration,
    domains: Vec<(&'static CStr, Vec<*const OrtCustomOp>)>,
    errors: Vec<String>,
}

impl OpSet {
    /// Registers `op` in `domain` ("" = ONNX) for the opsets `versions`. Its table is built here
    /// and kept for the life of the process (ONNX Runtime holds pointers to it).
    pub fn add<O: Operator>(&mut self, domain: &'static CStr, op: O, versions: VersionRange) {
        if let Err(e) = versions.check() {
            self.errors.push(format!("{}: {e}", op_name::<O>()));
            return;
        }
        let table: &'static OpTable<O> = Box::leak(Box::new(OpTable {
            base: table::<O>(),
            versions,
            registration: self.registration.clone(),
            op,
        }));
        let ptr = &table.base as *const OrtCustomOp;
        match self.domains.iter_mut().find(|(name, _)| *name == domain) {
            Some((_, ops)) => ops.push(ptr),
            None => self.domains.push((domain, vec![ptr])),
        }
    }
}

/// One op's table: the C table first, so the `*const OrtCustomOp` ONNX Runtime hands back to a
/// trampoline can be read as the whole `OpTable<O>`.
#[repr(C)]
struct OpTable<O: Operator> {
    base: OrtCustomOp,
    versions: VersionRange,
    registration: Registration,
    op: O,
}

impl<O: Operator> OpTable<O> {
    /// # Safety
    /// `op` must be the `base` of an `OpTable<O>` built by [`OpSet::add`] (they are never freed).
    unsafe fn from_ptr<'a>(op: *const OrtCustomOp) -> &'a OpTable<O> {
        // SAFETY: OpTable is repr(C) with `base` first; ONNX Runtime passes back the pointer we
        // registered with these very trampolines, which were instantiated for this `O`.
        unsafe { &*(op as *const OpTable<O>) }
    }
}

fn op_name<O: Operator>() -> &'static str {
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
    unsafe { OpTable::<O>::from_ptr(op) }.versions.start
}

unsafe extern "system" fn end_version<O: Operator>(op: *const OrtCustomOp) -> c_int {
    // SAFETY: as above.
    unsafe { OpTable::<O>::from_ptr(op) }.versions.end
}

/// What ONNX Runtime holds for one node: the kernel and the node's name for error messages.
struct NodeKernel<K> {
    node_name: String,
    /// The host functions a compute calls, read once here.
    calls: ComputeApi,
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
            registration: &table.registration,
        };
        let created = Box::new(NodeKernel {
            node_name: node.clone(),
            calls: ComputeApi::new(api),
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

/// A domain made once and shared by every session that loads the library: it only holds
/// pointers to leaked op tables, so it is never released.
struct Domain(*mut OrtCustomOpDomain);
// SAFETY: the domain is filled once under OnceLock and only read (by ONNX Runtime) afterwards.
unsafe impl Send for Domain {}
// SAFETY: as above.
unsafe impl Sync for Domain {}

/// Index: `Registration::gpu_requested_unreadable` (the only fact that differs per session; the
/// host version is the same for the whole process).
static DOMAINS: [OnceLock<Result<Vec<Domain>, String>>; 2] = [OnceLock::new(), OnceLock::new()];

fn domains(
    api: Api,
    registration: Registration,
    build: fn(&mut OpSet),
) -> Result<&'static [Domain], String> {
    let cache = &DOMAINS[usize::from(registration.gpu_requested_unreadable)];
    let domains = cache.get_or_init(|| {
        let mut set = OpSet {
            registration,
            domains: Vec::new(),
            errors: Vec::new(),
        };
        build(&mut set);
        if !set.errors.is_empty() {
            return Err(set.errors.join("; "));
        }
        let raw = api.raw();
        let mut made = Vec::new();
        for (name, ops) in &set.domains {
            let mut domain = std::ptr::null_mut();
            // SAFETY: `name` is NUL-terminated; the out-pointer receives a domain kept forever.
            api.check(unsafe { (raw.CreateCustomOpDomain)(name.as_ptr(), &mut domain) })?;
            for &op in ops {
                // SAFETY: the op tables are leaked, alive for the life of the process.
                api.check(unsafe { (raw.CustomOpDomain_Add)(domain, op) })?;
            }
            made.push(Domain(domain));
        }
        Ok(made)
    });
    domains.as_deref().map_err(Clone::clone)
}

/// The body of `RegisterCustomOps`: asks the host for its API, decides the session's
/// [`Registration`], builds the op set with `build` (once per distinct registration) and adds its
/// domains to `options`.
///
/// # Safety
/// `options` and `api_base` must be the live arguments ONNX Runtime passed to `RegisterCustomOps`.
pub(crate) unsafe fn register_custom_ops(
    options: *mut OrtSessionOptions,
    api_base: *const OrtApiBase,
    build: fn(&mut OpSet),
) -> *mut OrtStatus {
    if options.is_null() || api_base.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: ONNX Runtime passes its own OrtApiBase.
    let api = match unsafe { Api::init(api_base) } {
        Ok(api) => api,
        Err(status) => return status,
    };
    let where_ = || "nonzero_ort: registering custom ops".to_string();
    guard(where_, || {
        let config_readable = Api24::get().is_some();
        // Hosts from ONNX Runtime 1.24 show each kernel its session's config. Older ones do not:
        // peek at the options being registered (an entry added before register_custom_ops_library
        // is visible here), so that a session asking for the GPU gets kernels that say it cannot.
        let entry = if config_readable {
            None
        } else {
            // SAFETY: `options` is the live session options this call is for.
            unsafe { session_entry(api, options, crate::device::DEVICE_KEY) }?
        };
        let registration = Registration {
            host_version: super::api::host_version(),
            gpu_requested_unreadable: crate::device::gpu_requested_unreadable(
                config_readable,
                entry.as_deref(),
            )?,
        };
        for domain in domains(api, registration, build)? {
            // SAFETY: `options` is live; the domain outlives it.
            api.check(unsafe { (api.raw().AddCustomOpDomain)(options, domain.0) })?;
        }
        Ok::<(), Error>(())
    })
    .0
}

/// The session config entry `key` of `options` as it stands now.
///
/// # Safety
/// `options` must be live session options.
unsafe fn session_entry(
    api: Api,
    options: *const OrtSessionOptions,
    key: &CStr,
) -> Result<Option<String>, String> {
    let raw = api.raw();
    let mut has = 0;
    // SAFETY: live options (caller), NUL-terminated key, int out-pointer.
    api.check(unsafe { (raw.HasSessionConfigEntry)(options, key.as_ptr(), &mut has) })?;
    if has == 0 {
        return Ok(None);
    }
    // SAFETY: GetSessionConfigEntry writes at most `*size` bytes to a non-null buffer.
    let value = unsafe {
        read_string(api, |buf, size| {
            (raw.GetSessionConfigEntry)(options, key.as_ptr(), buf, size)
        })
    }?;
    Ok(Some(value.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::VersionRange;

    #[test]
    fn version_ranges_include_both_ends_and_refuse_empty_ones() {
        let nine = VersionRange::between(9, 12);
        assert!(nine.contains(9) && nine.contains(12));
        assert!(!nine.contains(8) && !nine.contains(13));
        let open = VersionRange::between(13, std::ffi::c_int::MAX);
        assert!(open.contains(13) && open.contains(21) && open.contains(std::ffi::c_int::MAX));
        assert_eq!((open.start, open.end), (13, std::ffi::c_int::MAX));
        assert!(nine.check().is_ok() && open.check().is_ok());
        let empty = VersionRange::between(13, 12).check().unwrap_err();
        assert_eq!(empty, "opset range 13..=12 is empty or starts below 1");
        assert!(VersionRange::between(0, 3).check().is_err());
    }
}
