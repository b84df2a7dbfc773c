//! Element kinds: how the shader reads one element from `array<u32>` and tests it for zero.

use crate::GpuError;
use nonzero_core::DataType;

/// One compute pipeline set exists per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementKind {
    /// 1 byte, 4 per word (bool, u8, i8).
    Byte,
    /// 2 bytes, 2 per word (u16, i16, f16 and bf16 with the sign masked off).
    Half,
    /// 4 bytes (u32, i32, f32 with the sign masked off).
    Word,
    /// 8 bytes as a lo/hi word pair (u64, i64, f64 with the sign masked off).
    Double,
    /// Two f32 words; zero when both are ±0.
    Complex64,
    /// Two f64 word pairs; zero when both are ±0.
    Complex128,
}

impl ElementKind {
    /// All kinds, in the order of the context's pipeline cache.
    pub const ALL: [ElementKind; 6] = [
        ElementKind::Byte,
        ElementKind::Half,
        ElementKind::Word,
        ElementKind::Double,
        ElementKind::Complex64,
        ElementKind::Complex128,
    ];

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            ElementKind::Byte => 1,
            ElementKind::Half => 2,
            ElementKind::Word => 4,
            ElementKind::Double | ElementKind::Complex64 => 8,
            ElementKind::Complex128 => 16,
        }
    }

    pub(crate) fn load_body(self) -> &'static str {
        match self {
            ElementKind::Byte => "    let w = input[e >> 2u];\n    return ((w >> ((e & 3u) * 8u)) & 0xFFu) != 0u;",
            ElementKind::Half => {
                "    let w = input[e >> 1u];\n    return ((w >> ((e & 1u) * 16u)) & p.mask_lo) != 0u;"
            }
            ElementKind::Word => "    return (input[e] & p.mask_lo) != 0u;",
            ElementKind::Double => "    return (input[2u * e] | (input[2u * e + 1u] & p.mask_hi)) != 0u;",
            ElementKind::Complex64 => "    return ((input[2u * e] | input[2u * e + 1u]) & 0x7FFFFFFFu) != 0u;",
            ElementKind::Complex128 => {
                "    let b = 4u * e;\n    return ((input[b] | input[b + 2u]) | ((input[b + 1u] | input[b + 3u]) & 0x7FFFFFFFu)) != 0u;"
            }
        }
    }
}

/// How one data type is tested: its kind and the magnitude masks of its (low, high) words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TypeInfo {
    pub kind: ElementKind,
    pub mask_lo: u32,
    pub mask_hi: u32,
}

pub(crate) fn type_info(dtype: DataType) -> Result<TypeInfo, GpuError> {
    let (kind, mask_lo, mask_hi) = match dtype {
        DataType::Bool | DataType::Uint8 | DataType::Int8 => (ElementKind::Byte, 0xFF, 0),
        DataType::Uint16 | DataType::Int16 => (ElementKind::Half, 0xFFFF, 0),
        DataType::Float16 | DataType::Bfloat16 => (ElementKind::Half, 0x7FFF, 0),
        DataType::Uint32 | DataType::Int32 => (ElementKind::Word, u32::MAX, 0),
        DataType::Float32 => (ElementKind::Word, 0x7FFF_FFFF, 0),
        DataType::Uint64 | DataType::Int64 => (ElementKind::Double, u32::MAX, u32::MAX),
        DataType::Float64 => (ElementKind::Double, u32::MAX, 0x7FFF_FFFF),
        DataType::Complex64 => (ElementKind::Complex64, 0x7FFF_FFFF, 0),
        DataType::Complex128 => (ElementKind::Complex128, u32::MAX, 0x7FFF_FFFF),
        DataType::String => return Err(GpuError::UnsupportedType(dtype)),
    };
    Ok(TypeInfo {
        kind,
        mask_lo,
        mask_hi,
    })
}
