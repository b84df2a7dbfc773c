//! Element kinds: how the shader reads one element from `array<u32>` and tests it for zero.
//!
//! Which bits make an element non-zero is not written here: the masks come from
//! [`DataType::magnitude_mask`], op-core's single definition, split into the (low, high) words
//! the shader reads.

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

    /// The WGSL function `is_nz(e: u32) -> bool`: element `e` of `input` is non-zero under the
    /// masks `p.mask_lo` / `p.mask_hi` of the parameters ([`TypeInfo`]).
    pub(crate) fn is_nz_wgsl(self) -> &'static str {
        match self {
            ElementKind::Byte => {
                "fn is_nz(e: u32) -> bool {
    let w = input[e >> 2u];
    return ((w >> ((e & 3u) * 8u)) & p.mask_lo) != 0u;
}"
            }
            ElementKind::Half => {
                "fn is_nz(e: u32) -> bool {
    let w = input[e >> 1u];
    return ((w >> ((e & 1u) * 16u)) & p.mask_lo) != 0u;
}"
            }
            ElementKind::Word => {
                "fn is_nz(e: u32) -> bool {
    return (input[e] & p.mask_lo) != 0u;
}"
            }
            ElementKind::Double => {
                "fn is_nz(e: u32) -> bool {
    return ((input[2u * e] & p.mask_lo) | (input[2u * e + 1u] & p.mask_hi)) != 0u;
}"
            }
            // Two 4-byte components, each under the component mask.
            ElementKind::Complex64 => {
                "fn is_nz(e: u32) -> bool {
    return ((input[2u * e] | input[2u * e + 1u]) & p.mask_lo) != 0u;
}"
            }
            // Two 8-byte components: words (lo, hi, lo, hi).
            ElementKind::Complex128 => {
                "fn is_nz(e: u32) -> bool {
    let b = 4u * e;
    return (((input[b] | input[b + 2u]) & p.mask_lo) | ((input[b + 1u] | input[b + 3u]) & p.mask_hi)) != 0u;
}"
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
    let unsupported = || GpuError::UnsupportedType(dtype);
    let kind = match dtype {
        DataType::Bool | DataType::Uint8 | DataType::Int8 => ElementKind::Byte,
        DataType::Uint16 | DataType::Int16 | DataType::Float16 | DataType::Bfloat16 => {
            ElementKind::Half
        }
        DataType::Uint32 | DataType::Int32 | DataType::Float32 => ElementKind::Word,
        DataType::Uint64 | DataType::Int64 | DataType::Float64 => ElementKind::Double,
        DataType::Complex64 => ElementKind::Complex64,
        DataType::Complex128 => ElementKind::Complex128,
        DataType::String => return Err(unsupported()),
    };
    // The mask of one component (the whole element, or one part of a complex number). Up to 4
    // bytes it is the mask of the one word the shader reads (`mask_hi` unused); an 8-byte
    // component is a (low, high) word pair.
    let mask = dtype.magnitude_mask().ok_or_else(unsupported)?;
    let (mask_lo, mask_hi) = match dtype.component_size().ok_or_else(unsupported)? {
        1 | 2 | 4 => (mask as u32, 0),
        8 => (mask as u32, (mask >> 32) as u32),
        _ => return Err(unsupported()),
    };
    Ok(TypeInfo {
        kind,
        mask_lo,
        mask_hi,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every fixed-size type maps to a kind of its size, with masks that are op-core's.
    #[test]
    fn masks_come_from_op_core() {
        for dtype in DataType::FIXED_SIZE {
            let info = type_info(dtype).unwrap();
            assert_eq!(Some(info.kind.size() as usize), dtype.size_of(), "{dtype}");
            let mask = dtype.magnitude_mask().unwrap();
            let words = u64::from(info.mask_lo) | u64::from(info.mask_hi) << 32;
            assert_eq!(words, mask, "{dtype}");
        }
        assert!(matches!(
            type_info(DataType::String),
            Err(GpuError::UnsupportedType(DataType::String))
        ));
    }

    /// The masks the shader gets, spelled out: the sign bit of floats is masked off.
    #[test]
    fn masks_of_the_float_types() {
        let masks = |dtype| {
            let i = type_info(dtype).unwrap();
            (i.mask_lo, i.mask_hi)
        };
        assert_eq!(masks(DataType::Bool), (0xFF, 0));
        assert_eq!(masks(DataType::Float16), (0x7FFF, 0));
        assert_eq!(masks(DataType::Bfloat16), (0x7FFF, 0));
        assert_eq!(masks(DataType::Int16), (0xFFFF, 0));
        assert_eq!(masks(DataType::Float32), (0x7FFF_FFFF, 0));
        assert_eq!(masks(DataType::Int64), (u32::MAX, u32::MAX));
        assert_eq!(masks(DataType::Float64), (u32::MAX, 0x7FFF_FFFF));
        assert_eq!(masks(DataType::Complex64), (0x7FFF_FFFF, 0));
        assert_eq!(masks(DataType::Complex128), (u32::MAX, 0x7FFF_FFFF));
    }
}
