//! Declared facts (value infos, graph outputs) against inferred ones: where they agree they
//! complete each other; where they contradict, neither is trusted.

use super::{Dim, ShapeTable, TensorInfo};
use nonzero_proto::onnx::tensor_shape_proto::dimension::Value as DimValue;
use nonzero_proto::onnx::{type_proto, ValueInfoProto};

impl ShapeTable {
    /// The inferred facts, completed by the declared ones; a disagreement (different element
    /// types, ranks or static sizes, or two different proven sizes) leaves the tensor unknown.
    pub(super) fn reconcile(
        &mut self,
        name: &str,
        inferred: TensorInfo,
        declared: Option<Declared>,
    ) -> TensorInfo {
        let Some(declared) = declared else {
            return inferred;
        };
        let mut conflict = false;
        let elem_type = match (inferred.elem_type, declared.elem_type) {
            (Some(a), Some(b)) if a != b => {
                conflict = true;
                None
            }
            (a, b) => a.or(b),
        };
        let dims = match (&inferred.dims, &declared.dims) {
            (None, Some(_)) => Some(declared.clone().fill(name).dims.unwrap_or_default()),
            (Some(i), Some(d)) if i.len() != d.len() => {
                conflict = true;
                None
            }
            (Some(i), Some(d)) => Some(
                i.iter()
                    .zip(d)
                    .enumerate()
                    .map(|(axis, (i, d))| match d {
                        None => i.clone(),
                        Some(d) if d == i => i.clone(),
                        Some(d) if i.is_unknown() => d.clone(),
                        // Two different numbers: provably contradictory.
                        Some(d) if d.as_static().is_some() && i.as_static().is_some() => {
                            conflict = true;
                            Dim::fresh(&format!("{name}.{axis}"))
                        }
                        // A name against a proven size: not a contradiction; the proof wins.
                        Some(_) => i.clone(),
                    })
                    .collect(),
            ),
            (dims, None) => dims.clone(),
        };
        if conflict {
            self.conflicts.insert(
                name.to_string(),
                format!(
                    "declared {} but inferred {}",
                    declared.fill(name).shape_text(),
                    inferred.shape_text()
                ),
            );
            // Trust neither: keep only the rank both agree on, with unknown sizes.
            let rank = dims.as_ref().map(Vec::len);
            return TensorInfo {
                elem_type,
                dims: rank.map(|r| (0..r).map(|a| Dim::fresh(&format!("{name}.{a}"))).collect()),
            };
        }
        TensorInfo { elem_type, dims }
    }
}

/// A declared tensor type: sizes are `None` where the declaration names none.
#[derive(Debug, Clone)]
pub(super) struct Declared {
    elem_type: Option<i32>,
    dims: Option<Vec<Option<Dim>>>,
}

impl Declared {
    /// As a [`TensorInfo`], unnamed sizes becoming fresh sizes of `name`.
    pub(super) fn fill(self, name: &str) -> TensorInfo {
        TensorInfo {
            elem_type: self.elem_type,
            dims: self.dims.map(|d| {
                d.into_iter()
                    .enumerate()
                    .map(|(axis, x)| x.unwrap_or_else(|| Dim::fresh(&format!("{name}.{axis}"))))
                    .collect()
            }),
        }
    }
}

/// The tensor type a value info declares.
pub(super) fn declared(vi: &ValueInfoProto) -> Option<Declared> {
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref()?.value.as_ref() else {
        return None;
    };
    let dims = t.shape.as_ref().map(|s| {
        s.dim
            .iter()
            .map(|d| match &d.value {
                Some(DimValue::DimValue(v)) if *v >= 0 => Some(Dim::from(*v)),
                Some(DimValue::DimParam(p)) if !p.is_empty() => Some(Dim::param(p)),
                _ => None,
            })
            .collect()
    });
    Some(Declared {
        elem_type: t.elem_type.filter(|&e| e != 0),
        dims,
    })
}
