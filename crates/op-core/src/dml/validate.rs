//! The validation rules of DML_OPERATOR_NONZERO_COORDINATES, in the order the DirectML text gives
//! them. Every rule returns its own [`DmlError`] variant.

use super::{DmlDataType, DmlError, FeatureLevel, NonZeroCoordinatesDesc, TensorDesc, TensorRole};
use crate::data::NumericSlice;
use crate::layout::{effective_rank, row_major_strides};
use crate::source::ZeroTest;
use crate::Layout;

/// What a valid description resolves to.
#[derive(Debug, Clone)]
pub struct Validated {
    /// The input's layout in elements.
    pub layout: Layout,
    /// M: the input's element count.
    pub rows: usize,
    /// N: coordinates per row.
    pub columns: usize,
}

/// Supported DimensionCount ranges `(input, count, coordinates)` for a feature level.
fn dimension_ranges(level: FeatureLevel) -> Result<[(usize, usize); 3], DmlError> {
    if level >= FeatureLevel::V4_0 {
        Ok([(1, 8), (1, 8), (2, 8)])
    } else if level >= FeatureLevel::V3_0 {
        Ok([(4, 5), (4, 5), (4, 5)])
    } else {
        Err(DmlError::FeatureLevelTooLow { level })
    }
}

/// The input data types of the operator's tensor-support table (the same at 3.0 and 4.0).
const INPUT_TYPES: [DmlDataType; 8] = [
    DmlDataType::Float32,
    DmlDataType::Float16,
    DmlDataType::Int32,
    DmlDataType::Int16,
    DmlDataType::Int8,
    DmlDataType::Uint32,
    DmlDataType::Uint16,
    DmlDataType::Uint8,
];

/// Checks a description and its buffers against every rule, without touching any buffer.
pub fn validate(
    level: FeatureLevel,
    desc: &NonZeroCoordinatesDesc,
    input: NumericSlice<'_>,
    count_len: usize,
    coordinates_len: usize,
) -> Result<Validated, DmlError> {
    let tensors = [
        (TensorRole::Input, &desc.input),
        (TensorRole::OutputCount, &desc.output_count),
        (TensorRole::OutputCoordinates, &desc.output_coordinates),
    ];

    // Supported dimension counts, per feature level.
    for ((tensor, t), (min, max)) in tensors.iter().zip(dimension_ranges(level)?) {
        let count = t.sizes.len();
        if count < min || count > max {
            return Err(DmlError::DimensionCount {
                tensor: *tensor,
                count,
                min,
                max,
                level,
            });
        }
    }
    // "InputTensor, OutputCoordinatesTensor and OutputCountTensor must have the same DimensionCount".
    let dims = desc.input.sizes.len();
    if desc.output_count.sizes.len() != dims || desc.output_coordinates.sizes.len() != dims {
        return Err(DmlError::DimensionCountsDiffer {
            input: dims,
            count: desc.output_count.sizes.len(),
            coordinates: desc.output_coordinates.sizes.len(),
        });
    }

    // Supported data types.
    if !INPUT_TYPES.contains(&desc.input.data_type) {
        return Err(DmlError::InputDataType {
            data_type: desc.input.data_type,
        });
    }
    for (tensor, t) in &tensors[1..] {
        if t.data_type != DmlDataType::Uint32 {
            return Err(DmlError::OutputDataType {
                tensor: *tensor,
                data_type: t.data_type,
            });
        }
    }

    // Strides: one per dimension; outputs are written packed.
    for (tensor, t) in &tensors {
        if let Some(strides) = &t.strides {
            if strides.len() != t.sizes.len() {
                return Err(DmlError::StridesLength {
                    tensor: *tensor,
                    strides: strides.len(),
                    dimension_count: t.sizes.len(),
                });
            }
            if *tensor != TensorRole::Input && !is_packed(t) {
                return Err(DmlError::OutputStridesNotPacked {
                    tensor: *tensor,
                    strides: strides.clone(),
                });
            }
        }
    }

    // OutputCountTensor is a scalar: every size is 1.
    if desc.output_count.sizes.iter().any(|&s| s != 1) {
        return Err(DmlError::CountNotScalar {
            sizes: desc.output_count.sizes.clone(),
        });
    }

    // OutputCoordinatesTensor is {1, ..., 1, M, N}, M = input elements, rank_eff <= N <= dims.
    let coords = &desc.output_coordinates.sizes;
    let (m, n) = (coords[dims - 2], coords[dims - 1]);
    if coords[..dims - 2].iter().any(|&s| s != 1) {
        return Err(DmlError::CoordinatesLeadingSize {
            sizes: coords.clone(),
        });
    }
    // Up to 8 UINT32 sizes overflow u64: saturate (a zero size still makes the tensor empty).
    let input_elements: u64 = if desc.input.sizes.contains(&0) {
        0
    } else {
        desc.input
            .sizes
            .iter()
            .try_fold(1u64, |acc, &s| acc.checked_mul(s as u64))
            .unwrap_or(u64::MAX)
    };
    if input_elements > u32::MAX as u64 {
        return Err(DmlError::TooManyElements { input_elements });
    }
    if m as u64 != input_elements {
        return Err(DmlError::CoordinatesRows {
            m: m as u64,
            input_elements,
        });
    }
    let sizes: Vec<usize> = desc.input.sizes.iter().map(|&s| s as usize).collect();
    let rank = effective_rank(&sizes);
    if (n as usize) < rank || n as usize > dims {
        return Err(DmlError::CoordinatesColumns {
            n,
            effective_rank: rank,
            dimension_count: dims,
        });
    }

    // Buffers: the input's element type and the extent of every buffer.
    let described = desc.input.data_type.to_data_type();
    if input.dtype() != described {
        return Err(DmlError::InputBufferType {
            described: desc.input.data_type,
            buffer: input.dtype().onnx_name(),
        });
    }
    let layout = match &desc.input.strides {
        Some(strides) => {
            let strides: Vec<usize> = strides.iter().map(|&s| s as usize).collect();
            Layout::strided(&sizes, &strides)
        }
        None => Layout::packed(&sizes),
    }
    .map_err(|_| DmlError::TooManyElements { input_elements })?;
    let needed = layout
        .required_len()
        .map_err(|_| DmlError::TooManyElements { input_elements })? as u64;
    let buffers = [
        (TensorRole::Input, needed, input.len()),
        (TensorRole::OutputCount, 1, count_len),
        (
            TensorRole::OutputCoordinates,
            m as u64 * n as u64,
            coordinates_len,
        ),
    ];
    for (tensor, needed, actual) in buffers {
        if (actual as u64) < needed {
            return Err(DmlError::BufferTooSmall {
                tensor,
                needed,
                actual: actual as u64,
            });
        }
    }
    Ok(Validated {
        layout,
        rows: m as usize,
        columns: n as usize,
    })
}

fn is_packed(t: &TensorDesc) -> bool {
    let sizes: Vec<usize> = t.sizes.iter().map(|&s| s as usize).collect();
    match &t.strides {
        None => true,
        Some(strides) => sizes
            .iter()
            .zip(strides)
            .zip(row_major_strides(&sizes))
            .all(|((&n, &s), r)| n == 1 || s as usize == r),
    }
}
