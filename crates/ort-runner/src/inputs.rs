//! Seeded random inputs for a bare model, from its declared input types and shapes.

use anyhow::{anyhow, bail, Result};
use nonzero_core::DataType;
use nonzero_harness::testcase::io_names;
use nonzero_harness::Tensor;
use nonzero_proto::onnx::{
    tensor_shape_proto::dimension::Value as DimValue, type_proto, ModelProto,
};
use rand::rngs::StdRng;
use rand::SeedableRng;

/// Seeded random inputs for a model's declared inputs (symbolic dimensions get `symbolic_size`).
pub fn random_inputs(
    model: &ModelProto,
    symbolic_size: usize,
    seed: u64,
) -> Result<Vec<(String, Tensor)>> {
    let (names, _) = io_names(model);
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| anyhow!("model has no graph"))?;
    let mut rng = StdRng::seed_from_u64(seed);
    names
        .iter()
        .map(|name| {
            let vi = graph
                .input
                .iter()
                .find(|v| v.name() == name)
                .expect("name from the graph");
            let Some(type_proto::Value::TensorType(tt)) =
                vi.r#type.as_ref().and_then(|t| t.value.as_ref())
            else {
                bail!("input {name} is not a tensor");
            };
            let code = tt.elem_type.unwrap_or(0);
            let dtype = DataType::from_onnx_code(code)
                .ok_or_else(|| anyhow!("input {name}: unsupported element type {code}"))?;
            let shape: Vec<usize> = tt
                .shape
                .as_ref()
                .map(|s| {
                    s.dim
                        .iter()
                        .map(|d| match d.value {
                            Some(DimValue::DimValue(v)) if v >= 0 => v as usize,
                            _ => symbolic_size,
                        })
                        .collect()
                })
                .unwrap_or_default();
            let n = shape.iter().product();
            Ok((
                name.clone(),
                Tensor::new(
                    shape,
                    nonzero_harness::pack::random_data(dtype, n, 0.5, &mut rng),
                ),
            ))
        })
        .collect()
}
