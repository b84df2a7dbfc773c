//! Typed tensors and their `TensorProto` encoding.
//!
//! Writing uses `raw_data` (little-endian) for every numeric type and `string_data` for strings.
//! Reading accepts `raw_data` and the typed fields, as `onnx.proto` assigns them: `int32_data`
//! for bool, (u)int8, (u)int16, int32, float16 and bfloat16 (the 16-bit bit pattern); `int64_data`
//! for int64; `uint64_data` for uint32 and uint64; `float_data` for float and complex64 (real,
//! imaginary pairs); `double_data` for double and complex128.

use anyhow::{anyhow, bail, ensure, Context, Result};
use nonzero_core::{
    bf16, dispatch_element, f16, str_is_nonzero, Complex32, Complex64, DataType, Element,
};
use nonzero_proto::onnx::TensorProto;
use std::fmt::Write as _;

/// The values of a tensor, one variant per NonZero element type (plus nothing else: int64 is
/// also NonZero's output type).
#[derive(Debug, Clone, PartialEq)]
pub enum TensorData {
    Bool(Vec<bool>),
    Uint8(Vec<u8>),
    Int8(Vec<i8>),
    Uint16(Vec<u16>),
    Int16(Vec<i16>),
    Uint32(Vec<u32>),
    Int32(Vec<i32>),
    Uint64(Vec<u64>),
    Int64(Vec<i64>),
    Float16(Vec<f16>),
    Bfloat16(Vec<bf16>),
    Float32(Vec<f32>),
    Float64(Vec<f64>),
    Complex64(Vec<Complex32>),
    Complex128(Vec<Complex64>),
    String(Vec<String>),
}

/// A type whose values a [`TensorData`] variant holds: the NonZero element types and `String`.
pub trait TensorElement: Sized {
    /// The values, when `data` holds this type.
    fn values(data: &TensorData) -> Option<&[Self]>;
}

/// For each variant: `TensorData::from(vec)`, its [`TensorElement`] impl, and its arm of
/// [`TensorData::dtype`] (the variants are named as the [`DataType`]s). The one list of the
/// variants; everything else reaches their types through `dispatch_element!`.
macro_rules! variants {
    ($($variant:ident => $t:ty),* $(,)?) => {
        $(
            impl From<Vec<$t>> for TensorData {
                fn from(v: Vec<$t>) -> TensorData {
                    TensorData::$variant(v)
                }
            }

            impl TensorElement for $t {
                fn values(data: &TensorData) -> Option<&[Self]> {
                    match data {
                        TensorData::$variant(v) => Some(v),
                        _ => None,
                    }
                }
            }
        )*

        impl TensorData {
            /// The element type.
            pub fn dtype(&self) -> DataType {
                match self {
                    $(TensorData::$variant(_) => DataType::$variant,)*
                }
            }
        }
    };
}

variants!(
    Bool => bool, Uint8 => u8, Int8 => i8, Uint16 => u16, Int16 => i16, Uint32 => u32,
    Int32 => i32, Uint64 => u64, Int64 => i64, Float16 => f16, Bfloat16 => bf16,
    Float32 => f32, Float64 => f64, Complex64 => Complex32, Complex128 => Complex64,
    String => String,
);

/// One value for humans ([`TensorData::preview`]): numbers and strings as `{:?}` writes them,
/// bool as 0 or 1, complex as `1.0-2.0i`.
trait Show {
    fn show(&self) -> String;
}

macro_rules! show_debug {
    ($($t:ty),*) => {$(
        impl Show for $t {
            fn show(&self) -> String {
                format!("{self:?}")
            }
        }
    )*};
}

show_debug!(u8, i8, u16, i16, u32, i32, u64, i64, f16, bf16, f32, f64, String);

impl Show for bool {
    fn show(&self) -> String {
        u8::from(*self).to_string()
    }
}

impl<T: std::fmt::Debug> Show for num_complex::Complex<T> {
    fn show(&self) -> String {
        format!("{:?}{:+?}i", self.re, self.im)
    }
}

/// The first `keep` of every `block` values, for `outer` blocks.
fn cut<T: Clone>(values: &[T], outer: usize, block: usize, keep: usize) -> Vec<T> {
    (0..outer)
        .flat_map(|o| values[o * block..o * block + keep].iter().cloned())
        .collect()
}

// `raw_data` is little-endian; the typed vectors are viewed as bytes in memory order.
#[cfg(not(target_endian = "little"))]
compile_error!("the harness writes raw_data by viewing memory as little-endian bytes");

impl TensorData {
    /// The values as `T`; `None` unless `T` is the type [`TensorData::dtype`] names.
    pub fn values<T: TensorElement>(&self) -> Option<&[T]> {
        T::values(self)
    }

    /// The values as `T`, which `dispatch_element!` bound for [`TensorData::dtype`].
    fn typed<T: TensorElement>(&self) -> &[T] {
        T::values(self).expect("dispatch_element! binds the type of the variant")
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        dispatch_element!(self.dtype(),
            T => self.typed::<T>().len(),
            String => self.typed::<String>().len(),
        )
    }

    /// `true` when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// ONNX NonZero's zero test for element `i` (`nonzero_core::Element::is_nonzero`).
    pub fn is_nonzero(&self, i: usize) -> bool {
        dispatch_element!(self.dtype(),
            T => self.typed::<T>()[i].is_nonzero(),
            String => str_is_nonzero(&self.typed::<String>()[i]),
        )
    }

    /// The little-endian packed bytes (`raw_data`); `None` for strings.
    pub fn to_le_bytes(&self) -> Option<Vec<u8>> {
        dispatch_element!(self.dtype(),
            T => Some(bytemuck::cast_slice::<T, u8>(self.typed::<T>()).to_vec()),
            String => None,
        )
    }

    /// Decodes little-endian packed bytes of `dtype` (not strings).
    pub fn from_le_bytes(dtype: DataType, raw: &[u8]) -> Result<TensorData> {
        let size = dtype
            .size_of()
            .ok_or_else(|| anyhow!("{dtype} has no packed byte form"))?;
        ensure!(
            raw.len().is_multiple_of(size),
            "raw_data of {} bytes is not a whole number of {dtype} elements",
            raw.len()
        );
        Ok(dispatch_element!(
            dtype,
            T => TensorData::from(raw.chunks_exact(size).map(T::read_le).collect::<Vec<T>>()),
            String => unreachable!("size_of is None for strings"),
        ))
    }

    /// Bit-exact equality (NaN payloads and the sign of zero count; `PartialEq` would say NaN != NaN).
    pub fn same_bits(&self, other: &TensorData) -> bool {
        match (self, other) {
            (TensorData::String(a), TensorData::String(b)) => a == b,
            _ => self.dtype() == other.dtype() && self.to_le_bytes() == other.to_le_bytes(),
        }
    }

    /// The first `max` values, formatted for humans (`[1, 0, NaN, ...]`).
    pub fn preview(&self, max: usize) -> String {
        fn list<T: Show>(v: &[T], max: usize) -> String {
            let mut s = String::from("[");
            for (i, x) in v.iter().take(max).enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(&x.show());
            }
            if v.len() > max {
                let _ = write!(s, ", ... ({} more)", v.len() - max);
            }
            s.push(']');
            s
        }
        dispatch_element!(self.dtype(),
            T => list(self.typed::<T>(), max),
            String => list(self.typed::<String>(), max),
        )
    }
}

/// A tensor: row-major values and a shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: TensorData,
}

impl Tensor {
    /// A tensor; panics unless the shape's element count equals the number of values.
    pub fn new(shape: impl Into<Vec<usize>>, data: TensorData) -> Tensor {
        let shape = shape.into();
        let n: usize = shape.iter().product();
        assert_eq!(
            n,
            data.len(),
            "shape {shape:?} needs {n} values, got {}",
            data.len()
        );
        Tensor { shape, data }
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.data.dtype()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// `true` when there are no elements.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Same type, shape and bits.
    pub fn same_as(&self, other: &Tensor) -> bool {
        self.shape == other.shape && self.data.same_bits(&other.data)
    }

    /// The first `count` entries along `axis` (a padded static-mode output cut to its count).
    /// `None` when the axis does not exist or holds fewer than `count`.
    pub fn prefix_along(&self, axis: usize, count: usize) -> Option<Tensor> {
        let size = *self.shape.get(axis)?;
        if count > size {
            return None;
        }
        let inner: usize = self.shape[axis + 1..].iter().product();
        let outer: usize = self.shape[..axis].iter().product();
        let mut shape = self.shape.clone();
        shape[axis] = count;
        let data = dispatch_element!(self.dtype(),
            T => TensorData::from(cut(self.data.typed::<T>(), outer, size * inner, count * inner)),
            String => TensorData::from(cut(self.data.typed::<String>(), outer, size * inner, count * inner)),
        );
        Some(Tensor::new(shape, data))
    }

    /// `float[2,3] [1.0, ...]`-style summary.
    pub fn describe(&self, max: usize) -> String {
        format!(
            "{}{:?} {}",
            self.dtype(),
            self.shape,
            self.data.preview(max)
        )
    }

    /// ONNX NonZero of this tensor computed by `nonzero_core::reference` (the naive oracle):
    /// int64 `[rank, nnz]` (a scalar gives `[0, nnz]`, as the ONNX text says).
    pub fn nonzero_reference(&self) -> Tensor {
        let (nnz, coords) =
            nonzero_core::reference::nonzero_packed(&self.shape, |i| self.data.is_nonzero(i));
        Tensor::new(vec![self.shape.len(), nnz], TensorData::Int64(coords))
    }

    /// Encodes as a `TensorProto` named `name` (`raw_data` for numbers, `string_data` for strings).
    pub fn to_proto(&self, name: &str) -> TensorProto {
        let mut t = TensorProto {
            name: Some(name.to_string()),
            dims: self.shape.iter().map(|&d| d as i64).collect(),
            data_type: Some(self.dtype().onnx_code()),
            ..Default::default()
        };
        match &self.data {
            TensorData::String(v) => {
                t.string_data = v.iter().map(|s| s.as_bytes().to_vec()).collect()
            }
            data => t.raw_data = data.to_le_bytes().map(Into::into),
        }
        t
    }

    /// Decodes a `TensorProto` (raw_data or the typed fields; not external data).
    pub fn from_proto(t: &TensorProto) -> Result<Tensor> {
        let code = t.data_type.unwrap_or(0);
        let dtype = DataType::from_onnx_code(code)
            .ok_or_else(|| anyhow!("unsupported TensorProto data_type {code}"))?;
        ensure!(t.external_data.is_empty(), "external data is not supported");
        let shape = t
            .dims
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| anyhow!("negative dimension {d}")))
            .collect::<Result<Vec<_>>>()?;
        let n: usize = shape.iter().product();
        let data = if let Some(raw) = t.raw_data.as_ref().filter(|_| dtype != DataType::String) {
            TensorData::from_le_bytes(dtype, raw)?
        } else {
            let i32s = &t.int32_data;
            match dtype {
                DataType::Bool => TensorData::Bool(i32s.iter().map(|&x| x != 0).collect()),
                DataType::Uint8 => TensorData::Uint8(i32s.iter().map(|&x| x as u8).collect()),
                DataType::Int8 => TensorData::Int8(i32s.iter().map(|&x| x as i8).collect()),
                DataType::Uint16 => TensorData::Uint16(i32s.iter().map(|&x| x as u16).collect()),
                DataType::Int16 => TensorData::Int16(i32s.iter().map(|&x| x as i16).collect()),
                DataType::Int32 => TensorData::Int32(i32s.clone()),
                DataType::Float16 => {
                    TensorData::Float16(i32s.iter().map(|&x| f16::from_bits(x as u16)).collect())
                }
                DataType::Bfloat16 => {
                    TensorData::Bfloat16(i32s.iter().map(|&x| bf16::from_bits(x as u16)).collect())
                }
                DataType::Int64 => TensorData::Int64(t.int64_data.clone()),
                DataType::Uint32 => {
                    TensorData::Uint32(t.uint64_data.iter().map(|&x| x as u32).collect())
                }
                DataType::Uint64 => TensorData::Uint64(t.uint64_data.clone()),
                DataType::Float32 => TensorData::Float32(t.float_data.clone()),
                DataType::Float64 => TensorData::Float64(t.double_data.clone()),
                DataType::Complex64 => {
                    ensure!(
                        t.float_data.len().is_multiple_of(2),
                        "complex64 float_data needs (re, im) pairs"
                    );
                    TensorData::Complex64(
                        t.float_data
                            .chunks_exact(2)
                            .map(|c| Complex32::new(c[0], c[1]))
                            .collect(),
                    )
                }
                DataType::Complex128 => {
                    ensure!(
                        t.double_data.len().is_multiple_of(2),
                        "complex128 double_data needs (re, im) pairs"
                    );
                    TensorData::Complex128(
                        t.double_data
                            .chunks_exact(2)
                            .map(|c| Complex64::new(c[0], c[1]))
                            .collect(),
                    )
                }
                DataType::String => TensorData::String(
                    t.string_data
                        .iter()
                        .map(|b| String::from_utf8(b.clone()).context("string_data is not UTF-8"))
                        .collect::<Result<_>>()?,
                ),
            }
        };
        if data.len() != n {
            bail!(
                "tensor {:?}: shape {shape:?} needs {n} {dtype} values, found {}",
                t.name(),
                data.len()
            );
        }
        Ok(Tensor { shape, data })
    }

    /// Encodes to `TensorProto` bytes.
    pub fn encode(&self, name: &str) -> Vec<u8> {
        prost::Message::encode_to_vec(&self.to_proto(name))
    }

    /// Decodes `TensorProto` bytes; returns the tensor and its `name`.
    pub fn decode(bytes: &[u8]) -> Result<(String, Tensor)> {
        let t: TensorProto = prost::Message::decode(bytes).context("not a TensorProto")?;
        Ok((t.name().to_string(), Tensor::from_proto(&t)?))
    }
}
