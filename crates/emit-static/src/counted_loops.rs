//! A Loop that runs once per row of a padded list (`for i in range(len(boxes))`: Keypoint
//! R-CNN's heatmaps to keypoints, Mask R-CNN's paste of each mask; found by
//! [`crate::padding`]'s shape reads): its trip count becomes the list's count, and each padded
//! tensor its body reads is cut to the count first (`Slice(p, 0, count)`). The Loop then runs
//! exactly as the original's, on the original's rows; what it makes keeps the original's
//! data-dependent shape, and the report names it.

use crate::compact::Compacted;
use crate::emit::Emitter;
use crate::lower::rename_reads;
use crate::padding::Flow;
use crate::scope::Scope;
use crate::StaticPass;
use nonzero_proto::onnx::GraphProto;
use std::collections::HashMap;

impl StaticPass<'_> {
    /// Gives each counted Loop of `flow` the count as its trip count, and its body the padded
    /// tensors it reads cut to their counts.
    pub(super) fn count_loops(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        flow: &Flow,
        compacted: &Compacted,
    ) {
        for (lp, sized) in &flow.counted_loops {
            let Some(at) = crate::graph::writer_of(graph, lp) else {
                continue;
            };
            let mut e = Emitter::new(graph, scope, &format!("{lp}/trips"));
            let count = compacted.derived(&mut e, flow.counts.get(sized)).count;
            let inserted = e.insert(graph, at);
            graph.node[at + inserted].input[0] = count;
            let line = format!(
                "counted loop: Loop -> {lp} runs once per row of {sized}: its trip count is the count, its body reads the rows cut to it"
            );
            self.summary
                .rewrites
                .push(("counted-loop".to_string(), scope.line(line)));
        }
        for (tensor, lp, axis) in &flow.loop_cuts {
            let Some(at) = crate::graph::writer_of(graph, lp) else {
                continue;
            };
            let mut e = Emitter::new(graph, scope, &format!("{tensor}/rows"));
            let list = compacted.derived(&mut e, flow.counts.get(tensor));
            let (start, axes) = (e.ints(&[0]), e.ints(&[*axis as i64]));
            let end = e.reshape(&list.count, &[1]);
            let cut = e.op("Slice", &[tensor, &start, &end, &axes], vec![]);
            let inserted = e.insert(graph, at);
            let renamed = HashMap::from([(tensor.clone(), cut)]);
            for a in &mut graph.node[at + inserted].attribute {
                for body in a.g.iter_mut().chain(a.graphs.iter_mut()) {
                    rename_reads(body, &renamed, 1);
                }
            }
        }
    }
}
