//! Tensors: the input values a kernel reads, the type-and-shape info it owns while reading them,
//! and the element types an output can be written as.

use super::api::{Api, ComputeApi};
use super::status::Error;
use nonzero_core::DataType;
use ort_sys::{OrtTensorTypeAndShapeInfo, OrtValue};
use std::ffi::c_void;
use std::marker::PhantomData;

/// `SetTensorElementType` with its enum parameter taken as the C int it is.
type SetElementTypeAsInt =
    unsafe extern "system" fn(*mut OrtTensorTypeAndShapeInfo, i32) -> ort_sys::OrtStatusPtr;

/// Ranks up to this are read without a heap allocation.
const INLINE_RANK: usize = 8;

/// A tensor's dimensions as ONNX Runtime reports them.
#[derive(Debug, Clone)]
pub enum Dims {
    Inline {
        len: usize,
        dims: [i64; INLINE_RANK],
    },
    Heap(Vec<i64>),
}

impl Dims {
    fn copied(dims: &[i64]) -> Dims {
        if dims.len() <= INLINE_RANK {
            let mut inline = [0; INLINE_RANK];
            inline[..dims.len()].copy_from_slice(dims);
            Dims::Inline {
                len: dims.len(),
                dims: inline,
            }
        } else {
            Dims::Heap(dims.to_vec())
        }
    }
}

impl std::ops::Deref for Dims {
    type Target = [i64];
    fn deref(&self) -> &[i64] {
        match self {
            Dims::Inline { len, dims } => &dims[..*len],
            Dims::Heap(dims) => dims,
        }
    }
}

/// An owned `OrtTensorTypeAndShapeInfo`, released on drop.
pub(super) struct TypeAndShape {
    api: Api,
    info: *mut OrtTensorTypeAndShapeInfo,
    /// False for an info borrowed from a shape-inference context, which must not be released.
    owned: bool,
}

impl TypeAndShape {
    /// # Safety
    /// `value` must be a live tensor value.
    pub(super) unsafe fn of(api: Api, value: *const OrtValue) -> Result<TypeAndShape, Error> {
        let mut info = std::ptr::null_mut();
        // SAFETY: `value` is live (caller); the info returned is ours, released in Drop.
        let status = unsafe { (api.raw().GetTensorTypeAndShape)(value, &mut info) };
        api.check(status)
            .map_err(|e| Error::host("GetTensorTypeAndShape", e))?;
        Ok(TypeAndShape {
            api,
            info,
            owned: true,
        })
    }

    /// The element type as the plain ONNX code: a newer host may report a type our enum lacks.
    pub(super) fn element_code(&self) -> Result<i32, Error> {
        let mut code: i32 = 0;
        // SAFETY: `info` is live; the out-pointer is a 4-byte integer, as the C enum is.
        let status = unsafe {
            (self.api.raw().GetTensorElementType)(self.info, &mut code as *mut i32 as *mut _)
        };
        self.api
            .check(status)
            .map_err(|e| Error::host("GetTensorElementType", e))?;
        Ok(code)
    }

    pub(super) fn dims(&self) -> Result<Dims, Error> {
        let raw = self.api.raw();
        let mut rank = 0usize;
        // SAFETY: `info` is live.
        let status = unsafe { (raw.GetDimensionsCount)(self.info, &mut rank) };
        self.api
            .check(status)
            .map_err(|e| Error::host("GetDimensionsCount", e))?;
        let mut dims = if rank <= INLINE_RANK {
            Dims::Inline {
                len: rank,
                dims: [0; INLINE_RANK],
            }
        } else {
            Dims::Heap(vec![0; rank])
        };
        let buf = match &mut dims {
            Dims::Inline { dims, .. } => &mut dims[..rank],
            Dims::Heap(dims) => &mut dims[..],
        };
        // SAFETY: `info` is live and `buf` holds `rank` elements.
        let status = unsafe { (raw.GetDimensions)(self.info, buf.as_mut_ptr(), rank) };
        self.api
            .check(status)
            .map_err(|e| Error::host("GetDimensions", e))?;
        Ok(dims)
    }

    /// Each dimension's symbol ("" where there is none), for shape inference.
    pub(super) fn symbols(&self, rank: usize) -> Result<Vec<String>, Error> {
        let mut names = vec![std::ptr::null::<std::ffi::c_char>(); rank];
        // SAFETY: `info` is live and `names` holds `rank` pointers, which receive strings owned
        // by `info` (copied below, before it is released).
        let status =
            unsafe { (self.api.raw().GetSymbolicDimensions)(self.info, names.as_mut_ptr(), rank) };
        self.api
            .check(status)
            .map_err(|e| Error::host("GetSymbolicDimensions", e))?;
        Ok(names
            .into_iter()
            .map(|p| {
                if p.is_null() {
                    String::new()
                } else {
                    // SAFETY: a non-null name is a NUL-terminated string owned by `info`.
                    unsafe { std::ffi::CStr::from_ptr(p) }
                        .to_string_lossy()
                        .into_owned()
                }
            })
            .collect())
    }
}

impl Drop for TypeAndShape {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: `info` was returned to us by the host and is released once.
            unsafe { (self.api.raw().ReleaseTensorTypeAndShapeInfo)(self.info) };
        }
    }
}

/// One input of a compute call: its element type and shape, read once, and its data.
pub struct Tensor<'a> {
    calls: &'a ComputeApi,
    value: *const OrtValue,
    element_code: i32,
    dims: Dims,
    call: PhantomData<&'a ()>,
}

// SAFETY: the value stays alive and unmodified for the whole compute call (`'a`); the only host
// call made through `&Tensor` from other threads, GetStringTensorElementLength, only reads it.
unsafe impl Sync for Tensor<'_> {}

impl<'a> Tensor<'a> {
    /// # Safety
    /// `value` must be a live tensor value that stays unmodified for `'a`.
    pub(super) unsafe fn new(
        calls: &'a ComputeApi,
        value: *const OrtValue,
    ) -> Result<Tensor<'a>, Error> {
        let api = calls.api;
        // ONNX Runtime 1.24+: one call, reading the value's own shape. Older hosts: five calls
        // around a type-and-shape info that the host allocates and we release. A compute on a
        // small input is dominated by such calls (docs/performance.md, "fixed cost").
        if let Some(api24) = calls.api24 {
            // SAFETY: forwarded from the caller; the dims are copied before `new` returns.
            let (element_code, dims) = unsafe { api24.tensor_type_and_shape(api, value) }
                .map_err(|e| Error::host("GetTensorElementTypeAndShapeDataReference", e))?;
            return Ok(Tensor {
                calls,
                value,
                element_code,
                dims: Dims::copied(dims),
                call: PhantomData,
            });
        }
        // SAFETY: forwarded from the caller.
        let info = unsafe { TypeAndShape::of(api, value) }?;
        Ok(Tensor {
            calls,
            value,
            element_code: info.element_code()?,
            dims: info.dims()?,
            call: PhantomData,
        })
    }

    /// The ONNX element type code (1 = float, 8 = string, ...).
    pub fn element_code(&self) -> i32 {
        self.element_code
    }

    pub fn dims(&self) -> &[i64] {
        &self.dims
    }

    fn numel(&self) -> usize {
        self.dims
            .iter()
            .map(|&d| usize::try_from(d).unwrap_or(0))
            .product()
    }

    /// The packed little-endian bytes of a fixed-size tensor of type `dtype`.
    pub fn bytes(&self, dtype: DataType) -> Result<&'a [u8], Error> {
        let size = match dtype.size_of() {
            Some(size) if dtype.onnx_code() == self.element_code => size,
            _ => {
                return Err(format!(
                    "the input holds element type {}, not {dtype:?}",
                    self.element_code
                )
                .into())
            }
        };
        let len = self.numel();
        if len == 0 {
            return Ok(&[]);
        }
        let mut data: *mut c_void = std::ptr::null_mut();
        // SAFETY: `value` is a live tensor; API 17 has no const accessor, we never write through it.
        let status = unsafe { (self.calls.tensor_data)(self.value as *mut OrtValue, &mut data) };
        self.calls
            .api
            .check(status)
            .map_err(|e| Error::host("GetTensorMutableData", e))?;
        if data.is_null() {
            return Err("ONNX Runtime returned no data for a non-empty input".into());
        }
        // SAFETY: a CPU tensor of `len` elements of `size` bytes (its type and shape were read
        // above), alive and unchanged for the compute call `'a` (ONNX Runtime does not write a
        // kernel's inputs during it).
        Ok(unsafe { std::slice::from_raw_parts(data as *const u8, len * size) })
    }

    /// A bool tensor's elements. Every byte is checked to be 0 or 1 first (one pass over the
    /// mask): a model's initializer could hold other bytes, which are not valid `bool`s.
    pub fn bools(&self) -> Result<&'a [bool], Error> {
        let bytes = self.bytes(DataType::Bool)?;
        if let Some(at) = bytes.iter().position(|&b| b > 1) {
            return Err(Error::invalid_argument(format!(
                "bool element {at} holds byte {}, not 0 or 1",
                bytes[at]
            )));
        }
        // SAFETY: every byte is 0 or 1 (checked above), the two valid bit patterns of a `bool`,
        // which has the size and alignment of a byte; the lifetime is the bytes'.
        Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<bool>(), bytes.len()) })
    }

    /// String element `index`'s bytes, copied (they may contain NULs).
    pub fn string_element(&self, index: usize) -> Result<Vec<u8>, Error> {
        if self.element_code != DataType::String.onnx_code() || index >= self.numel() {
            return Err(format!("no string element {index} in this input").into());
        }
        let raw = self.calls.api.raw();
        let mut len = 0usize;
        // SAFETY: `value` is a live string tensor and `index` is below its element count.
        let status = unsafe { (raw.GetStringTensorElementLength)(self.value, index, &mut len) };
        self.calls
            .api
            .check(status)
            .map_err(|e| Error::host("GetStringTensorElementLength", e))?;
        let mut buf = vec![0u8; len];
        if len > 0 {
            // SAFETY: as above; `buf` holds exactly the `len` bytes the host copies.
            let status = unsafe {
                (raw.GetStringTensorElement)(self.value, len, index, buf.as_mut_ptr().cast())
            };
            self.calls
                .api
                .check(status)
                .map_err(|e| Error::host("GetStringTensorElement", e))?;
        }
        Ok(buf)
    }

    /// Whether string element `index` is non-empty.
    pub fn string_is_nonempty(&self, index: usize) -> Result<bool, Error> {
        if self.element_code != DataType::String.onnx_code() || index >= self.numel() {
            return Err(format!("no string element {index} in this input").into());
        }
        let mut len = 0usize;
        // SAFETY: `value` is a live string tensor and `index` is below its element count.
        let status = unsafe {
            (self.calls.api.raw().GetStringTensorElementLength)(self.value, index, &mut len)
        };
        self.calls
            .api
            .check(status)
            .map_err(|e| Error::host("GetStringTensorElementLength", e))?;
        Ok(len != 0)
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for i64 {}
    impl Sealed for u32 {}
}

/// An element type an output can be written as: the ONNX type the op table declares for it.
pub trait OutputElement: sealed::Sealed + Copy + 'static {
    const TYPE: super::ElementType;
}

impl OutputElement for i64 {
    const TYPE: super::ElementType = super::ElementType::Int64;
}

impl OutputElement for u32 {
    const TYPE: super::ElementType = super::ElementType::UInt32;
}

impl TypeAndShape {
    /// A new info of our own, released on drop.
    pub(super) fn create(api: Api) -> Result<TypeAndShape, Error> {
        let mut info = std::ptr::null_mut();
        // SAFETY: creates an info we own, released in Drop.
        let status = unsafe { (api.raw().CreateTensorTypeAndShapeInfo)(&mut info) };
        api.check(status)
            .map_err(|e| Error::host("CreateTensorTypeAndShapeInfo", e))?;
        Ok(TypeAndShape {
            api,
            info,
            owned: true,
        })
    }

    /// An info owned by someone else, never released here.
    ///
    /// # Safety
    /// `info` must be live while the value is used.
    pub(super) unsafe fn borrowed(api: Api, info: *mut OrtTensorTypeAndShapeInfo) -> TypeAndShape {
        TypeAndShape {
            api,
            info,
            owned: false,
        }
    }

    pub(super) fn raw(&self) -> *const OrtTensorTypeAndShapeInfo {
        self.info
    }

    /// Sets the element type, sizes (-1 = not fixed) and symbols ("" = none) of an info we made.
    pub(super) fn set(
        &self,
        element_code: i32,
        sizes: &[i64],
        symbols: &mut [*const std::ffi::c_char],
    ) -> Result<(), Error> {
        let raw = self.api.raw();
        let check = |call, status| self.api.check(status).map_err(|e| Error::host(call, e));
        assert_eq!(sizes.len(), symbols.len());
        // The three calls: `info` is ours and live; the arrays hold `sizes.len()` entries each
        // (asserted) and outlive the calls, which copy them.
        // SAFETY: see above.
        // SAFETY: the C parameter is an enum, passed as an int in the C ABI; taking it as i32
        // lets a code our enum lacks pass through unchanged (as GetTensorElementType is read).
        let set_element_type: SetElementTypeAsInt =
            unsafe { std::mem::transmute::<_, SetElementTypeAsInt>(raw.SetTensorElementType) };
        // SAFETY: see above.
        let status = unsafe { set_element_type(self.info, element_code) };
        check("SetTensorElementType", status)?;
        // SAFETY: see above.
        let status = unsafe { (raw.SetDimensions)(self.info, sizes.as_ptr(), sizes.len()) };
        check("SetDimensions", status)?;
        // SAFETY: see above.
        let status =
            unsafe { (raw.SetSymbolicDimensions)(self.info, symbols.as_mut_ptr(), symbols.len()) };
        check("SetSymbolicDimensions", status)
    }
}
