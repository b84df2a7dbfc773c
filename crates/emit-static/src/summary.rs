//! What static mode did, for people and as the `static` key of the JSON report. The nodes it
//! left dynamic are in `Report::left`, with the static reason codes.

use crate::graph::is_onnx_op;
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_analysis::findings::Left;
use nonzero_rewrite_graph::text::quote;
use nonzero_rewrite_graph::MAX_SUBGRAPH_DEPTH;
use std::collections::BTreeMap;

/// What static mode did, besides the nodes it left (in [`crate::Tally`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticReport {
    /// Every graph input (initializers aside) with the fixed shape it now has.
    pub input_shapes: Vec<(String, Vec<i64>)>,
    pub capacity: Option<i64>,
    /// The capacities given to named graph outputs (`--capacity NAME=N`).
    pub output_capacities: BTreeMap<String, i64>,
    /// `nonzero` ops replaced by their standard bodies first.
    pub lowered: usize,
    /// (kind, line): `masked-write`, `count`, `fixed-capacity`.
    pub rewrites: Vec<(String, String)>,
    /// Padded graph outputs: (name, its `<name>_count` output, the padded axis).
    pub count_outputs: Vec<(String, String, usize)>,
    /// Every NonZero given a fixed capacity: (its graph's label, `main` or a body's path; the
    /// node as reports name it; the rows it is padded to). Not in the JSON report (its
    /// `rewrites` say the same in words).
    pub compacted: Vec<(String, String, i64)>,
}

pub fn dims_text(dims: &[i64]) -> String {
    let parts: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

impl StaticReport {
    pub fn to_json(&self) -> String {
        let inputs: Vec<String> = self
            .input_shapes
            .iter()
            .map(|(n, d)| format!("{}: {}", quote(n), dims_text(d)))
            .collect();
        let rewrites: Vec<String> = self
            .rewrites
            .iter()
            .map(|(kind, line)| format!("{{\"kind\": {}, \"line\": {}}}", quote(kind), quote(line)))
            .collect();
        let counts: Vec<String> = self
            .count_outputs
            .iter()
            .map(|(o, c, axis)| {
                format!(
                    "{}: {{\"count\": {}, \"axis\": {axis}}}",
                    quote(o),
                    quote(c)
                )
            })
            .collect();
        // Only when given, so that a report without them reads as before.
        let named = if self.output_capacities.is_empty() {
            String::new()
        } else {
            let parts: Vec<String> = self
                .output_capacities
                .iter()
                .map(|(name, c)| format!("{}: {c}", quote(name)))
                .collect();
            format!(", \"output_capacities\": {{{}}}", parts.join(", "))
        };
        format!(
            "{{\"input_shapes\": {{{}}}, \"capacity\": {}{named}, \"lowered\": {}, \"rewrites\": [{}], \"count_outputs\": {{{}}}}}",
            inputs.join(", "),
            self.capacity.map_or("null".to_string(), |c| c.to_string()),
            self.lowered,
            rewrites.join(", "),
            counts.join(", ")
        )
    }
}

/// The error for nodes left dynamic (without `--allow-dynamic`), one line each; `None` when
/// nothing is.
pub fn still_dynamic(left: &[Left]) -> Option<String> {
    if left.is_empty() {
        return None;
    }
    let lines: Vec<String> = left
        .iter()
        .map(|l| {
            format!(
                "{} {} in {}: {} ({})",
                l.op,
                l.node,
                l.graph,
                l.reason.code(),
                l.detail
            )
        })
        .collect();
    let count = match lines.len() {
        1 => "1 node is".to_string(),
        n => format!("{n} nodes are"),
    };
    Some(format!(
        "{count} still dynamic, nothing written (--allow-dynamic writes it anyway):\n  {}\n{}",
        lines.join("\n  "),
        tally(left)
    ))
}

/// One line for the nodes left dynamic, by op and reason code:
/// `still dynamic: 180 NonZero shape-not-fixed, 1 NonMaxSuppression data-dependent`.
pub fn tally(left: &[Left]) -> String {
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for l in left {
        *counts.entry((l.op.as_str(), l.reason.code())).or_insert(0) += 1;
    }
    let mut parts: Vec<((&str, &str), usize)> = counts.into_iter().collect();
    // The most frequent first; ties in op, then code order.
    parts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let parts: Vec<String> = parts
        .iter()
        .map(|((op, code), n)| format!("{n} {op} {code}"))
        .collect();
    format!("still dynamic: {}", parts.join(", "))
}

/// ONNX NonZero nodes in `graph` and its bodies (the Tally's `nonzero_nodes`).
pub(crate) fn count_nonzero(graph: &GraphProto, depth: usize) -> usize {
    graph
        .node
        .iter()
        .map(|n| {
            let own = usize::from(is_onnx_op(n, "NonZero"));
            let inner: usize = n
                .attribute
                .iter()
                .flat_map(|a| a.g.iter().chain(a.graphs.iter()))
                .filter(|_| depth < MAX_SUBGRAPH_DEPTH)
                .map(|g| count_nonzero(g, depth + 1))
                .sum();
            own + inner
        })
        .sum()
}
