//! Writes at a full index grid (`x[..., j] = v` as TorchScript writes it; recognized in
//! nonzero-rewrite-match's `writes::grid`) as `Where(M, U, X)`, M a constant mask of the written
//! positions: no Shape of X, no Range over its rows, no ScatterND. Where X is a selection's
//! padded rows, the write is then row-wise work that the padding may pass (padding/steps.rs).

use super::emit::Emitter;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::NodeProto;
use nonzero_rewrite_match::writes::grid::{GridUpdates, GridWrite};

/// Writes the Where form; its last node outputs `output` (the ScatterND's output). `None` where
/// a fixed axis's size is not fixed.
pub fn emit(w: &GridWrite, graph_nodes: &[NodeProto], e: &mut Emitter, output: &str) -> Option<()> {
    let mask = match &w.columns {
        // The selection's own mask (true where NonZero selects) at its axes, broadcast over the
        // whole ones: no coordinates are read, so the NonZero may go.
        Some(columns) => {
            let truth = e.cast(&columns.mask, DataType::Bool);
            let spread: Vec<i64> = (0..w.dims.len())
                .filter(|a| !columns.axes.contains(a))
                .map(|a| a as i64)
                .collect();
            if spread.is_empty() {
                truth
            } else {
                e.unsqueeze(&truth, &spread)
            }
        }
        None => {
            let (sizes, values) = w.mask()?;
            let raw = values.into_iter().map(u8::from).collect();
            e.initializer(DataType::Bool as i32, &sizes, raw)
        }
    };
    let mut written = match &w.updates {
        GridUpdates::Tensor(u) | GridUpdates::Value(u) => u.clone(),
        GridUpdates::Reshaped { input, shape } => e.reshape(input, shape),
        // One element of the ConstantOfShape's own fill (its `value`, or float 0 without one).
        GridUpdates::Filled(filled) => {
            let node = graph_nodes
                .iter()
                .find(|n| n.output.first() == Some(filled))?;
            let one = e.ints(&[1]);
            e.op("ConstantOfShape", &[&one], node.attribute.clone())
        }
    };
    if let Some(op) = w.combine {
        written = e.binary(op, &w.data, &written);
    }
    e.select(&mask, &written, &w.data, w.data_type);
    e.finish_as(output);
    Some(())
}
