//! One error per rule of DML_OPERATOR_NONZERO_COORDINATES's validation.

use super::{DmlDataType, FeatureLevel, TensorRole};
use std::fmt;

/// A rule of the DirectML text that a call broke. Outputs are untouched when one is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DmlError {
    /// The operator was introduced in DML_FEATURE_LEVEL_3_0.
    FeatureLevelTooLow { level: FeatureLevel },
    /// A tensor's DimensionCount is outside the range the feature level supports.
    DimensionCount {
        tensor: TensorRole,
        count: usize,
        min: usize,
        max: usize,
        level: FeatureLevel,
    },
    /// InputTensor, OutputCountTensor and OutputCoordinatesTensor must have the same DimensionCount.
    DimensionCountsDiffer {
        input: usize,
        count: usize,
        coordinates: usize,
    },
    /// InputTensor's data type is not one of the eight the operator supports.
    InputDataType { data_type: DmlDataType },
    /// OutputCountTensor and OutputCoordinatesTensor must be UINT32.
    OutputDataType {
        tensor: TensorRole,
        data_type: DmlDataType,
    },
    /// OutputCountTensor must be a scalar: all of its Sizes must be 1.
    CountNotScalar { sizes: Vec<u32> },
    /// OutputCoordinatesTensor's Sizes must be `{1, ..., 1, M, N}`: a leading size is not 1.
    CoordinatesLeadingSize { sizes: Vec<u32> },
    /// OutputCoordinatesTensor's M must equal the number of elements of InputTensor.
    CoordinatesRows { m: u64, input_elements: u64 },
    /// OutputCoordinatesTensor's N must be at least the effective rank of InputTensor and at most
    /// its DimensionCount.
    CoordinatesColumns {
        n: u32,
        effective_rank: usize,
        dimension_count: usize,
    },
    /// The input has more elements than a UINT32 size M can describe.
    TooManyElements { input_elements: u64 },
    /// Strides, when given, need one entry per dimension.
    StridesLength {
        tensor: TensorRole,
        strides: usize,
        dimension_count: usize,
    },
    /// This implementation writes outputs packed: output strides must be absent or packed.
    OutputStridesNotPacked {
        tensor: TensorRole,
        strides: Vec<u32>,
    },
    /// The buffer bound to a tensor is smaller than its description requires.
    BufferTooSmall {
        tensor: TensorRole,
        needed: u64,
        actual: u64,
    },
    /// The input buffer's element type differs from InputTensor's DataType.
    InputBufferType {
        described: DmlDataType,
        buffer: &'static str,
    },
}

impl fmt::Display for DmlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DmlError::FeatureLevelTooLow { level } => write!(
                f,
                "NonZeroCoordinates was introduced in DML_FEATURE_LEVEL_3_0; the requested level is {level}"
            ),
            DmlError::DimensionCount { tensor, count, min, max, level } => write!(
                f,
                "{tensor} has DimensionCount {count}; feature level {level} supports {min} to {max}"
            ),
            DmlError::DimensionCountsDiffer { input, count, coordinates } => write!(
                f,
                "InputTensor, OutputCountTensor and OutputCoordinatesTensor must have the same DimensionCount \
                 (got {input}, {count} and {coordinates})"
            ),
            DmlError::InputDataType { data_type } => write!(
                f,
                "InputTensor's data type {data_type} is not supported: expected FLOAT32, FLOAT16, INT32, INT16, INT8, \
                 UINT32, UINT16 or UINT8"
            ),
            DmlError::OutputDataType { tensor, data_type } => {
                write!(f, "{tensor} must be UINT32, not {data_type}")
            }
            DmlError::CountNotScalar { sizes } => {
                write!(f, "OutputCountTensor must be a scalar (all Sizes 1), got Sizes {sizes:?}")
            }
            DmlError::CoordinatesLeadingSize { sizes } => write!(
                f,
                "OutputCoordinatesTensor must have Sizes {{1, ..., 1, M, N}}, got {sizes:?}"
            ),
            DmlError::CoordinatesRows { m, input_elements } => write!(
                f,
                "OutputCoordinatesTensor's M ({m}) must equal the number of elements in InputTensor ({input_elements})"
            ),
            DmlError::CoordinatesColumns { n, effective_rank, dimension_count } => write!(
                f,
                "OutputCoordinatesTensor's N ({n}) must be at least the effective rank of InputTensor \
                 ({effective_rank}) and at most its DimensionCount ({dimension_count})"
            ),
            DmlError::TooManyElements { input_elements } => write!(
                f,
                "InputTensor has {input_elements} elements, more than a UINT32 M and UINT32 count can describe"
            ),
            DmlError::StridesLength { tensor, strides, dimension_count } => write!(
                f,
                "{tensor} has {strides} strides for DimensionCount {dimension_count}: one stride per dimension"
            ),
            DmlError::OutputStridesNotPacked { tensor, strides } => write!(
                f,
                "{tensor} strides {strides:?} are not packed; this implementation writes outputs packed"
            ),
            DmlError::BufferTooSmall { tensor, needed, actual } => write!(
                f,
                "the buffer bound to {tensor} holds {actual} elements, its description needs {needed}"
            ),
            DmlError::InputBufferType { described, buffer } => write!(
                f,
                "InputTensor is described as {described} but its buffer holds {buffer} elements"
            ),
        }
    }
}

impl std::error::Error for DmlError {}
