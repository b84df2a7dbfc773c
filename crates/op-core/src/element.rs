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

mod sealed {
    /// Only the types listed in this file are elements: the kernel, the byte views and the
    /// dispatch below assume exactly these fifteen.
    pub trait Sealed {}
}

/// A fixed-size element type NonZero accepts: one per [`DataType`] but strings.
///
/// `NoUninit` (no padding) makes `bytemuck::cast_slice::<T, u8>` safe for every element, so
/// byte views of typed buffers need no `unsafe`. `is_nonzero` is a pure function of the bits.
pub trait Element: sealed::Sealed + bytemuck::NoUninit + PartialEq + Send + Sync {
    /// The ONNX data type.
    const DTYPE: DataType;
    /// `true` unless the value is zero in the sense of the ONNX text.
    fn is_nonzero(self) -> bool;
    /// Reads one element from exactly `size_of::<Self>()` little-endian bytes (any non-zero byte
    /// is `true` for bool). Panics on another length.
    fn read_le(bytes: &[u8]) -> Self;
}

/// Evaluates `$body` with the type alias `$T` naming the element type of `$dtype` (a
/// [`DataType`](crate::DataType) value); `String => $string` is the arm for strings, which have
/// no element type. This is the one bridge from the run-time type to the generic code: every
/// per-type dispatch in the workspace goes through it.
///
/// ```
/// use nonzero_core::{dispatch_element, DataType, Element};
/// fn zero_is_zero<T: Element>() -> bool { !T::read_le(&vec![0; std::mem::size_of::<T>()]).is_nonzero() }
/// let all = DataType::ALL.iter().all(|&t| dispatch_element!(t, T => zero_is_zero::<T>(), String => true));
/// assert!(all);
/// ```
///
/// With `bool as u8` first, bool's arm binds `u8`: the mode for byte buffers, where a bool is a
/// byte and any non-zero byte is `true` (`u8`'s zero test), so no byte value is invalid. Every
/// `$T` of this mode is then `bytemuck::Pod`:
///
/// ```
/// use nonzero_core::{dispatch_element, DataType, Element};
/// let bytes = [0u8, 2, 1, 0];
/// let nnz = dispatch_element!(DataType::Bool, bool as u8, T => {
///     bytemuck::cast_slice::<u8, T>(&bytes).iter().filter(|x| x.is_nonzero()).count()
/// }, String => 0);
/// assert_eq!(nnz, 2);
/// ```
#[macro_export]
macro_rules! dispatch_element {
    // The arms first: `@arms` would be a parse error as the other rules' `$dtype:expr`.
    (@arms $dtype:expr, $bool:ty, $T:ident => $body:expr, $string:expr) => {
        match $dtype {
            $crate::DataType::Bool => {
                type $T = $bool;
                $body
            }
            $crate::DataType::Uint8 => {
                type $T = u8;
                $body
            }
            $crate::DataType::Int8 => {
                type $T = i8;
                $body
            }
            $crate::DataType::Uint16 => {
                type $T = u16;
                $body
            }
            $crate::DataType::Int16 => {
                type $T = i16;
                $body
            }
            $crate::DataType::Uint32 => {
                type $T = u32;
                $body
            }
            $crate::DataType::Int32 => {
                type $T = i32;
                $body
            }
            $crate::DataType::Uint64 => {
                type $T = u64;
                $body
            }
            $crate::DataType::Int64 => {
                type $T = i64;
                $body
            }
            $crate::DataType::Float16 => {
                type $T = $crate::f16;
                $body
            }
            $crate::DataType::Bfloat16 => {
                type $T = $crate::bf16;
                $body
            }
            $crate::DataType::Float32 => {
                type $T = f32;
                $body
            }
            $crate::DataType::Float64 => {
                type $T = f64;
                $body
            }
            $crate::DataType::Complex64 => {
                type $T = $crate::Complex32;
                $body
            }
            $crate::DataType::Complex128 => {
                type $T = $crate::Complex64;
                $body
            }
            $crate::DataType::String => $string,
        }
    };
    ($dtype:expr, bool as u8, $T:ident => $body:expr, String => $string:expr $(,)?) => {
        $crate::dispatch_element!(@arms $dtype, u8, $T => $body, $string)
    };
    ($dtype:expr, $T:ident => $body:expr, String => $string:expr $(,)?) => {
        $crate::dispatch_element!(@arms $dtype, bool, $T => $body, $string)
    };
}

impl DataType {
    /// The bits of one scalar component that make an element non-zero: an element is zero
    /// exactly when every component ANDed with this mask is 0. Components are the element itself,
    /// or the real and imaginary parts of a complex number (each [`DataType::component_size`]
    /// bytes). `None` for strings, which have no fixed bit pattern.
    ///
    /// This is the single definition of "zero" on bit patterns: the [`Element`] impls below and
    /// the GPU kernel's shader parameters are both derived from it. Floats have the sign bit
    /// cleared, so +0.0 and -0.0 both become 0 and everything else (NaN included) does not.
    pub const fn magnitude_mask(self) -> Option<u64> {
        Some(match self {
            DataType::Bool | DataType::Uint8 | DataType::Int8 => 0xFF,
            DataType::Uint16 | DataType::Int16 => 0xFFFF,
            DataType::Float16 | DataType::Bfloat16 => 0x7FFF,
            DataType::Uint32 | DataType::Int32 => 0xFFFF_FFFF,
            DataType::Float32 | DataType::Complex64 => 0x7FFF_FFFF,
            DataType::Uint64 | DataType::Int64 => u64::MAX,
            DataType::Float64 | DataType::Complex128 => 0x7FFF_FFFF_FFFF_FFFF,
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

/// `DataType::magnitude_mask` as a constant of a fixed-size type.
const fn magnitude(dtype: DataType) -> u64 {
    match dtype.magnitude_mask() {
        Some(mask) => mask,
        None => panic!("strings have no magnitude mask"),
    }
}

/// Every scalar type: zero when the bits under the type's magnitude mask are (for integers the
/// mask is every bit, so this is `x != 0`; for floats the sign bit is off, so -0.0 is zero).
macro_rules! scalar_elements {
    ($($t:ty => $dt:ident, $bits:ty, $to_bits:expr),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DataType = DataType::$dt;
            #[inline(always)]
            fn is_nonzero(self) -> bool {
                const MASK: $bits = magnitude(DataType::$dt) as $bits;
                let to_bits: fn($t) -> $bits = $to_bits;
                to_bits(self) & MASK != 0
            }
            fn read_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one element's bytes"))
            }
        }
    )*};
}

scalar_elements!(
    u8 => Uint8, u8, |x| x,
    i8 => Int8, u8, |x| x as u8,
    u16 => Uint16, u16, |x| x,
    i16 => Int16, u16, |x| x as u16,
    u32 => Uint32, u32, |x| x,
    i32 => Int32, u32, |x| x as u32,
    u64 => Uint64, u64, |x| x,
    i64 => Int64, u64, |x| x as u64,
    f16 => Float16, u16, |x| x.to_bits(),
    bf16 => Bfloat16, u16, |x| x.to_bits(),
    f32 => Float32, u32, |x| x.to_bits(),
    f64 => Float64, u64, |x| x.to_bits(),
);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DataType = DataType::Bool;
    #[inline(always)]
    fn is_nonzero(self) -> bool {
        self
    }
    fn read_le(bytes: &[u8]) -> Self {
        let [byte] = bytes.try_into().expect("one byte");
        byte != 0
    }
}

/// Complex numbers: zero when both parts are (each part under the mask of its scalar type).
macro_rules! complex_elements {
    ($($t:ty => $dt:ident, $part:ty, $bits:ty),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DataType = DataType::$dt;
            #[inline(always)]
            fn is_nonzero(self) -> bool {
                const MASK: $bits = magnitude(DataType::$dt) as $bits;
                (self.re.to_bits() | self.im.to_bits()) & MASK != 0
            }
            fn read_le(bytes: &[u8]) -> Self {
                let (re, im) = bytes.split_at(std::mem::size_of::<$part>());
                <$t>::new(
                    <$part>::from_le_bytes(re.try_into().expect("the real part's bytes")),
                    <$part>::from_le_bytes(im.try_into().expect("the imaginary part's bytes")),
                )
            }
        }
    )*};
}

complex_elements!(
    Complex32 => Complex64, f32, u32,
    Complex64 => Complex128, f64, u64,
);

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
    fn dispatch_reaches_the_type_of_every_dtype() {
        for dtype in DataType::ALL {
            let (seen, size) = dispatch_element!(
                dtype,
                T => (T::DTYPE, std::mem::size_of::<T>()),
                String => (DataType::String, 0)
            );
            assert_eq!(seen, dtype);
            assert_eq!(dtype.size_of().unwrap_or(0), size);
        }
        assert_eq!(f32::read_le(&1.5f32.to_le_bytes()), 1.5);
        assert!(bool::read_le(&[2]));
        assert_eq!(
            Complex32::read_le(&[0, 0, 0x80, 0x3F, 0, 0, 0, 0xC0]),
            Complex32::new(1.0, -2.0)
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
