//! What static mode did, for people and as the `static` key of the JSON report. The nodes it
//! left dynamic are in `Report::left`, with the static reason codes.

use crate::report::{plural, quote, Left, Report};

/// What static mode (crate::static_mode) did, besides the nodes it left (in `Report::left`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticReport {
    /// Every graph input (initializers aside) with the fixed shape it now has.
    pub input_shapes: Vec<(String, Vec<i64>)>,
    pub capacity: Option<i64>,
    /// `nonzero` ops replaced by their standard bodies first.
    pub lowered: usize,
    /// (kind, line): `masked-write`, `count`, `fixed-capacity`.
    pub rewrites: Vec<(String, String)>,
    /// Padded graph outputs: (name, its `<name>_count` output, the padded axis).
    pub count_outputs: Vec<(String, String, usize)>,
}

fn dims_text(dims: &[i64]) -> String {
    let parts: Vec<String> = dims.iter().map(i64::to_string).collect();
    format!("[{}]", parts.join(", "))
}

impl StaticReport {
    /// Lines for the CLI: the counts, the rewrites, the fixed inputs, the count outputs, and
    /// what stays dynamic (reason codes).
    pub fn summary(&self, report: &Report) -> String {
        let mut lines = vec![format!(
            "static: {}: {} removed, {} left; {} other nodes still dynamic; {} rewrites; {} removed",
            plural(report.nonzero_nodes, "NonZero"),
            report.nonzero_rewritten(),
            report.nonzero_left(),
            report.left.len() - report.nonzero_left(),
            self.rewrites.len(),
            plural(report.removed_nodes, "node"),
        )];
        lines.extend(
            self.rewrites
                .iter()
                .map(|(_, line)| format!("static: {line}")),
        );
        let inputs: Vec<String> = self
            .input_shapes
            .iter()
            .map(|(n, d)| format!("{n} {}", dims_text(d)))
            .collect();
        lines.push(format!("static: inputs {}", inputs.join(", ")));
        if self.lowered > 0 {
            lines.push(format!(
                "static: {} library ops lowered to standard ops first",
                self.lowered
            ));
        }
        for (out, count, _) in &self.count_outputs {
            lines.push(format!(
                "static: output {out} padded; its count is the output {count}"
            ));
        }
        for l in &report.left {
            lines.push(format!(
                "static: dynamic: {} {} in {}: {}: {}",
                l.op,
                l.node,
                l.graph,
                l.reason.code(),
                l.detail
            ));
        }
        lines.join("\n")
    }

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
        format!(
            "{{\"input_shapes\": {{{}}}, \"capacity\": {}, \"lowered\": {}, \"rewrites\": [{}], \"count_outputs\": {{{}}}}}",
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
        "{count} still dynamic, nothing written (--allow-dynamic writes it anyway):\n  {}",
        lines.join("\n  ")
    ))
}
