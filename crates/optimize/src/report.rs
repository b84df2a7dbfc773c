//! What [`crate::optimize`] did and why: each rewrite with the facts its proof relied on, each
//! NonZero (or gather) left with the proof that failed, counts, and the same as JSON.

use crate::patterns::Kind;
use std::collections::BTreeMap;
use std::fmt::Write;

pub(crate) use crate::report_json::quote;

/// One fact a rewrite relied on, checkable against run-time shapes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fact {
    /// `tensor` has this rank.
    Rank { tensor: String, rank: usize },
    /// `tensor` is bool.
    Bool { tensor: String },
    /// Axis `axis` of `tensor` has the size of axis `other_axis` of `other` (both `size`).
    SameSize {
        tensor: String,
        axis: usize,
        other: String,
        other_axis: usize,
        size: String,
    },
    /// The sizes of `tensor` and the leading ones of `other` are compared at run time (the
    /// guarded form: fused where they agree, the original where not).
    CheckedAtRunTime { tensor: String, other: String },
}

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

/// Why a NonZero (or the gather after it) was left as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    UnknownRank,
    ScalarInput,
    NotTransposed,
    OtherReaders,
    MaskNotBool,
    SizesNotProven,
    Conflict,
    Provider,
    /// ONNX defines no NonZero at the graph's opset, or it is newer than the rewriter knows.
    UnknownOpset,
    /// A gather of ArgWhere's coordinates that no pattern fuses (crate::readers).
    GatherNotFused,
    /// Static mode: the opset lacks CumSum and ScatterElements (before 11).
    OpsetTooOld,
    /// Static mode: a reader of the padded coordinates is not padding-safe.
    PaddingUnsafe,
    /// Static mode: an op whose output size depends on its input values.
    DataDependent,
    /// Static mode: a shape operand computed from tensor values.
    ValueDependentShape,
    /// Static mode: the mask's shape is not fixed (it depends on a result left dynamic, or on
    /// an op the inference does not cover).
    ShapeNotFixed,
}

impl Reason {
    /// A stable name for machines.
    pub fn code(self) -> &'static str {
        match self {
            Reason::UnknownRank => "unknown-rank",
            Reason::ScalarInput => "scalar-input",
            Reason::NotTransposed => "not-transposed",
            Reason::OtherReaders => "other-readers",
            Reason::MaskNotBool => "mask-not-bool",
            Reason::SizesNotProven => "sizes-not-proven",
            Reason::Conflict => "value-info-conflict",
            Reason::Provider => "provider",
            Reason::UnknownOpset => "unknown-opset",
            Reason::GatherNotFused => "gather-not-fused",
            Reason::OpsetTooOld => "opset-too-old",
            Reason::PaddingUnsafe => "padding-unsafe",
            Reason::DataDependent => "data-dependent",
            Reason::ValueDependentShape => "value-dependent-shape",
            Reason::ShapeNotFixed => "shape-not-fixed",
        }
    }

    /// What failed, for people.
    pub fn text(self) -> &'static str {
        match self {
            Reason::UnknownRank => "the input's rank is not proven",
            Reason::ScalarInput => "the input is a scalar (ONNX Runtime's NonZero gives [1, nnz] there, ArgWhere [nnz, 0])",
            Reason::NotTransposed => "its output is not read by a Transpose(perm=[1,0])",
            Reason::OtherReaders => "its output has readers besides the Transpose that became ArgWhere",
            Reason::MaskNotBool => "the gather was kept: the mask is not proven bool",
            Reason::SizesNotProven => "the gather was kept: data's leading sizes are not proven the mask's",
            Reason::Conflict => "a declared value_info disagrees with the inference; neither is trusted",
            Reason::Provider => "the chosen execution provider runs nothing of the nonzero domain",
            Reason::UnknownOpset => "the graph's ai.onnx opset defines no NonZero that this rewriter knows",
            Reason::GatherNotFused => "the gather of the coordinates stays: no pattern fuses this chain",
            Reason::OpsetTooOld => "static mode needs CumSum and ScatterElements (opset 11); the opset is never raised",
            Reason::PaddingUnsafe => "static mode: a reader of the padded result is not padding-safe",
            Reason::DataDependent => "static mode: the output size depends on tensor values",
            Reason::ValueDependentShape => "static mode: a shape operand is computed from tensor values",
            Reason::ShapeNotFixed => "static mode: the mask's shape is not fixed",
        }
    }
}

/// A NonZero, GatherND or Gather that a proof failed for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    pub graph: String,
    pub node: String,
    pub op: String,
    pub reason: Reason,
    /// The shapes as far as known, or what disagreed.
    pub detail: String,
}

/// A reader that needs an ArgWhere's coordinates themselves (crate::readers).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsedCoordinates {
    pub graph: String,
    /// The ArgWhere whose coordinates are read.
    pub argwhere: String,
    /// The reading node, or `the graph's outputs`.
    pub reader: String,
    /// Its op type (`output` for a graph output).
    pub op: String,
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
    pub static_mode: Option<crate::static_mode::StaticReport>,
}

pub(crate) fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
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
            return s.summary(self);
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
