//! Tensors: the input values a kernel reads, the type-and-shape info it owns while reading them,
//! and the element types an output can be written as.

use super::api::{Api, ComputeApi};
use super::call::call;
use super::status::Error;
use nonzero_core::DataType;
use ort_sys::{OrtTensorTypeAndShapeInfo, OrtValue};
use smallvec::{smallvec, SmallVec};
use std::ffi::c_void;
use std::marker::PhantomData;

/// `SetTensorElementType` with its enum parameter taken as the C int it is.
type SetElementTypeAsInt =
    unsafe extern "system" fn(*mut OrtTensorTypeAndShapeInfo, i32) -> ort_sys::OrtStatusPtr;

/// A shape's dimensions as ONNX Runtime reports them (-1 where shape inference does not know
/// one); ranks up to 8 are held inline.
pub type Dims = SmallVec<[i64; 8]>;

/// An input's sizes, the one shape type a compute reads; inline up to rank 8, so a compute on a
/// small input allocates nothing to read them.
pub type Sizes = SmallVec<[usize; 8]>;

/// `dims` as sizes; a negative one (which no live tensor has) is refused with the shape.
fn sizes(dims: &[i64]) -> Result<Sizes, Error> {
    dims.iter()
        .map(|&d| usize::try_from(d))
        .collect::<Result<Sizes, _>>()
        .map_err(|_| Error::invalid_argument(format!("input shape {dims:?} has a negative size")))
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
        unsafe { call!(api, GetTensorTypeAndShape(value, &mut info)) }?;
        Ok(TypeAndShape {
            api,
            info,
            owned: true,
        })
    }

    /// The element type as the plain ONNX code: a newer host may report a type our enum lacks.
    pub(super) fn element_code(&self) -> Result<i32, Error> {
        let mut code: i32 = 0;
        let out = &mut code as *mut i32 as *mut _;
        // SAFETY: `info` is live; the out-pointer is a 4-byte integer, as the C enum is.
        unsafe { call!(self.api, GetTensorElementType(self.info, out)) }?;
        Ok(code)
    }

    pub(super) fn dims(&self) -> Result<Dims, Error> {
        let mut rank = 0usize;
        // SAFETY: `info` is live.
        unsafe { call!(self.api, GetDimensionsCount(self.info, &mut rank)) }?;
        let mut dims: Dims = smallvec![0; rank];
        // SAFETY: `info` is live and `dims` holds `rank` elements.
        unsafe { call!(self.api, GetDimensions(self.info, dims.as_mut_ptr(), rank)) }?;
        Ok(dims)
    }

    /// Each dimension's symbol ("" where there is none), for shape inference.
    pub(super) fn symbols(&self, rank: usize) -> Result<Vec<String>, Error> {
        let mut names = vec![std::ptr::null::<std::ffi::c_char>(); rank];
        // SAFETY: `info` is live and `names` holds `rank` pointers, which receive strings owned
        // by `info` (copied below, before it is released).
        unsafe {
            call!(
                self.api,
                GetSymbolicDimensions(self.info, names.as_mut_ptr(), rank)
            )
        }?;
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
            unsafe { (self.api.table().ReleaseTensorTypeAndShapeInfo)(self.info) };
        }
    }
}

/// One input of a compute call: its element type and shape, read once, and its data.
pub struct Tensor<'a> {
    calls: &'a ComputeApi,
    value: *const OrtValue,
    element_code: i32,
    sizes: Sizes,
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
        let api = calls.api();
        // ONNX Runtime 1.24+: one call, reading the value's own shape. Older hosts: five calls
        // around a type-and-shape info that the host allocates and we release. A compute on a
        // small input is dominated by such calls (docs/performance.md, "fixed cost").
        if let Some(api24) = calls.api24 {
            // SAFETY: forwarded from the caller; the dims are copied before `new` returns.
            let (element_code, dims) = unsafe { api24.tensor_type_and_shape(value) }?;
            return Ok(Tensor {
                calls,
                value,
                element_code,
                sizes: sizes(dims)?,
                call: PhantomData,
            });
        }
        // SAFETY: forwarded from the caller.
        let info = unsafe { TypeAndShape::of(api, value) }?;
        Ok(Tensor {
            calls,
            value,
            element_code: info.element_code()?,
            sizes: sizes(&info.dims()?)?,
            call: PhantomData,
        })
    }

    /// The ONNX element type code (1 = float, 8 = string, ...).
    pub fn element_code(&self) -> i32 {
        self.element_code
    }

    /// The input's shape.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The element count (the host allocated the tensor, so it does not overflow).
    pub fn numel(&self) -> usize {
        self.sizes.iter().product()
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
        let value = self.value as *mut OrtValue;
        // SAFETY: `value` is a live tensor; API 17 has no const accessor, we never write through it.
        unsafe { call!(self.calls, GetTensorMutableData(value, &mut data)) }?;
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
        // An OR of each 4 KiB chunk is branch-free and vectorizes (a byte-wise search for the
        // first bad byte took 0.3 ms of a 1M mask); the position is looked for only on failure.
        const CHUNK: usize = 4096;
        let bad_chunk = bytes
            .chunks(CHUNK)
            .position(|c| c.iter().fold(0u8, |acc, &b| acc | b) > 1);
        if let Some(at) = bad_chunk.and_then(|c| {
            let start = c * CHUNK;
            bytes[start..]
                .iter()
                .position(|&b| b > 1)
                .map(|p| start + p)
        }) {
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
        let len = self.string_length(index)?;
        let mut buf = vec![0u8; len];
        if len > 0 {
            let (api, value) = (self.calls.api(), self.value);
            // SAFETY: `value` is a live string tensor, `index` is below its element count
            // (string_length checked it), and `buf` holds exactly the `len` bytes the host copies.
            unsafe {
                call!(
                    api,
                    GetStringTensorElement(value, len, index, buf.as_mut_ptr().cast())
                )
            }?;
        }
        Ok(buf)
    }

    /// Whether string element `index` is non-empty.
    pub fn string_is_nonempty(&self, index: usize) -> Result<bool, Error> {
        Ok(self.string_length(index)? != 0)
    }

    /// String element `index`'s length in bytes.
    fn string_length(&self, index: usize) -> Result<usize, Error> {
        if self.element_code != DataType::String.onnx_code() || index >= self.numel() {
            return Err(format!("no string element {index} in this input").into());
        }
        let (api, value, mut len) = (self.calls.api(), self.value, 0usize);
        // SAFETY: `value` is a live string tensor and `index` is below its element count.
        unsafe { call!(api, GetStringTensorElementLength(value, index, &mut len)) }?;
        Ok(len)
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
        unsafe { call!(api, CreateTensorTypeAndShapeInfo(&mut info)) }?;
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
        assert_eq!(sizes.len(), symbols.len());
        let (api, info) = (self.api, self.info);
        // SAFETY: `info` is ours and live; the arrays hold `sizes.len()` entries each (asserted)
        // and outlive the calls, which copy them. SetTensorElementType's enum parameter is passed
        // as an int in the C ABI; taking it as i32 lets a code our enum lacks pass through
        // unchanged (as GetTensorElementType is read).
        unsafe {
            call!(
                api,
                SetTensorElementType as SetElementTypeAsInt,
                (info, element_code)
            )?;
            call!(api, SetDimensions(info, sizes.as_ptr(), sizes.len()))?;
            call!(
                api,
                SetSymbolicDimensions(info, symbols.as_mut_ptr(), symbols.len())
            )
        }
    }
}
