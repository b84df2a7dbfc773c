//! Concrete values: the tensors a graph computes from its constants and its fixed shapes alone
//! (`Shape -> Gather -> Cast -> Div -> Ceil -> ... -> Pad`), evaluated as ONNX Runtime would.
//!
//! Inference ([`crate::infer`]) asks for a node's values when every input is one; the static
//! target writes the values it is given as initializers. Only small tensors are evaluated
//! ([`MAX_CONST_ELEMENTS`]): shape arithmetic is short, and an anchor grid a few thousand long.
//! Element types: the integers up to 32 bits and int64, bool, float and double. Anything else
//! (float16, strings, uint64) is never a value here, so never folded.

mod elementwise;
mod eval;
mod layout;

pub use eval::evaluate;

use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::TensorProto;

/// The most elements a value has (larger tensors stay computed at run time).
pub const MAX_CONST_ELEMENTS: usize = 1 << 16;

/// The elements of a value, row-major. Every integer type and bool is held as i64, within the
/// range of its type ([`Const::new`] wraps into it, as a C cast does).
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    Int(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Data {
    pub fn len(&self) -> usize {
        match self {
            Data::Int(v) => v.len(),
            Data::F32(v) => v.len(),
            Data::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements at `indices`, in that order (every layout op is one such pick).
    pub fn pick(&self, indices: &[usize]) -> Data {
        match self {
            Data::Int(v) => Data::Int(indices.iter().map(|&i| v[i]).collect()),
            Data::F32(v) => Data::F32(indices.iter().map(|&i| v[i]).collect()),
            Data::F64(v) => Data::F64(indices.iter().map(|&i| v[i]).collect()),
        }
    }

    /// Each element as f64 (exact for every int32 and float; int64 past 2^53 rounds).
    pub fn as_f64(&self) -> Vec<f64> {
        match self {
            Data::Int(v) => v.iter().map(|&x| x as f64).collect(),
            Data::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::F64(v) => v.clone(),
        }
    }
}

/// One tensor's value: element type (ONNX `DataType`), shape and elements.
#[derive(Debug, Clone, PartialEq)]
pub struct Const {
    pub elem_type: i32,
    pub dims: Vec<usize>,
    pub data: Data,
}

/// The kind of `elem_type`'s elements: `Some(bits, signed)` for integers, bool as 1 bit.
pub(crate) fn int_kind(elem_type: i32) -> Option<(u32, bool)> {
    Some(match DataType::try_from(elem_type).ok()? {
        DataType::Bool => (1, false),
        DataType::Int8 => (8, true),
        DataType::Uint8 => (8, false),
        DataType::Int16 => (16, true),
        DataType::Uint16 => (16, false),
        DataType::Int32 => (32, true),
        DataType::Uint32 => (32, false),
        DataType::Int64 => (64, true),
        _ => return None,
    })
}

/// `v` in the range of an integer type of `bits` (two's complement wrap, as C casts do);
/// bool is `v != 0`.
pub(crate) fn wrap(v: i64, (bits, signed): (u32, bool)) -> i64 {
    match (bits, signed) {
        (1, _) => i64::from(v != 0),
        (64, _) => v,
        (b, true) => (v << (64 - b)) >> (64 - b),
        (b, false) => v & ((1i64 << b) - 1),
    }
}

impl Const {
    /// A value of `elem_type` with `data` of the matching kind, `None` when they disagree,
    /// the element count is not the shape's, or it is past [`MAX_CONST_ELEMENTS`].
    pub fn new(elem_type: i32, dims: Vec<usize>, data: Data) -> Option<Const> {
        if element_count(&dims)? != data.len() {
            return None;
        }
        let data = match (data, DataType::try_from(elem_type).ok()?) {
            (Data::F32(v), DataType::Float) => Data::F32(v),
            (Data::F64(v), DataType::Double) => Data::F64(v),
            (Data::Int(v), _) => {
                let kind = int_kind(elem_type)?;
                Data::Int(v.into_iter().map(|x| wrap(x, kind)).collect())
            }
            _ => return None,
        };
        Some(Const {
            elem_type,
            dims,
            data,
        })
    }

    /// A 1-D int64 tensor (what Shape gives).
    pub fn int64s(values: Vec<i64>) -> Option<Const> {
        let n = values.len();
        Const::new(DataType::Int64 as i32, vec![n], Data::Int(values))
    }

    /// The integer tensor `info` whose values `sizes` are all numbers (what the symbolic
    /// inference proves of shape arithmetic), when its shape is fixed and holds them.
    pub fn from_sizes(
        info: crate::infer::TensorInfo,
        sizes: &[crate::infer::Dim],
    ) -> Option<Const> {
        let elem_type = info.elem_type?;
        let integer = [DataType::Int64 as i32, DataType::Int32 as i32].contains(&elem_type);
        let dims: Vec<usize> = info
            .dims?
            .iter()
            .map(|d| usize::try_from(d.as_static()?).ok())
            .collect::<Option<_>>()?;
        let values: Vec<i64> = sizes.iter().map(|d| d.as_static()).collect::<Option<_>>()?;
        integer.then_some(())?;
        Const::new(elem_type, dims, Data::Int(values))
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The integer elements, for an integer or bool tensor.
    pub fn ints(&self) -> Option<&[i64]> {
        match &self.data {
            Data::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The elements as integers: integer tensors as they are, float ones when every element is
    /// an integer below 2^53 (sizes computed in float, as exporters do).
    pub fn integral(&self) -> Option<Vec<i64>> {
        match &self.data {
            Data::Int(v) => Some(v.clone()),
            data => data
                .as_f64()
                .into_iter()
                .map(|f| {
                    (f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15).then_some(f as i64)
                })
                .collect(),
        }
    }

    /// The value a TensorProto holds, when it is inline, of a kind held here, and small.
    pub fn from_tensor(t: &TensorProto) -> Option<Const> {
        if !t.external_data.is_empty() || t.data_location == Some(1) {
            return None;
        }
        let elem_type = t.data_type?;
        let dims: Vec<usize> = t
            .dims
            .iter()
            .map(|&d| usize::try_from(d).ok())
            .collect::<Option<_>>()?;
        let count = element_count(&dims)?;
        let raw = t.raw_data.as_deref();
        let data = match DataType::try_from(elem_type).ok()? {
            DataType::Float => Data::F32(match raw {
                Some(r) => le_chunks(r, f32::from_le_bytes),
                None => t.float_data.clone(),
            }),
            DataType::Double => Data::F64(match raw {
                Some(r) => le_chunks(r, f64::from_le_bytes),
                None => t.double_data.clone(),
            }),
            DataType::Int64 => Data::Int(match raw {
                Some(r) => le_chunks(r, i64::from_le_bytes),
                None => t.int64_data.clone(),
            }),
            DataType::Uint32 => Data::Int(match raw {
                Some(r) => le_chunks(r, |b: [u8; 4]| i64::from(u32::from_le_bytes(b))),
                None => t.uint64_data.iter().map(|&v| v as i64).collect(),
            }),
            _ => {
                let (bits, signed) = int_kind(elem_type)?;
                let width = (bits as usize).div_ceil(8);
                Data::Int(match raw {
                    Some(r) if r.len() == count * width => r
                        .chunks_exact(width)
                        .map(|c| {
                            let mut b = [0u8; 8];
                            b[..width].copy_from_slice(c);
                            wrap(i64::from_le_bytes(b), (bits, signed))
                        })
                        .collect(),
                    Some(_) => return None,
                    // int32_data holds every type of 32 bits and less, bool included.
                    None => t.int32_data.iter().map(|&v| i64::from(v)).collect(),
                })
            }
        };
        Const::new(elem_type, dims, data)
    }

    /// The value as an initializer named `name` (raw little-endian data).
    pub fn to_tensor(&self, name: &str) -> TensorProto {
        let raw: Vec<u8> = match &self.data {
            Data::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Data::Int(v) => {
                let (bits, _) = int_kind(self.elem_type).unwrap_or((64, true));
                let width = (bits as usize).div_ceil(8);
                v.iter()
                    .flat_map(|x| x.to_le_bytes()[..width].to_vec())
                    .collect()
            }
        };
        TensorProto {
            name: Some(name.to_string()),
            data_type: Some(self.elem_type),
            dims: self.dims.iter().map(|&d| d as i64).collect(),
            raw_data: Some(raw.into()),
            ..Default::default()
        }
    }
}

/// Little-endian elements of `N` bytes each (a trailing partial element is dropped, and then
/// the count check of [`Const::new`] refuses the tensor).
fn le_chunks<const N: usize, T>(raw: &[u8], read: impl Fn([u8; N]) -> T) -> Vec<T> {
    raw.chunks_exact(N)
        .map(|c| read(c.try_into().expect("chunks of N")))
        .collect()
}

/// Row-major strides of `dims`.
/// The element count of `dims`, `None` past [`MAX_CONST_ELEMENTS`]. The product of the non-zero
/// sizes is bounded too, so that an empty value's strides (`[0, 2^40, 2^40]`) stay in range.
pub(crate) fn element_count(dims: &[usize]) -> Option<usize> {
    let nonzero = dims
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= MAX_CONST_ELEMENTS)?;
    Some(if dims.contains(&0) { 0 } else { nonzero })
}

/// Row-major strides of `dims`; in range for any `dims` that [`element_count`] accepts.
pub(crate) fn strides(dims: &[usize]) -> Vec<usize> {
    let mut s = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

#[cfg(test)]
mod tests;
