//! Seeded random inputs for a bare model, from its declared input types and shapes; integer
//! inputs that index a table stay within it ([`crate::indices`]).

use crate::indices::{index_bounds, index_data};
use crate::npz::read_npz;
use anyhow::{anyhow, bail, ensure, Result};
use nonzero_core::DataType;
use nonzero_harness::testcase::io_names;
use nonzero_harness::Tensor;
use nonzero_proto::onnx::{
    tensor_shape_proto::dimension::Value as DimValue, type_proto, ModelProto,
};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::path::Path;

/// Seeded random inputs for a model's declared inputs (symbolic dimensions get `symbolic_size`).
/// An integer input that indexes a table (an embedding, a Gather's indices) gets values within
/// that table's size along the gather axis.
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
    let bounds = index_bounds(graph);
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
            let data = bounds
                .get(name)
                .and_then(|&bound| index_data(dtype, n, bound, &mut rng))
                .unwrap_or_else(|| nonzero_harness::pack::random_data(dtype, n, 0.5, &mut rng));
            Ok((name.clone(), Tensor::new(shape, data)))
        })
        .collect()
}

/// The model's inputs from an `.npz` file (`np.savez(path, name=array, ...)`): one array per
/// input, named as the input, of its element type. A missing or extra array is refused by name.
pub fn file_inputs(model: &ModelProto, path: &Path) -> Result<Vec<(String, Tensor)>> {
    let (names, _) = io_names(model);
    let mut arrays = read_npz(path)?;
    let extra: Vec<&str> = arrays
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !names.iter().any(|m| m == n))
        .collect();
    ensure!(
        extra.is_empty(),
        "{}: the model has no input {} (its inputs: {})",
        path.display(),
        extra.join(", "),
        names.join(", ")
    );
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| anyhow!("model has no graph"))?;
    names
        .iter()
        .map(|name| {
            let at = arrays.iter().position(|(n, _)| n == name).ok_or_else(|| {
                anyhow!(
                    "{}: no array for the input {name} (np.savez(path, {name}=...))",
                    path.display()
                )
            })?;
            let (_, tensor) = arrays.swap_remove(at);
            let declared = graph
                .input
                .iter()
                .find(|v| v.name() == name)
                .and_then(|v| v.r#type.as_ref()?.value.as_ref())
                .and_then(|v| match v {
                    type_proto::Value::TensorType(tt) => DataType::from_onnx_code(tt.elem_type?),
                    _ => None,
                });
            if let Some(declared) = declared {
                ensure!(
                    tensor.dtype() == declared,
                    "{}: array {name} is {}, the input is {declared}",
                    path.display(),
                    tensor.dtype()
                );
            }
            Ok((name.clone(), tensor))
        })
        .collect()
}
