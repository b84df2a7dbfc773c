//! DirectML's DML_OPERATOR_NONZERO_COORDINATES: a UINT32 count plus an M x N UINT32 coordinates
//! tensor whose N columns are the input's last N dimensions (right-aligned).
//!
//! The rules it validates (dimension counts per feature level, data types, sizes of the outputs)
//! are in [`validate`]; each broken rule has its own [`DmlError`].

mod error;
mod validate;

pub use error::DmlError;
pub use validate::{validate, Validated};

use crate::data::NumericSlice;
use crate::kernel::{Counted, Executor};
use crate::DataType;
use std::fmt;

/// DML_TENSOR_DATA_TYPE values a description can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DmlDataType {
    Float32,
    Float16,
    Uint32,
    Uint16,
    Uint8,
    Int32,
    Int16,
    Int8,
    Float64,
    Uint64,
    Int64,
}

impl DmlDataType {
    /// The equivalent ONNX element type.
    pub fn to_data_type(self) -> DataType {
        match self {
            DmlDataType::Float32 => DataType::Float32,
            DmlDataType::Float16 => DataType::Float16,
            DmlDataType::Uint32 => DataType::Uint32,
            DmlDataType::Uint16 => DataType::Uint16,
            DmlDataType::Uint8 => DataType::Uint8,
            DmlDataType::Int32 => DataType::Int32,
            DmlDataType::Int16 => DataType::Int16,
            DmlDataType::Int8 => DataType::Int8,
            DmlDataType::Float64 => DataType::Float64,
            DmlDataType::Uint64 => DataType::Uint64,
            DmlDataType::Int64 => DataType::Int64,
        }
    }
}

impl fmt::Display for DmlDataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            DmlDataType::Float32 => "FLOAT32",
            DmlDataType::Float16 => "FLOAT16",
            DmlDataType::Uint32 => "UINT32",
            DmlDataType::Uint16 => "UINT16",
            DmlDataType::Uint8 => "UINT8",
            DmlDataType::Int32 => "INT32",
            DmlDataType::Int16 => "INT16",
            DmlDataType::Int8 => "INT8",
            DmlDataType::Float64 => "FLOAT64",
            DmlDataType::Uint64 => "UINT64",
            DmlDataType::Int64 => "INT64",
        };
        f.write_str(name)
    }
}

/// A DML feature level, `DML_FEATURE_LEVEL_<major>_<minor>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FeatureLevel {
    pub major: u32,
    pub minor: u32,
}

impl FeatureLevel {
    pub const V3_0: FeatureLevel = FeatureLevel { major: 3, minor: 0 };
    pub const V4_0: FeatureLevel = FeatureLevel { major: 4, minor: 0 };
}

impl fmt::Display for FeatureLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DML_FEATURE_LEVEL_{}_{}", self.major, self.minor)
    }
}

/// Which of the operator's three tensors a rule is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorRole {
    Input,
    OutputCount,
    OutputCoordinates,
}

impl fmt::Display for TensorRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TensorRole::Input => "InputTensor",
            TensorRole::OutputCount => "OutputCountTensor",
            TensorRole::OutputCoordinates => "OutputCoordinatesTensor",
        })
    }
}

/// A DML_BUFFER_TENSOR_DESC: data type, sizes and optional element strides (0 broadcasts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorDesc {
    pub data_type: DmlDataType,
    pub sizes: Vec<u32>,
    pub strides: Option<Vec<u32>>,
}

impl TensorDesc {
    /// A packed tensor description.
    pub fn packed(data_type: DmlDataType, sizes: &[u32]) -> TensorDesc {
        TensorDesc {
            data_type,
            sizes: sizes.to_vec(),
            strides: None,
        }
    }

    /// A tensor description with element strides.
    pub fn strided(data_type: DmlDataType, sizes: &[u32], strides: &[u32]) -> TensorDesc {
        TensorDesc {
            data_type,
            sizes: sizes.to_vec(),
            strides: Some(strides.to_vec()),
        }
    }
}

/// The operator's description, as DML_NONZERO_COORDINATES_OPERATOR_DESC.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NonZeroCoordinatesDesc {
    pub input: TensorDesc,
    pub output_count: TensorDesc,
    pub output_coordinates: TensorDesc,
}

/// Runs the operator: validates everything, then writes the count into `count[0]` and the first
/// `count` rows of `coordinates` (row-major M x N). Rows past the count are left as they were.
/// On error nothing is written.
pub fn nonzero_coordinates(
    level: FeatureLevel,
    desc: &NonZeroCoordinatesDesc,
    input: NumericSlice<'_>,
    count: &mut [u32],
    coordinates: &mut [u32],
    exec: &dyn Executor,
) -> Result<u32, DmlError> {
    let v = validate(level, desc, input, count.len(), coordinates.len())?;
    let src = &input;
    let counted = Counted::count(src, &v.layout, exec)
        .expect("validate checked the buffer against the layout");
    let nnz = counted.nnz();
    let n = v.columns;
    let skipped = counted.rank() - n; // leading size-1 dimensions not written
    let mut rest = &mut coordinates[..nnz * n];
    let writers = counted.ranges().map(|(_, rows)| {
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(rows * n);
        rest = tail;
        let mut pos = 0;
        move |block: crate::kernel::Block<'_>| {
            for &col in block.cols {
                let row = &mut mine[pos * n..(pos + 1) * n];
                for (c, slot) in row.iter_mut().enumerate() {
                    let d = skipped + c;
                    // Sizes are UINT32, so every coordinate fits.
                    *slot = if block.inner == Some(d) {
                        col
                    } else {
                        block.coords[d]
                    } as u32;
                }
                pos += 1;
            }
        }
    });
    counted.write(src, exec, writers);
    count[0] = nnz as u32;
    Ok(nnz as u32)
}

#[cfg(test)]
mod tests;
