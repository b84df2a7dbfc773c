//! Element data types of NonZero's input, with ONNX's `TensorProto.DataType` codes.

use std::fmt;

/// Every element type that ONNX NonZero-13 accepts (`T` in the operator schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataType {
    Bool,
    Uint8,
    Int8,
    Uint16,
    Int16,
    Uint32,
    Int32,
    Uint64,
    Int64,
    Float16,
    Bfloat16,
    Float32,
    Float64,
    Complex64,
    Complex128,
    String,
}

impl DataType {
    /// All types, in ONNX code order.
    pub const ALL: [DataType; 16] = [
        DataType::Float32,
        DataType::Uint8,
        DataType::Int8,
        DataType::Uint16,
        DataType::Int16,
        DataType::Int32,
        DataType::Int64,
        DataType::String,
        DataType::Bool,
        DataType::Float16,
        DataType::Float64,
        DataType::Uint32,
        DataType::Uint64,
        DataType::Complex64,
        DataType::Complex128,
        DataType::Bfloat16,
    ];

    /// Every type with a fixed element size (all but strings): what a packed buffer, the GPU
    /// kernel and DirectML-style calls can hold.
    pub const FIXED_SIZE: [DataType; 15] = [
        DataType::Bool,
        DataType::Uint8,
        DataType::Int8,
        DataType::Uint16,
        DataType::Int16,
        DataType::Uint32,
        DataType::Int32,
        DataType::Uint64,
        DataType::Int64,
        DataType::Float16,
        DataType::Bfloat16,
        DataType::Float32,
        DataType::Float64,
        DataType::Complex64,
        DataType::Complex128,
    ];

    /// The `TensorProto.DataType` code (also ONNX Runtime's `ONNXTensorElementDataType`).
    pub const fn onnx_code(self) -> i32 {
        match self {
            DataType::Float32 => 1,
            DataType::Uint8 => 2,
            DataType::Int8 => 3,
            DataType::Uint16 => 4,
            DataType::Int16 => 5,
            DataType::Int32 => 6,
            DataType::Int64 => 7,
            DataType::String => 8,
            DataType::Bool => 9,
            DataType::Float16 => 10,
            DataType::Float64 => 11,
            DataType::Uint32 => 12,
            DataType::Uint64 => 13,
            DataType::Complex64 => 14,
            DataType::Complex128 => 15,
            DataType::Bfloat16 => 16,
        }
    }

    /// The type for a `TensorProto.DataType` code, if NonZero accepts it.
    pub fn from_onnx_code(code: i32) -> Option<DataType> {
        DataType::ALL.into_iter().find(|t| t.onnx_code() == code)
    }

    /// Bytes per element in a packed buffer; `None` for strings (variable length).
    pub const fn size_of(self) -> Option<usize> {
        match self {
            DataType::Bool | DataType::Uint8 | DataType::Int8 => Some(1),
            DataType::Uint16 | DataType::Int16 | DataType::Float16 | DataType::Bfloat16 => Some(2),
            DataType::Uint32 | DataType::Int32 | DataType::Float32 => Some(4),
            DataType::Uint64 | DataType::Int64 | DataType::Float64 | DataType::Complex64 => Some(8),
            DataType::Complex128 => Some(16),
            DataType::String => None,
        }
    }

    /// The ONNX spelling, as in `tensor(float)`.
    pub const fn onnx_name(self) -> &'static str {
        match self {
            DataType::Bool => "bool",
            DataType::Uint8 => "uint8",
            DataType::Int8 => "int8",
            DataType::Uint16 => "uint16",
            DataType::Int16 => "int16",
            DataType::Uint32 => "uint32",
            DataType::Int32 => "int32",
            DataType::Uint64 => "uint64",
            DataType::Int64 => "int64",
            DataType::Float16 => "float16",
            DataType::Bfloat16 => "bfloat16",
            DataType::Float32 => "float",
            DataType::Float64 => "double",
            DataType::Complex64 => "complex64",
            DataType::Complex128 => "complex128",
            DataType::String => "string",
        }
    }

    /// Parses the ONNX spelling (`float`, `double`, ...) or the numpy-style one (`float32`, `float64`).
    pub fn from_name(name: &str) -> Option<DataType> {
        match name {
            "float32" | "f32" => Some(DataType::Float32),
            "float64" | "f64" => Some(DataType::Float64),
            _ => DataType::ALL.into_iter().find(|t| t.onnx_name() == name),
        }
    }

    /// The opset in which ONNX NonZero started accepting this type (bfloat16 came with opset 13).
    pub const fn since_opset(self) -> i64 {
        match self {
            DataType::Bfloat16 => 13,
            _ => 9,
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.onnx_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_distinct() {
        for t in DataType::ALL {
            assert_eq!(DataType::from_onnx_code(t.onnx_code()), Some(t));
            assert_eq!(DataType::from_name(t.onnx_name()), Some(t));
        }
        assert_eq!(DataType::from_onnx_code(0), None);
        assert_eq!(DataType::from_onnx_code(17), None); // float8e4m3fn: not a NonZero type
        let mut codes: Vec<i32> = DataType::ALL.iter().map(|t| t.onnx_code()).collect();
        codes.sort();
        assert_eq!(codes, (1..=16).collect::<Vec<_>>());
        assert!(DataType::FIXED_SIZE.iter().all(|t| t.size_of().is_some()));
        assert_eq!(
            DataType::FIXED_SIZE.len(),
            DataType::ALL
                .iter()
                .filter(|t| t.size_of().is_some())
                .count()
        );
    }
}
