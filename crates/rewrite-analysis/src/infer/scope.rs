//! Where a table starts: a scope's `ai.onnx` opset, and a function body's inputs as one call
//! site knows them.

use super::{Dim, ShapeTable, TensorInfo};

impl ShapeTable {
    /// An empty table for a scope that imports `ai.onnx` at `opset`.
    pub fn scope(opset: Option<i64>) -> Self {
        ShapeTable {
            opset,
            ..Default::default()
        }
    }

    /// The `ai.onnx` opset of this scope.
    pub fn opset(&self) -> Option<i64> {
        self.opset
    }

    /// The inputs of a function body as one call site knows them (`None`: nothing known).
    /// Sizes that only the caller's graph can name become fresh sizes of the body.
    pub fn for_call(
        inputs: &[String],
        site: Option<&[TensorInfo]>,
        label: &str,
        opset: Option<i64>,
    ) -> Self {
        let mut table = ShapeTable::scope(opset);
        for (slot, name) in inputs.iter().enumerate() {
            let info = site.and_then(|s| s.get(slot)).cloned().unwrap_or_default();
            let dims = info.dims.map(|d| {
                d.into_iter()
                    .enumerate()
                    .map(|(axis, x)| match x.mentions_fresh() {
                        true => Dim::fresh(&format!("@{label}:{slot}.{axis}")),
                        false => x,
                    })
                    .collect()
            });
            let info = TensorInfo {
                elem_type: info.elem_type,
                dims,
            };
            table.infos.insert(name.clone(), info);
        }
        table
    }
}
