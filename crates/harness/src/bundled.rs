//! The small models committed under `models/`, each with a seeded input and its expected output.
//!
//! Single-node NonZero outputs come from `nonzero_core::reference`; multi-node models' outputs
//! are computed here directly (masked select: the values of `x` where `mask` is true, row-major;
//! threshold filter: the indices and scores with `score > threshold`).

use crate::model::{
    dims, masked_select_model, nonzero_example_model, nonzero_model, threshold_filter_model,
};
use crate::pack::random_data;
use crate::{Tensor, TensorData, TestCase};
use nonzero_core::DataType;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// ONNX's `test_nonzero_example`: bool `[[1, 0], [1, 1]]` -> `[[0, 1, 1], [0, 0, 1]]`.
pub fn nonzero_example() -> TestCase {
    let x = Tensor::new(vec![2, 2], TensorData::Bool(vec![true, false, true, true]));
    let y = Tensor::new(vec![2, 3], TensorData::Int64(vec![0, 1, 1, 0, 0, 1]));
    TestCase::with_graph_names(nonzero_example_model(), vec![x], vec![y])
}

/// A single-node NonZero case with a reference output.
pub fn nonzero_case(x: Tensor, opset: i64) -> TestCase {
    let y = x.nonzero_reference();
    TestCase::with_graph_names(
        nonzero_model(x.dtype(), &dims(&x.shape), opset),
        vec![x],
        vec![y],
    )
}

/// Masked select over float `x` `[3, 4]` and a seeded bool mask.
pub fn masked_select(opset: i64, seed: u64) -> TestCase {
    let mut rng = StdRng::seed_from_u64(seed);
    let shape = vec![3, 4];
    let xs: Vec<f32> = (0..12).map(|i| i as f32 + 0.5).collect();
    let mask: Vec<bool> = (0..12).map(|_| rng.random_bool(0.5)).collect();
    let y: Vec<f32> = xs
        .iter()
        .zip(&mask)
        .filter(|(_, &m)| m)
        .map(|(&v, _)| v)
        .collect();
    let model = masked_select_model(DataType::Float32, &dims(&shape), opset);
    TestCase::with_graph_names(
        model,
        vec![
            Tensor::new(shape.clone(), TensorData::Float32(xs)),
            Tensor::new(shape, TensorData::Bool(mask)),
        ],
        vec![Tensor::new(vec![y.len()], TensorData::Float32(y))],
    )
}

/// Threshold filter over 16 seeded scores in [0, 1) and threshold 0.5.
pub fn threshold_filter(opset: i64, seed: u64) -> TestCase {
    let mut rng = StdRng::seed_from_u64(seed);
    let scores: Vec<f32> = (0..16)
        .map(|_| (rng.random_range(0.0f32..1.0) * 100.0).round() / 100.0)
        .collect();
    let threshold = 0.5f32;
    let kept: Vec<(i64, f32)> = scores
        .iter()
        .enumerate()
        .filter(|(_, &s)| s > threshold)
        .map(|(i, &s)| (i as i64, s))
        .collect();
    let k = kept.len();
    TestCase::with_graph_names(
        threshold_filter_model(opset),
        vec![
            Tensor::new(vec![16], TensorData::Float32(scores)),
            Tensor::new(vec![], TensorData::Float32(vec![threshold])),
        ],
        vec![
            Tensor::new(
                vec![k],
                TensorData::Int64(kept.iter().map(|p| p.0).collect()),
            ),
            Tensor::new(
                vec![k],
                TensorData::Float32(kept.iter().map(|p| p.1).collect()),
            ),
        ],
    )
}

/// Every bundled model: `(directory name, case)`.
pub fn bundled_models() -> Vec<(&'static str, TestCase)> {
    let float_x = Tensor::new(
        vec![3, 4],
        TensorData::Float32(vec![
            0.0,
            -0.0,
            1.5,
            f32::NAN,
            0.0,
            f32::INFINITY,
            -2.0,
            0.0,
            f32::from_bits(1),
            0.0,
            -0.0,
            3.25,
        ]),
    );
    let mut rng = StdRng::seed_from_u64(0x1d8);
    let int8_x = Tensor::new(vec![4, 5], random_data(DataType::Int8, 20, 0.4, &mut rng));
    let double_x = Tensor::new(
        vec![2, 3, 2],
        random_data(DataType::Float64, 12, 0.5, &mut rng),
    );
    vec![
        ("nonzero_example_opset9", nonzero_example()),
        ("nonzero_opset13_float", nonzero_case(float_x, 13)),
        ("nonzero_opset13_int8", nonzero_case(int8_x, 13)),
        ("nonzero_opset13_double", nonzero_case(double_x, 13)),
        ("masked_select_opset11", masked_select(11, 11)),
        ("masked_select_opset13", masked_select(13, 13)),
        ("threshold_filter_opset9", threshold_filter(9, 9)),
        ("threshold_filter_opset13", threshold_filter(13, 13)),
    ]
}
