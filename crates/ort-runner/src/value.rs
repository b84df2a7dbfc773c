//! Tensors to ORT values and back, and one run of a session through them.

use anyhow::{anyhow, bail, Context, Result};
use nonzero_core::{dispatch_element, DataType};
use nonzero_harness::{Tensor, TensorData};
use ort::session::Session;
use ort::value::{DynValue, Tensor as OrtTensor, ValueRef};

/// Converts a tensor to an ORT value.
pub fn to_value(t: &Tensor) -> Result<DynValue> {
    let shape: Vec<i64> = t.shape.iter().map(|&d| d as i64).collect();
    // `values` is `Some` for the type `dispatch_element!` binds for the tensor's dtype.
    let v = dispatch_element!(t.dtype(), T => {
        let values = t.data.values::<T>().unwrap_or_default().to_vec();
        OrtTensor::from_array((shape, values)).map(|x| x.into_dyn())
    }, String => {
        let v = t.data.values::<String>().unwrap_or_default();
        if v.iter().any(|s| s.contains('\0')) {
            bail!("string input holds a NUL character, which ORT's C API (FillStringTensor, C strings) cannot carry");
        }
        OrtTensor::from_string_array((shape, v)).map(|x| x.into_dyn())
    });
    v.map_err(|e| anyhow!("creating an ORT tensor: {e}"))
}

/// Converts an ORT tensor value back.
pub fn from_value(v: &ValueRef<'_>) -> Result<Tensor> {
    let ty = v
        .dtype()
        .tensor_type()
        .ok_or_else(|| anyhow!("output is not a tensor: {:?}", v.dtype()))?;
    let dtype = DataType::from_onnx_code(ort::sys::ONNXTensorElementDataType::from(ty) as i32)
        .ok_or_else(|| anyhow!("unsupported output element type {ty:?}"))?;
    let (shape, data) = dispatch_element!(
        dtype,
        T => {
            let (shape, data) = v.try_extract_tensor::<T>().map_err(|e| anyhow!("{e}"))?;
            (
                shape.iter().map(|&d| d as usize).collect::<Vec<_>>(),
                TensorData::from(data.to_vec()),
            )
        },
        String => {
            let (shape, data) = v.try_extract_strings().map_err(|e| anyhow!("{e}"))?;
            (
                shape.iter().map(|&d| d as usize).collect(),
                TensorData::String(data),
            )
        },
    );
    // `Tensor::new` would panic on an inconsistent pair; ORT's scalar NonZero gives [1, nnz].
    let n: usize = shape.iter().product();
    if n != data.len() {
        bail!(
            "output shape {shape:?} does not match its {} values",
            data.len()
        );
    }
    Ok(Tensor { shape, data })
}

/// Runs `session` on named inputs; returns the outputs in the session's output order.
pub fn run(session: &mut Session, inputs: &[(String, Tensor)]) -> Result<Vec<(String, Tensor)>> {
    let values = inputs
        .iter()
        .map(|(n, t)| {
            Ok((
                n.clone(),
                to_value(t).with_context(|| format!("input {n}"))?,
            ))
        })
        .collect::<Result<Vec<(String, DynValue)>>>()?;
    let outputs = session
        .run(values)
        .map_err(|e| anyhow!("run failed: {e}"))?;
    outputs
        .iter()
        .map(|(name, v)| {
            Ok((
                name.to_string(),
                from_value(&v).with_context(|| format!("output {name}"))?,
            ))
        })
        .collect()
}
