//! Typed views of fixed-size element buffers whose type is known only at run time (an ONNX
//! Runtime tensor, a DirectML buffer). Strings are not here: see [`crate::source::FnSource`].

use crate::kernel::{one_pass, one_pass_dim, Order};
use crate::source::ZeroTest;
use crate::{dispatch_element, DataType, Element};
use std::fmt;

/// A borrowed buffer of one fixed-size NonZero element type, known at run time: a `{dtype, bytes}`
/// view whose bytes are whole, aligned elements (checked when it is made). A bool is one byte,
/// 0 is `false` and any other byte `true`, so no byte value is invalid.
#[derive(Debug, Clone, Copy)]
pub struct NumericSlice<'a> {
    dtype: DataType,
    /// `len` whole elements of `dtype`, aligned to its element type.
    bytes: &'a [u8],
    len: usize,
}

/// Why a byte buffer cannot be viewed as elements of a type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BytesError {
    /// Strings have no fixed size.
    NotFixedSize(DataType),
    /// The buffer's length is not a multiple of the element size.
    Length { dtype: DataType, bytes: usize },
    /// The buffer's address is not aligned to the element type.
    Alignment { dtype: DataType, align: usize },
}

impl fmt::Display for BytesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BytesError::NotFixedSize(t) => write!(f, "{t} elements have no fixed size"),
            BytesError::Length { dtype, bytes } => {
                write!(f, "{bytes} bytes is not a whole number of {dtype} elements")
            }
            BytesError::Alignment { dtype, align } => {
                write!(f, "a {dtype} buffer must be aligned to {align} bytes")
            }
        }
    }
}

impl std::error::Error for BytesError {}

/// `bytes` as `T`, whose size and alignment `dtype`'s elements have.
fn cast<T: bytemuck::Pod>(dtype: DataType, bytes: &[u8]) -> Result<&[T], BytesError> {
    if bytes.is_empty() {
        // An empty buffer's address is arbitrary (often dangling): alignment is meaningless.
        return Ok(&[]);
    }
    bytemuck::try_cast_slice(bytes).map_err(|e| match e {
        bytemuck::PodCastError::TargetAlignmentGreaterAndInputNotAligned => BytesError::Alignment {
            dtype,
            align: std::mem::align_of::<T>(),
        },
        _ => BytesError::Length {
            dtype,
            bytes: bytes.len(),
        },
    })
}

/// The address of an empty view: no element type is aligned to more than 8 bytes.
const EMPTY: &[u64] = &[];

impl<'a> NumericSlice<'a> {
    /// Views `bytes` (native endianness) as elements of `dtype`.
    pub fn from_bytes(dtype: DataType, bytes: &'a [u8]) -> Result<Self, BytesError> {
        let len = dispatch_element!(dtype, bool as u8,
            T => cast::<T>(dtype, bytes)?.len(),
            String => return Err(BytesError::NotFixedSize(dtype)),
        );
        // An empty buffer may sit at any address: an empty `[u64]`'s is aligned for every type.
        let bytes = if len == 0 {
            bytemuck::cast_slice(EMPTY)
        } else {
            bytes
        };
        Ok(NumericSlice { dtype, bytes, len })
    }

    /// A typed slice, viewed as its bytes.
    pub fn new<T: Element>(elements: &'a [T]) -> Self {
        NumericSlice {
            dtype: T::DTYPE,
            bytes: bytemuck::cast_slice(elements),
            len: elements.len(),
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The bytes viewed as `T`.
    ///
    /// # Safety
    /// `T` is the type [`dispatch_element!`] in its `bool as u8` mode binds for `self.dtype`.
    #[inline(always)]
    unsafe fn elements<T: bytemuck::Pod>(&self) -> &'a [T] {
        debug_assert_eq!(Some(std::mem::size_of::<T>()), self.dtype.size_of());
        debug_assert!(self.bytes.as_ptr().cast::<T>().is_aligned());
        // SAFETY: the constructors made `bytes` `len` whole elements of `dtype`, aligned for its
        // type (an empty view's too), and that type is `T` (the caller's contract); every bit
        // pattern is a valid `T` (`Pod`).
        unsafe { std::slice::from_raw_parts(self.bytes.as_ptr().cast::<T>(), self.len) }
    }
}

impl<'a, T: Element> From<&'a [T]> for NumericSlice<'a> {
    fn from(elements: &'a [T]) -> Self {
        NumericSlice::new(elements)
    }
}

impl NumericSlice<'_> {
    /// ONNX NonZero (`[rank, nnz]`) of a small packed input of shape `sizes` in one pass over it
    /// (`kernel/one_pass.rs`): at most [`ONE_PASS_MAX`](crate::kernel::ONE_PASS_MAX) elements, at
    /// most one dimension of size other than 1 (a token mask `[1, 1, n]`, a 1-D mask; see
    /// [`one_pass_dim`](crate::kernel::one_pass_dim)). `output(shape)` hands out the output
    /// once the count is known. Returns `Ok(false)`, calling nothing, for any other input, or
    /// for data whose length is not the shape's (or when the buffer `output` returns is not
    /// `rank * nnz` long, then writing nothing): run [`Counted`](crate::Counted) then.
    pub fn nonzero_one_pass<'o, E>(
        &self,
        sizes: &[usize],
        output: impl FnOnce([usize; 2]) -> Result<&'o mut [i64], E>,
    ) -> Result<bool, E> {
        self.one_pass(sizes, Order::RankByNnz, output)
    }

    /// ArgWhere (`[nnz, rank]`) in one pass, on the inputs [`NumericSlice::nonzero_one_pass`]
    /// takes.
    pub fn argwhere_one_pass<'o, E>(
        &self,
        sizes: &[usize],
        output: impl FnOnce([usize; 2]) -> Result<&'o mut [i64], E>,
    ) -> Result<bool, E> {
        self.one_pass(sizes, Order::NnzByRank, output)
    }

    fn one_pass<'o, E>(
        &self,
        sizes: &[usize],
        order: Order,
        output: impl FnOnce([usize; 2]) -> Result<&'o mut [i64], E>,
    ) -> Result<bool, E> {
        let Some(dim) = one_pass_dim(sizes) else {
            return Ok(false);
        };
        // One dimension at most is not 1, so the element count is its size (or 1).
        let numel = dim.map_or(1, |d| sizes[d]);
        if self.len() != numel {
            return Ok(false);
        }
        dispatch_element!(self.dtype, bool as u8, T => {
            // SAFETY: `T` is what this mode of `dispatch_element!` binds for the view's dtype.
            let s = unsafe { self.elements::<T>() };
            one_pass(s, sizes.len(), dim, order, output)
        }, String => unreachable!("a NumericSlice never holds strings"))
    }
}

/// The type dispatch happens once per run of elements (up to a whole chunk), not per element.
impl ZeroTest for NumericSlice<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn count_run(&self, start: usize, len: usize, stride: usize) -> usize {
        dispatch_element!(self.dtype, bool as u8, T => {
            // SAFETY: `T` is what this mode of `dispatch_element!` binds for the view's dtype.
            let s = unsafe { self.elements::<T>() };
            s.count_run(start, len, stride)
        }, String => unreachable!("a NumericSlice never holds strings"))
    }

    fn compact_run(
        &self,
        start: usize,
        len: usize,
        stride: usize,
        first_index: usize,
        out: &mut [usize],
    ) -> usize {
        dispatch_element!(self.dtype, bool as u8, T => {
            // SAFETY: `T` is what this mode of `dispatch_element!` binds for the view's dtype.
            let s = unsafe { self.elements::<T>() };
            s.compact_run(start, len, stride, first_index, out)
        }, String => unreachable!("a NumericSlice never holds strings"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_viewed_by_type() {
        let words = [0u32, 0x8000_0000, 0x7FC0_0000, 1];
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        let f = NumericSlice::from_bytes(DataType::Float32, bytes).unwrap();
        assert_eq!(f.dtype(), DataType::Float32);
        assert_eq!(f.count_run(0, 4, 1), 2); // -0.0 is zero, NaN and 1e-45 are not
        assert_eq!(
            NumericSlice::from_bytes(DataType::Bool, &[0, 2, 1])
                .unwrap()
                .count_run(0, 3, 1),
            2
        );
        assert!(matches!(
            NumericSlice::from_bytes(DataType::Int32, &bytes[..3]),
            Err(BytesError::Length { .. })
        ));
        assert!(matches!(
            NumericSlice::from_bytes(DataType::Int32, &bytes[1..5]),
            Err(BytesError::Alignment { .. })
        ));
        // An empty buffer at an address no f64 may sit at is a view that runs.
        let empty = NumericSlice::from_bytes(DataType::Float64, &bytes[1..1]).unwrap();
        assert_eq!((empty.dtype(), empty.len()), (DataType::Float64, 0));
        assert_eq!(empty.count_run(0, 0, 1), 0);
        assert_eq!(empty.compact_run(0, 0, 1, 0, &mut []), 0);
        assert!(matches!(
            NumericSlice::from_bytes(DataType::String, bytes),
            Err(BytesError::NotFixedSize(_))
        ));
    }

    #[test]
    fn every_type_is_viewed_as_its_own_elements() {
        // 16 aligned bytes: in every type, element 0 is zero and the last element is not.
        let words = [0u64, 0x0100_0000_0000_0000];
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        for dtype in DataType::FIXED_SIZE {
            let view = NumericSlice::from_bytes(dtype, bytes).unwrap();
            let size = dtype.size_of().unwrap();
            assert_eq!((view.dtype(), view.len()), (dtype, 16 / size), "{dtype}");
            assert_eq!(view.count_run(0, view.len(), 1), 1, "{dtype}");
            let mut out = [0usize; 16];
            assert_eq!(view.compact_run(0, view.len(), 1, 0, &mut out), 1);
            assert_eq!(out[0], 16 / size - 1, "{dtype}");
        }
        let flags = NumericSlice::new(&[true, false, true][..]);
        assert_eq!(
            (flags.dtype(), flags.count_run(0, 3, 1)),
            (DataType::Bool, 2)
        );
        let halves = NumericSlice::from(&[crate::f16::NEG_ZERO, crate::f16::ONE][..]);
        assert_eq!(
            (halves.dtype(), halves.count_run(0, 2, 1)),
            (DataType::Float16, 1)
        );
    }
}
