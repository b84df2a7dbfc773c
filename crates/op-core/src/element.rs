//! What "zero" means for each element type: the one place that defines it.
//!
//! ONNX defines NonZero by `x != 0` (numpy's `nonzero`): `-0.0` is zero, NaN is non-zero, `false`
//! is zero, the empty string is zero, a complex number is zero when both parts are.
//! Floating-point tests are written on bit patterns (sign bit masked off), so they hold for
//! subnormals, infinities and every NaN payload, and compile to the same branch-free compare the
//! integer types get.

use crate::DataType;
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

/// A fixed-size element type NonZero accepts.
///
/// `is_nonzero` must be a pure function of the value's bits.
pub trait Element: Copy + Send + Sync + 'static {
    /// The ONNX data type.
    const DTYPE: DataType;
    /// `true` unless the value is zero in the sense of the ONNX text.
    fn is_nonzero(self) -> bool;
}

macro_rules! integer_elements {
    ($($t:ty => $dt:ident),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: DataType = DataType::$dt;
            #[inline(always)]
            fn is_nonzero(self) -> bool {
                self != 0
            }
        }
    )*};
}

integer_elements!(
    u8 => Uint8, i8 => Int8, u16 => Uint16, i16 => Int16,
    u32 => Uint32, i32 => Int32, u64 => Uint64, i64 => Int64,
);

impl Element for bool {
    const DTYPE: DataType = DataType::Bool;
    #[inline(always)]
    fn is_nonzero(self) -> bool {
        self
    }
}

/// Sign bit cleared: +0.0 and -0.0 both become 0, everything else (NaN included) stays non-zero.
const F16_MAGNITUDE: u16 = 0x7FFF;
const F32_MAGNITUDE: u32 = 0x7FFF_FFFF;
const F64_MAGNITUDE: u64 = 0x7FFF_FFFF_FFFF_FFFF;

impl DataType {
    /// The bits of one scalar component that make an element non-zero: an element is zero
    /// exactly when every component ANDed with this mask is 0. Components are the element itself,
    /// or the real and imaginary parts of a complex number (each [`DataType::component_size`]
    /// bytes). `None` for strings, which have no fixed bit pattern.
    ///
    /// This is the single definition of "zero" on bit patterns: the CPU tests below and the GPU
    /// kernel's shader parameters are both derived from it.
    pub const fn magnitude_mask(self) -> Option<u64> {
        Some(match self {
            DataType::Bool | DataType::Uint8 | DataType::Int8 => 0xFF,
            DataType::Uint16 | DataType::Int16 => 0xFFFF,
            DataType::Float16 | DataType::Bfloat16 => F16_MAGNITUDE as u64,
            DataType::Uint32 | DataType::Int32 => u32::MAX as u64,
            DataType::Float32 | DataType::Complex64 => F32_MAGNITUDE as u64,
            DataType::Uint64 | DataType::Int64 => u64::MAX,
            DataType::Float64 | DataType::Complex128 => F64_MAGNITUDE,
            DataType::String => return None,
        })
    }

    /// Bytes of one scalar component (half an element for complex types); `None` for strings.
    pub const fn component_size(self) -> Option<usize> {
        match (self, self.size_of()) {
            (DataType::Complex64 | DataType::Complex128, Some(size)) => Some(size / 2),
            (_, size) => size,
        }
    }
}

impl Element for f16 {
    const DTYPE: DataType = DataType::Float16;
    #[inline(always)]
    fn is_nonzero(self) -> bool {
        self.to_bits() & F16_MAGNITUDE != 0
    }
}

impl Element for bf16 {
    const DTYPE: DataType = DataType::Bfloat16;
    #[inline(always)]
    fn is_nonzero(self) -> bool {
        self.to_bits() & F16_MAGNITUDE != 0
    }
}

impl Element for f32 {
    const DTYPE: DataType = DataType::Float32;
    #[inline(always)]
    fn is_nonzero(self) -> bool {
        self.to_bits() & F32_MAGNITUDE != 0
    }
}

impl Element for f64 {
    const DTYPE: DataType = DataType::Float64;
    #[inline(always)]
    fn is_nonzero(self) -> bool {
        self.to_bits() & F64_MAGNITUDE != 0
    }
}

impl Element for Complex32 {
    const DTYPE: DataType = DataType::Complex64;
    #[inline(always)]
    fn is_nonzero(self) -> bool {
        (self.re.to_bits() | self.im.to_bits()) & F32_MAGNITUDE != 0
    }
}

impl Element for Complex64 {
    const DTYPE: DataType = DataType::Complex128;
    #[inline(always)]
    fn is_nonzero(self) -> bool {
        (self.re.to_bits() | self.im.to_bits()) & F64_MAGNITUDE != 0
    }
}

/// The zero test for strings: the empty string is zero.
#[inline]
pub fn str_is_nonzero(s: &str) -> bool {
    !s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_zero_follows_ieee_equality() {
        for v in [0.0f32, -0.0] {
            assert!(!v.is_nonzero());
        }
        for v in [
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
            1e-45,
            -1e-45,
        ] {
            assert!(v.is_nonzero(), "{v:e}");
            assert_eq!(v.is_nonzero(), v != 0.0);
        }
        assert!(!(-0.0f64).is_nonzero());
        assert!(f64::from_bits(1).is_nonzero()); // smallest subnormal
        assert!(f64::NAN.is_nonzero());
    }

    #[test]
    fn half_precision_bit_patterns() {
        for (bits, nonzero) in [
            (0x0000u16, false),
            (0x8000, false),
            (0x0001, true),
            (0x8001, true),
            (0x7C00, true),
            (0x7E00, true),
            (0xFC00, true),
        ] {
            assert_eq!(
                f16::from_bits(bits).is_nonzero(),
                nonzero,
                "f16 {bits:#06x}"
            );
            assert_eq!(
                bf16::from_bits(bits).is_nonzero(),
                nonzero,
                "bf16 {bits:#06x}"
            );
        }
    }

    #[test]
    fn complex_is_zero_only_when_both_parts_are() {
        assert!(!Complex32::new(0.0, -0.0).is_nonzero());
        assert!(Complex32::new(0.0, 1.0).is_nonzero());
        assert!(Complex32::new(f32::NAN, 0.0).is_nonzero());
        assert!(!Complex64::new(-0.0, -0.0).is_nonzero());
        assert!(Complex64::new(0.0, f64::from_bits(1)).is_nonzero());
    }

    #[test]
    fn magnitude_masks_agree_with_the_element_tests() {
        assert_eq!(DataType::Float16.magnitude_mask(), Some(0x7FFF));
        assert_eq!(DataType::Bfloat16.magnitude_mask(), Some(0x7FFF));
        assert_eq!(
            DataType::Float64.magnitude_mask(),
            Some(0x7FFF_FFFF_FFFF_FFFF)
        );
        assert_eq!(DataType::Complex64.component_size(), Some(4));
        assert_eq!(DataType::Complex128.component_size(), Some(8));
        assert_eq!(DataType::String.magnitude_mask(), None);
        // The sign bit alone is zero for floats and non-zero for integers, per the mask.
        let zero_by_mask = |dtype: DataType, bits: u64| bits & dtype.magnitude_mask().unwrap() == 0;
        assert_eq!(
            zero_by_mask(DataType::Float32, 0x8000_0000),
            !f32::from_bits(0x8000_0000).is_nonzero()
        );
        assert_eq!(
            zero_by_mask(DataType::Int32, 0x8000_0000),
            !i32::MIN.is_nonzero()
        );
        assert_eq!(
            zero_by_mask(DataType::Float16, 0x8000),
            !f16::from_bits(0x8000).is_nonzero()
        );
        assert_eq!(
            zero_by_mask(DataType::Float16, 0x0001),
            !f16::from_bits(0x0001).is_nonzero()
        );
        assert_eq!(
            zero_by_mask(DataType::Float64, 1 << 63),
            !(-0.0f64).is_nonzero()
        );
        assert_eq!(
            zero_by_mask(DataType::Uint64, 1 << 63),
            !(1u64 << 63).is_nonzero()
        );
    }

    #[test]
    fn integers_and_strings() {
        assert!(
            !0i8.is_nonzero() && (-1i8).is_nonzero() && i64::MIN.is_nonzero() && !0u64.is_nonzero()
        );
        assert!(!false.is_nonzero() && true.is_nonzero());
        assert!(!str_is_nonzero("") && str_is_nonzero(" ") && str_is_nonzero("\0"));
    }
}
