//! Typed views of fixed-size element buffers whose type is known only at run time (an ONNX
//! Runtime tensor, a DirectML buffer). Strings are not here: see [`crate::source::FnSource`].

use crate::kernel::{one_pass, one_pass_dim, Order};
use crate::source::ZeroTest;
use crate::DataType;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use std::fmt;

/// A borrowed buffer of one fixed-size NonZero element type.
#[derive(Debug, Clone, Copy)]
pub enum NumericSlice<'a> {
    /// One byte per element, 0 is `false` and any other byte `true` (so no byte value is invalid).
    Bool(&'a [u8]),
    Uint8(&'a [u8]),
    Int8(&'a [i8]),
    Uint16(&'a [u16]),
    Int16(&'a [i16]),
    Uint32(&'a [u32]),
    Int32(&'a [i32]),
    Uint64(&'a [u64]),
    Int64(&'a [i64]),
    Float16(&'a [f16]),
    Bfloat16(&'a [bf16]),
    Float32(&'a [f32]),
    Float64(&'a [f64]),
    Complex64(&'a [Complex32]),
    Complex128(&'a [Complex64]),
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

impl<'a> NumericSlice<'a> {
    /// Views `bytes` (native endianness) as elements of `dtype`.
    pub fn from_bytes(dtype: DataType, bytes: &'a [u8]) -> Result<Self, BytesError> {
        Ok(match dtype {
            DataType::Bool => NumericSlice::Bool(bytes),
            DataType::Uint8 => NumericSlice::Uint8(bytes),
            DataType::Int8 => NumericSlice::Int8(cast(dtype, bytes)?),
            DataType::Uint16 => NumericSlice::Uint16(cast(dtype, bytes)?),
            DataType::Int16 => NumericSlice::Int16(cast(dtype, bytes)?),
            DataType::Uint32 => NumericSlice::Uint32(cast(dtype, bytes)?),
            DataType::Int32 => NumericSlice::Int32(cast(dtype, bytes)?),
            DataType::Uint64 => NumericSlice::Uint64(cast(dtype, bytes)?),
            DataType::Int64 => NumericSlice::Int64(cast(dtype, bytes)?),
            DataType::Float16 => NumericSlice::Float16(cast(dtype, bytes)?),
            DataType::Bfloat16 => NumericSlice::Bfloat16(cast(dtype, bytes)?),
            DataType::Float32 => NumericSlice::Float32(cast(dtype, bytes)?),
            DataType::Float64 => NumericSlice::Float64(cast(dtype, bytes)?),
            DataType::Complex64 => NumericSlice::Complex64(cast(dtype, bytes)?),
            DataType::Complex128 => NumericSlice::Complex128(cast(dtype, bytes)?),
            DataType::String => return Err(BytesError::NotFixedSize(dtype)),
        })
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        match self {
            NumericSlice::Bool(_) => DataType::Bool,
            NumericSlice::Uint8(_) => DataType::Uint8,
            NumericSlice::Int8(_) => DataType::Int8,
            NumericSlice::Uint16(_) => DataType::Uint16,
            NumericSlice::Int16(_) => DataType::Int16,
            NumericSlice::Uint32(_) => DataType::Uint32,
            NumericSlice::Int32(_) => DataType::Int32,
            NumericSlice::Uint64(_) => DataType::Uint64,
            NumericSlice::Int64(_) => DataType::Int64,
            NumericSlice::Float16(_) => DataType::Float16,
            NumericSlice::Bfloat16(_) => DataType::Bfloat16,
            NumericSlice::Float32(_) => DataType::Float32,
            NumericSlice::Float64(_) => DataType::Float64,
            NumericSlice::Complex64(_) => DataType::Complex64,
            NumericSlice::Complex128(_) => DataType::Complex128,
        }
    }
}

/// Calls `$body` with `$s` bound to the typed slice, whatever the variant.
macro_rules! dispatch {
    ($value:expr, $s:ident => $body:expr) => {
        match $value {
            NumericSlice::Bool($s) | NumericSlice::Uint8($s) => $body,
            NumericSlice::Int8($s) => $body,
            NumericSlice::Uint16($s) => $body,
            NumericSlice::Int16($s) => $body,
            NumericSlice::Uint32($s) => $body,
            NumericSlice::Int32($s) => $body,
            NumericSlice::Uint64($s) => $body,
            NumericSlice::Int64($s) => $body,
            NumericSlice::Float16($s) => $body,
            NumericSlice::Bfloat16($s) => $body,
            NumericSlice::Float32($s) => $body,
            NumericSlice::Float64($s) => $body,
            NumericSlice::Complex64($s) => $body,
            NumericSlice::Complex128($s) => $body,
        }
    };
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
        dispatch!(*self, s => one_pass(s, sizes.len(), dim, order, output))
    }
}

/// The type dispatch happens once per run of elements (up to a whole chunk), not per element.
impl ZeroTest for NumericSlice<'_> {
    fn len(&self) -> usize {
        dispatch!(*self, s => s.len())
    }

    fn count_run(&self, start: usize, len: usize, stride: usize) -> usize {
        dispatch!(*self, s => s.count_run(start, len, stride))
    }

    fn compact_run(
        &self,
        start: usize,
        len: usize,
        stride: usize,
        first_index: usize,
        out: &mut [usize],
    ) -> usize {
        dispatch!(*self, s => s.compact_run(start, len, stride, first_index, out))
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
        let empty = NumericSlice::from_bytes(DataType::Float64, &bytes[1..1]).unwrap();
        assert_eq!((empty.dtype(), empty.len()), (DataType::Float64, 0));
        assert!(matches!(
            NumericSlice::from_bytes(DataType::String, bytes),
            Err(BytesError::NotFixedSize(_))
        ));
    }
}
