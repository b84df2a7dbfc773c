//! Shape inference: an op reads its inputs' types and shapes and declares its outputs', so that
//! downstream shapes stay known (or symbolic) when ONNX Runtime builds the graph.

use super::api::Api;
use super::call::call;
use super::status::Error;
use super::tensor::TypeAndShape;
use super::ElementType;
use ort_sys::{OrtShapeInferContext, OrtTensorTypeAndShapeInfo};
use std::ffi::{c_char, CString};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};

/// One dimension of an inferred shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dim {
    Fixed(i64),
    Symbolic(String),
    Unknown,
}

/// Distinct symbolic names: two outputs must not be assumed to have the same data-dependent size.
static NEXT_SYMBOL: AtomicU64 = AtomicU64::new(0);

impl Dim {
    /// A new symbol `{prefix}_{n}`, unique in this process.
    pub fn fresh_symbol(prefix: &str) -> Dim {
        Dim::Symbolic(format!(
            "{prefix}_{}",
            NEXT_SYMBOL.fetch_add(1, Ordering::Relaxed)
        ))
    }
}

/// A live `OrtShapeInferContext` (`'a`: the inference call).
pub struct ShapeInferContext<'a> {
    api: Api,
    context: *mut OrtShapeInferContext,
    call: PhantomData<&'a ()>,
}

impl ShapeInferContext<'_> {
    /// # Safety
    /// `context` must be the live context of the current inference call, lasting for `'a`.
    pub(super) unsafe fn new<'a>(
        api: Api,
        context: *mut OrtShapeInferContext,
    ) -> ShapeInferContext<'a> {
        ShapeInferContext {
            api,
            context,
            call: PhantomData,
        }
    }

    /// Input `index`'s type and shape, borrowed from the context for this call.
    fn input_info(&self, index: usize) -> Result<TypeAndShape, Error> {
        let mut info: *mut OrtTensorTypeAndShapeInfo = std::ptr::null_mut();
        // SAFETY: the context is live for this call; the info is borrowed from it (not released).
        unsafe {
            call!(
                self.api,
                ShapeInferContext_GetInputTypeShape(self.context, index, &mut info)
            )
        }?;
        // SAFETY: `info` is a live info borrowed from the context for this call.
        Ok(unsafe { TypeAndShape::borrowed(self.api, info) })
    }

    /// Input `index`'s shape. ONNX Runtime reports an input of unknown shape as rank 0, the same
    /// as a scalar, so an op must not conclude much from an empty shape.
    pub fn input_shape(&self, index: usize) -> Result<Vec<Dim>, Error> {
        let info = self.input_info(index)?;
        let dims = info.dims()?;
        let symbols = info.symbols(dims.len())?;
        Ok(dims
            .iter()
            .zip(symbols)
            .map(|(&d, symbol)| match d {
                d if d >= 0 => Dim::Fixed(d),
                _ if !symbol.is_empty() => Dim::Symbolic(symbol),
                _ => Dim::Unknown,
            })
            .collect())
    }

    /// Input `index`'s ONNX element type code (0 when unknown).
    pub fn input_element_code(&self, index: usize) -> Result<i32, Error> {
        self.input_info(index)?.element_code()
    }

    /// The node's int attribute `name`, `None` when it is not set.
    pub fn attribute_i64(&self, name: &std::ffi::CStr) -> Result<Option<i64>, Error> {
        let mut attr = std::ptr::null();
        // SAFETY: the context is live; `name` is NUL-terminated; the attribute is borrowed.
        let status = unsafe {
            (self.api.table().ShapeInferContext_GetAttribute)(
                self.context,
                name.as_ptr(),
                &mut attr,
            )
        };
        // ONNX Runtime reports a missing attribute as an error status.
        if self.api.check(status).is_err() || attr.is_null() {
            return Ok(None);
        }
        let (mut value, mut written) = (0i64, 0usize);
        let (int, out, size) = (
            ort_sys::OrtOpAttrType::ORT_OP_ATTR_INT,
            (&mut value as *mut i64).cast(),
            std::mem::size_of::<i64>(),
        );
        // SAFETY: `attr` is live for this call; the buffer is one i64, its size passed.
        unsafe { call!(self.api, ReadOpAttr(attr, int, out, size, &mut written)) }?;
        Ok(Some(value))
    }

    /// Declares output `index` as a tensor of `element` with shape `dims`.
    pub fn set_output(
        &mut self,
        index: usize,
        element: ElementType,
        dims: &[Dim],
    ) -> Result<(), Error> {
        self.set_output_code(index, element.onnx() as i32, dims)
    }

    /// As [`ShapeInferContext::set_output`], with the element type as an ONNX code (for an
    /// output whose type follows an input's).
    pub fn set_output_code(&mut self, index: usize, code: i32, dims: &[Dim]) -> Result<(), Error> {
        // ONNX Runtime turns a dimension with no symbol into the fixed size -1, not an unknown
        // one, and the shape inference of the nodes downstream then refuses it (Split: "split
        // dimension of the input (-1)"). A fresh symbol of its own claims nothing but "unknown".
        let dims: Vec<Dim> = dims
            .iter()
            .map(|d| match d {
                Dim::Unknown => Dim::fresh_symbol("nonzero_unknown"),
                d => d.clone(),
            })
            .collect();
        let info = TypeAndShape::create(self.api)?;
        let sizes: Vec<i64> = dims
            .iter()
            .map(|d| match d {
                Dim::Fixed(n) => *n,
                Dim::Symbolic(_) | Dim::Unknown => -1,
            })
            .collect();
        let names: Vec<CString> = dims
            .iter()
            .map(|d| match d {
                Dim::Symbolic(name) => CString::new(name.replace('\0', "")).expect("NULs removed"),
                _ => CString::default(),
            })
            .collect();
        let mut symbols: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        info.set(code, &sizes, &mut symbols)?;
        let (context, info) = (self.context, info.raw());
        // SAFETY: the context is live; the host copies `info`, which we still own.
        unsafe {
            call!(
                self.api,
                ShapeInferContext_SetOutputTypeShape(context, index, info)
            )
        }
    }
}
