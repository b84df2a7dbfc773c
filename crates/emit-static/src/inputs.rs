//! Every graph input gets a fixed shape: from the model, or from `--input-shape` (as onnxsim's
//! `--overwrite-input-shape`, except that a size the model fixes cannot be changed). A name that
//! is no input, a wrong rank, a size the model fixes otherwise, a symbolic size left over, an
//! element count past int64, or one dimension name given two sizes is an error naming each.

use crate::StaticError;
use nonzero_proto::onnx::tensor_shape_proto::dimension::Value as DimValue;
use nonzero_proto::onnx::{type_proto, GraphProto, ValueInfoProto};
use nonzero_rewrite_analysis::dims::checked_numel;
use nonzero_rewrite_graph::text::plural;
use std::collections::BTreeMap;

/// The shape the model declares for a tensor input: each size fixed or named (`None` when the
/// input is not a tensor or declares no shape).
pub fn declared(vi: &ValueInfoProto) -> Option<Vec<Option<i64>>> {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref()?.value.as_ref() else {
        return None;
    };
    Some(
        t.shape
            .as_ref()?
            .dim
            .iter()
            .map(|d| match d.value {
                Some(DimValue::DimValue(v)) if v >= 0 => Some(v),
                _ => None,
            })
            .collect(),
    )
}

/// The `dim_param` of `vi`'s size at `axis`, when it names one.
fn dim_param(vi: &ValueInfoProto, axis: usize) -> Option<&str> {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref().and_then(|t| t.value.as_ref())
    else {
        return None;
    };
    match t
        .shape
        .as_ref()
        .and_then(|s| s.dim.get(axis)?.value.as_ref())
    {
        Some(DimValue::DimParam(p)) if !p.is_empty() => Some(p),
        _ => None,
    }
}

fn dim_name(vi: &ValueInfoProto, axis: usize) -> String {
    dim_param(vi, axis).map_or("an unnamed size".into(), |p| format!("'{p}'"))
}

fn dims_text(dims: &[i64]) -> String {
    let parts: Vec<String> = dims.iter().map(i64::to_string).collect();
    parts.join(" x ")
}

/// Fixes the graph inputs' shapes; returns every input's shape (initializers left out).
pub fn fix_input_shapes(
    graph: &mut GraphProto,
    given: &BTreeMap<String, Vec<i64>>,
) -> Result<Vec<(String, Vec<i64>)>, StaticError> {
    let invalid = |why: String| Err(StaticError::Refused(why));
    let initializers: Vec<String> = graph
        .initializer
        .iter()
        .filter_map(|t| t.name.clone())
        .collect();
    let names: Vec<String> = graph
        .input
        .iter()
        .filter_map(|i| i.name.clone())
        .filter(|n| !initializers.contains(n))
        .collect();
    for name in given.keys() {
        if !graph.input.iter().any(|i| i.name.as_deref() == Some(name)) {
            return invalid(format!(
                "--input-shape {name}: the model has no input named '{name}' (its inputs: {})",
                names.join(", ")
            ));
        }
    }
    let mut problems = vec![];
    let mut shapes = vec![];
    // dim_param -> (input, axis, size): one name is one size across the inputs.
    let mut named: BTreeMap<String, (String, usize, i64)> = BTreeMap::new();
    for vi in &mut graph.input {
        let name = vi.name.clone().unwrap_or_default();
        let is_initializer = initializers.contains(&name);
        let Some(declared_dims) = declared(vi) else {
            if given.contains_key(&name) || !is_initializer {
                problems.push(format!("input '{name}' declares no tensor shape"));
            }
            continue;
        };
        let dims = match given.get(&name) {
            Some(dims) if dims.len() != declared_dims.len() => {
                return invalid(format!(
                    "--input-shape {name}: {} given, but '{name}' has rank {}",
                    plural(dims.len(), "size"),
                    declared_dims.len()
                ));
            }
            Some(dims) => {
                for (axis, (&g, d)) in dims.iter().zip(&declared_dims).enumerate() {
                    if let Some(d) = d.filter(|&d| d != g) {
                        return invalid(format!(
                            "--input-shape {name}: size {g} at axis {axis}, but the model fixes it to {d}"
                        ));
                    }
                }
                dims.clone()
            }
            None if is_initializer => continue,
            None => {
                let open: Vec<String> = (0..declared_dims.len())
                    .filter(|&a| declared_dims[a].is_none())
                    .map(|a| format!("axis {a} ({})", dim_name(vi, a)))
                    .collect();
                if !open.is_empty() {
                    problems.push(format!(
                        "input '{name}' has symbolic sizes at {}",
                        open.join(", ")
                    ));
                    continue;
                }
                declared_dims
                    .iter()
                    .map(|d| d.expect("all fixed"))
                    .collect()
            }
        };
        if checked_numel(&dims).is_none() {
            return invalid(format!(
                "input '{name}' of shape {} has more elements than an int64 counts (2^63 - 1)",
                dims_text(&dims)
            ));
        }
        for (axis, &size) in dims.iter().enumerate() {
            let Some(param) = dim_param(vi, axis) else {
                continue;
            };
            match named.get(param) {
                Some((other, other_axis, other_size)) if *other_size != size => {
                    return invalid(format!(
                        "inputs '{other}' (axis {other_axis}) and '{name}' (axis {axis}) share the dimension '{param}', but get the sizes {other_size} and {size}; give them one size"
                    ));
                }
                Some(_) => {}
                None => {
                    named.insert(param.to_string(), (name.clone(), axis, size));
                }
            }
        }
        set_dims(vi, &dims);
        shapes.push((name, dims));
    }
    if !problems.is_empty() {
        return invalid(format!(
            "{}; give each with --input-shape NAME=D0,D1,...",
            problems.join("; ")
        ));
    }
    Ok(shapes)
}

/// Sets a tensor value info's shape to fixed sizes.
pub fn set_dims(vi: &mut ValueInfoProto, dims: &[i64]) {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_mut().and_then(|t| t.value.as_mut())
    else {
        return;
    };
    let shape = t.shape.get_or_insert_with(Default::default);
    shape.dim = dims
        .iter()
        .map(|&d| nonzero_proto::onnx::tensor_shape_proto::Dimension {
            value: Some(DimValue::DimValue(d)),
            ..Default::default()
        })
        .collect();
}
