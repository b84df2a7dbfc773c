//! One compute call as a kernel sees it: its inputs, its outputs, the session's thread pool and
//! logger, and the node's name.

use super::api::{Api, ComputeApi};
use super::call::call;
use super::logger::Logger;
use super::pool::OrtPool;
use super::status::Error;
use super::tensor::{OutputElement, Tensor, TypeAndShape};
use super::Io;
use nonzero_core::DataType;
use ort_sys::{OrtKernelContext, OrtValue};
use std::cell::Cell;
use std::ffi::c_void;
use std::marker::PhantomData;

/// A live `OrtKernelContext`, valid for the compute call that received it (`'a`).
pub struct KernelContext<'a> {
    calls: &'a ComputeApi,
    context: *mut OrtKernelContext,
    node_name: &'a str,
    outputs: &'a [Io],
    /// Bit i: output i was handed out already (a second `&mut` to it would alias the first).
    taken: Cell<u64>,
    call: PhantomData<&'a ()>,
}

impl<'a> KernelContext<'a> {
    /// # Safety
    /// `context` must be the live context of the current compute call, which lasts for `'a`, of
    /// a node whose outputs the op table declared as `outputs`.
    pub(super) unsafe fn new(
        calls: &'a ComputeApi,
        context: *mut OrtKernelContext,
        node_name: &'a str,
        outputs: &'a [Io],
    ) -> KernelContext<'a> {
        KernelContext {
            calls,
            context,
            node_name,
            outputs,
            taken: Cell::new(0),
            call: PhantomData,
        }
    }

    pub fn node_name(&self) -> &'a str {
        self.node_name
    }

    /// Input `index`, its type and shape read.
    pub fn input(&self, index: usize) -> Result<Tensor<'a>, Error> {
        let mut value: *const OrtValue = std::ptr::null();
        // SAFETY: the context is live for this call; the value it returns lives as long.
        unsafe {
            call!(
                self.calls,
                KernelContext_GetInput(self.context, index, &mut value)
            )
        }?;
        if value.is_null() {
            return Err(format!("input {index} is missing").into());
        }
        // SAFETY: a live input value of this call, which ONNX Runtime does not modify during it.
        unsafe { Tensor::new(self.calls, value) }
    }

    /// Output `index` with shape `dims`, allocated by ONNX Runtime; each output can be taken once
    /// per call. `T` must be the element type the op table declares for it.
    pub fn output<T: OutputElement>(
        &self,
        index: usize,
        dims: &[i64],
    ) -> Result<&'a mut [T], Error> {
        let declared = self.outputs.get(index).map(|io| io.element);
        if declared != Some(T::TYPE) {
            return Err(format!(
                "output {index} is declared as {declared:?}, not {:?}",
                T::TYPE
            )
            .into());
        }
        let (value, len) = self.take_output(index, dims)?;
        if len == 0 {
            return Ok(&mut []);
        }
        let data = self.data(value, dims)?;
        // SAFETY: the output holds `len` elements of T (its declared type, checked above), owned
        // by this call until it returns (`'a`), and handed out only once (the `taken` bit).
        Ok(unsafe { std::slice::from_raw_parts_mut(data as *mut T, len) })
    }

    /// KernelContext_GetOutput, once per output and call; returns the value and its element count.
    fn take_output(&self, index: usize, dims: &[i64]) -> Result<(*mut OrtValue, usize), Error> {
        let bit = 1u64 << index.min(63);
        if index >= 64 || self.taken.get() & bit != 0 {
            return Err(format!("output {index} was already written in this call").into());
        }
        let len = dims.iter().try_fold(1usize, |n, &d| {
            usize::try_from(d).ok().and_then(|d| n.checked_mul(d))
        });
        let len = len.ok_or_else(|| format!("output shape {dims:?} is not a valid size"))?;
        let mut value: *mut OrtValue = std::ptr::null_mut();
        let (context, rank) = (self.context, dims.len());
        // SAFETY: the context is live; ONNX Runtime allocates the output of the declared type
        // with these dims (copied during the call).
        unsafe {
            call!(
                self.calls,
                KernelContext_GetOutput(context, index, dims.as_ptr(), rank, &mut value)
            )
        }?;
        self.taken.set(self.taken.get() | bit);
        Ok((value, len))
    }

    /// The data pointer of a live, non-empty output.
    fn data(&self, value: *mut OrtValue, dims: &[i64]) -> Result<*mut c_void, Error> {
        let mut data: *mut c_void = std::ptr::null_mut();
        // SAFETY: `value` is a live output of this call.
        unsafe { call!(self.calls, GetTensorMutableData(value, &mut data)) }?;
        if data.is_null() {
            return Err(format!("ONNX Runtime could not allocate the {dims:?} output").into());
        }
        Ok(data)
    }

    /// Output `index` (declared as any type) as the packed bytes of a `dtype` tensor of shape
    /// `dims`. ONNX Runtime allocates it with the type shape inference declared; that type is
    /// checked against `dtype` before any byte is handed out.
    pub fn output_bytes(
        &self,
        index: usize,
        dims: &[i64],
        dtype: DataType,
    ) -> Result<&'a mut [u8], Error> {
        let size = dtype
            .size_of()
            .ok_or_else(|| format!("{dtype:?} has no fixed size"))?;
        let (value, len) = self.output_value(index, dims, dtype)?;
        if len == 0 {
            return Ok(&mut []);
        }
        let data = self.data(value, dims)?;
        // SAFETY: the output holds `len` elements of `dtype` (its type checked by
        // output_value), `size` bytes each, owned by this call (`'a`) and handed out once.
        Ok(unsafe { std::slice::from_raw_parts_mut(data as *mut u8, len * size) })
    }

    /// Output `index` (declared as any type) as a string tensor of shape `dims`.
    pub fn output_strings(&self, index: usize, dims: &[i64]) -> Result<StringOutput<'a>, Error> {
        let (value, len) = self.output_value(index, dims, DataType::String)?;
        Ok(StringOutput {
            api: self.calls.api(),
            value,
            len,
            call: PhantomData,
        })
    }

    /// GetOutput for an output declared as any type, checking the allocated type is `dtype`;
    /// returns the value and its element count.
    fn output_value(
        &self,
        index: usize,
        dims: &[i64],
        dtype: DataType,
    ) -> Result<(*mut OrtValue, usize), Error> {
        let declared = self.outputs.get(index).map(|io| io.element);
        if declared != Some(super::ElementType::Any) {
            return Err(format!("output {index} is declared as {declared:?}, not any type").into());
        }
        let (value, len) = self.take_output(index, dims)?;
        // SAFETY: `value` is the live output just allocated.
        let actual = unsafe { TypeAndShape::of(self.calls.api(), value) }?.element_code()?;
        if actual != dtype.onnx_code() {
            return Err(format!(
                "output {index} was allocated with element type {actual}, not {dtype:?}"
            )
            .into());
        }
        Ok((value, len))
    }

    /// The session's intra-op thread pool, as an op-core executor.
    pub fn pool(&self) -> OrtPool<'_> {
        // SAFETY: the context is live for this call, which outlives the returned pool.
        unsafe { OrtPool::new(self.calls.api(), self.context) }
    }

    /// The session's logger, if ONNX Runtime hands one out.
    pub fn logger(&self) -> Option<Logger<'_>> {
        let mut logger = std::ptr::null();
        // SAFETY: the context is live; its logger lives as long as the context.
        let api = self.calls.api();
        // SAFETY: the context is live; its logger lives as long as the context.
        let status = unsafe { (api.table().KernelContext_GetLogger)(self.context, &mut logger) };
        if api.check(status).is_err() || logger.is_null() {
            return None;
        }
        // SAFETY: non-null and live as long as the context.
        Some(unsafe { Logger::new(api, logger) })
    }
}

/// A string output being filled, one element at a time.
pub struct StringOutput<'a> {
    api: Api,
    value: *mut OrtValue,
    len: usize,
    call: PhantomData<&'a ()>,
}

impl StringOutput<'_> {
    /// Sets element `index` to `bytes` (any bytes, NULs included).
    pub fn set(&mut self, index: usize, bytes: &[u8]) -> Result<(), Error> {
        if index >= self.len {
            return Err(format!("no string element {index} in this output").into());
        }
        let mut buf: *mut std::ffi::c_char = std::ptr::null_mut();
        let (value, len) = (self.value, bytes.len());
        // SAFETY: `value` is a live string output of this call and `index` is below its element
        // count; the host sizes element `index` to `bytes.len()` and returns its buffer.
        unsafe {
            call!(
                self.api,
                GetResizedStringTensorElementBuffer(value, index, len, &mut buf)
            )
        }?;
        if !bytes.is_empty() {
            // SAFETY: `buf` holds `bytes.len()` bytes, owned by the output, not overlapping ours.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), buf.cast(), bytes.len()) };
        }
        Ok(())
    }
}
