//! The static form of a Split of padded rows into constant sizes ([`crate::padding::WholeSplit`]):
//! the original runs only where the count is their sum S, so the Split reads the first S rows of
//! the padded list, which are then exactly the original's. Where the count is not S the original
//! fails (ONNX's Split) and the static model's parts are not defined. A capacity under S cannot
//! hold the rows the original needs: an error naming both.

use crate::compact::Compacted;
use crate::emit::Emitter;
use crate::graph::describe;
use crate::padding::Flow;
use crate::scope::Scope;
use crate::{replace, StaticError, StaticPass};
use nonzero_proto::onnx::GraphProto;

impl StaticPass<'_> {
    /// Feeds each whole Split of `flow` the first S rows of its padded input.
    pub(super) fn cut_whole_splits(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        flow: &Flow,
        compacted: &Compacted,
    ) -> Result<(), StaticError> {
        for split in &flow.splits {
            let Some(at) = crate::graph::writer_of(graph, &split.output) else {
                continue;
            };
            let mut node = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&node));
            let rows = compacted.derived(&mut e, flow.counts.get(&split.output));
            if rows.capacity < split.rows {
                return Err(StaticError::Refused(format!(
                    "Split {} splits {} rows, which the original needs exactly, but the capacity \
                     keeps at most {}: raise --capacity to {} or more",
                    describe(&node),
                    split.rows,
                    rows.capacity,
                    split.rows
                )));
            }
            let cut = if rows.capacity > split.rows {
                let (start, end) = (e.ints(&[0]), e.ints(&[split.rows]));
                let axes = e.ints(&[split.axis as i64]);
                Some(e.op("Slice", &[&node.input[0], &start, &end, &axes], vec![]))
            } else {
                None
            };
            let line = format!(
                "whole split: Split {} splits {} rows; the original runs only where the count is \
                 exactly {} (ONNX's Split), so it splits the first {} of the {} padded rows",
                describe(&node),
                split.rows,
                split.rows,
                split.rows,
                rows.capacity
            );
            self.summary
                .rewrites
                .push(("whole-split".to_string(), scope.line(line)));
            if let Some(cut) = cut {
                node.input[0] = cut;
                e.nodes.push(node);
                replace(graph, at, e);
            }
        }
        Ok(())
    }
}
