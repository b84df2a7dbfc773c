//! What [`crate::optimize`] did and why: each rewrite with the facts its proof relied on, each
//! NonZero (or gather) left with the proof that failed, counts, and the same as JSON.

pub use nonzero_emit_library::Kind;
use nonzero_emit_static::summary::dims_text;
use nonzero_emit_static::StaticReport;
pub use nonzero_rewrite_analysis::findings::{Fact, Left, Reason, UsedCoordinates};
use nonzero_rewrite_graph::text::plural;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One applied rewrite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewrite {
    pub kind: Kind,
    /// One line for people: what was replaced by what.
    pub line: String,
    /// Where: `main`, a subgraph path, or `function DOMAIN.NAME`.
    pub graph: String,
    /// The node replaced (its name, or `<Op -> output>`).
    pub node: String,
    pub facts: Vec<Fact>,
}

/// What [`crate::optimize`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub rewrites: Vec<Rewrite>,
    /// NonZero nodes left, and gathers after a NonZero that were kept, with reasons.
    pub left: Vec<Left>,
    /// ONNX NonZero nodes in the model as given.
    pub nonzero_nodes: usize,
    /// NonZero nodes moved to the `nonzero` domain (`Options::nonzero_domain`).
    pub moved_to_domain: usize,
    /// Nodes removed because the rewrites left them unread.
    pub removed_nodes: usize,
    /// Graphs visited (the main graph, every subgraph, every function body).
    pub graphs: usize,
    /// Set when the options ruled out every rewrite, saying why.
    pub note: Option<String>,
    /// Model-local functions added so that the model runs without the library.
    pub fallback_functions: usize,
    /// Readers that need the coordinates of an ArgWhere (not a fault: not "left").
    pub coordinates_used: Vec<UsedCoordinates>,
    /// Set in static mode.
    pub static_mode: Option<StaticReport>,
}

impl Report {
    /// How many rewrites of `kind`.
    pub fn count(&self, kind: Kind) -> usize {
        self.rewrites.iter().filter(|r| r.kind == kind).count()
    }

    /// NonZero nodes left in the ONNX domain.
    pub fn nonzero_left(&self) -> usize {
        self.left.iter().filter(|l| l.op == "NonZero").count()
    }

    /// NonZero nodes that rewrites removed.
    pub fn nonzero_rewritten(&self) -> usize {
        self.nonzero_nodes
            .saturating_sub(self.nonzero_left() + self.moved_to_domain)
    }

    /// Reason -> how many nodes were left for it, NonZero and gathers apart.
    pub fn reason_counts(&self, nonzero: bool) -> BTreeMap<Reason, usize> {
        let mut counts = BTreeMap::new();
        for l in self.left.iter().filter(|l| (l.op == "NonZero") == nonzero) {
            *counts.entry(l.reason).or_insert(0) += 1;
        }
        counts
    }

    /// The closing lines: counts of NonZero rewritten and left with each reason, the rewrites
    /// per kind, nodes removed, graphs searched.
    pub fn summary(&self) -> String {
        if let Some(s) = &self.static_mode {
            return static_summary(s, self);
        }
        let graphs = plural(self.graphs, "graph");
        if self.nonzero_nodes == 0 {
            return format!(
                "nothing to rewrite: the model has no NonZero ({graphs} searched); model unchanged"
            );
        }
        let mut out = format!(
            "{}: {} rewritten, {} left",
            plural(self.nonzero_nodes, "NonZero"),
            self.nonzero_rewritten(),
            self.nonzero_left()
        );
        if self.moved_to_domain > 0 {
            let _ = write!(out, ", {} moved to domain nonzero", self.moved_to_domain);
        }
        let kept: usize = self.reason_counts(false).values().sum();
        if kept > 0 {
            let _ = write!(out, ", {} kept", plural(kept, "gather"));
        }
        if !self.coordinates_used.is_empty() {
            let mut ops = BTreeMap::new();
            for u in &self.coordinates_used {
                *ops.entry(u.op.as_str()).or_insert(0) += 1;
            }
            let parts: Vec<String> = ops.iter().map(|(op, n)| format!("{n} {op}")).collect();
            let _ = write!(out, "\ncoordinates used by: {}", parts.join(", "));
        }
        for (nonzero, what) in [(true, "left"), (false, "gathers kept")] {
            let counts = self.reason_counts(nonzero);
            if counts.is_empty() {
                continue;
            }
            let parts: Vec<String> = counts
                .iter()
                .map(|(r, n)| format!("{n} {}", r.code()))
                .collect();
            let _ = write!(out, "\n{what}: {}", parts.join(", "));
        }
        if let Some(note) = &self.note {
            let _ = write!(out, "\n{note}");
        }
        let kinds = [
            Kind::BooleanMaskGatherNd,
            Kind::BooleanMaskGather,
            Kind::BooleanMaskLinear,
            Kind::BooleanMaskAxis,
            Kind::MaskedFill,
            Kind::MaskedScatter,
            Kind::ArgWhere,
        ];
        let mut parts: Vec<String> = kinds
            .iter()
            .filter(|&&k| self.count(k) > 0)
            .map(|&k| format!("{} {}", self.count(k), k.label()))
            .collect();
        let guarded = self
            .rewrites
            .iter()
            .filter(|r| {
                r.facts
                    .iter()
                    .any(|f| matches!(f, Fact::CheckedAtRunTime { .. }))
            })
            .count();
        if guarded > 0 {
            parts.push(format!(
                "{guarded} of them guarded (sizes compared at run time)"
            ));
        }
        let _ = write!(
            out,
            "\n{}{}{}; {} removed; {graphs} searched{}",
            plural(self.rewrites.len(), "rewrite"),
            if parts.is_empty() { "" } else { ": " },
            parts.join(", "),
            plural(self.removed_nodes, "node"),
            if self.rewrites.is_empty() && self.moved_to_domain == 0 {
                "; model unchanged"
            } else {
                ""
            }
        );
        if self.fallback_functions > 0 {
            let _ = write!(
                out,
                "\n{} added (the model also runs without the library)",
                plural(self.fallback_functions, "fallback function")
            );
        }
        out
    }

    /// One line per node left: where, what, which proof failed, the shapes.
    pub fn left_lines(&self) -> Vec<String> {
        self.left
            .iter()
            .map(|l| {
                format!(
                    "left: {} {} in {}: {}: {}",
                    l.op,
                    l.node,
                    l.graph,
                    l.reason.text(),
                    l.detail
                )
            })
            .collect()
    }
}

/// Lines for the CLI: the counts, the rewrites, the fixed inputs, the count outputs, and
/// what stays dynamic (reason codes).
fn static_summary(s: &StaticReport, report: &Report) -> String {
    let mut lines = vec![format!(
        "static: {}: {} removed, {} left; {} still dynamic; {}; {} removed",
        plural(report.nonzero_nodes, "NonZero"),
        report.nonzero_rewritten(),
        report.nonzero_left(),
        plural(report.left.len() - report.nonzero_left(), "other node"),
        plural(s.rewrites.len(), "rewrite"),
        plural(report.removed_nodes, "node"),
    )];
    lines.extend(s.rewrites.iter().map(|(_, line)| format!("static: {line}")));
    let inputs: Vec<String> = s
        .input_shapes
        .iter()
        .map(|(n, d)| format!("{n} {}", dims_text(d)))
        .collect();
    lines.push(format!("static: inputs {}", inputs.join(", ")));
    if s.lowered > 0 {
        lines.push(format!(
            "static: {} lowered to standard ops first",
            plural(s.lowered, "library op")
        ));
    }
    for (out, count, _) in &s.count_outputs {
        lines.push(format!(
            "static: output '{out}' padded; its count is the output '{count}'"
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
    if !report.left.is_empty() {
        lines.push(format!(
            "static: {}",
            nonzero_emit_static::summary::tally(&report.left)
        ));
    }
    lines.join("\n")
}
