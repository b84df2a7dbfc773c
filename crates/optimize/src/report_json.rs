//! The report as JSON (docs/optimize.md, "Output", lists the fields).

use crate::report::{Fact, Report, Rewrite};
use nonzero_rewrite_graph::text::quote;

impl Report {
    /// The whole report as JSON (see docs/optimize.md for the fields).
    pub fn to_json(&self) -> String {
        let reasons = |nonzero: bool| {
            let parts: Vec<String> = self
                .reason_counts(nonzero)
                .iter()
                .map(|(r, n)| format!("{}: {n}", quote(r.code())))
                .collect();
            format!("{{{}}}", parts.join(", "))
        };
        let rewrites: Vec<String> = self.rewrites.iter().map(rewrite_json).collect();
        let used: Vec<String> = self
            .coordinates_used
            .iter()
            .map(|u| {
                format!(
                    "{{\"graph\": {}, \"argwhere\": {}, \"reader\": {}, \"op\": {}}}",
                    quote(&u.graph),
                    quote(&u.argwhere),
                    quote(&u.reader),
                    quote(&u.op)
                )
            })
            .collect();
        let left: Vec<String> = self
            .left
            .iter()
            .map(|l| {
                format!(
                    "{{\"graph\": {}, \"node\": {}, \"op\": {}, \"reason\": {}, \"text\": {}, \"detail\": {}}}",
                    quote(&l.graph), quote(&l.node), quote(&l.op), quote(l.reason.code()),
                    quote(l.reason.text()), quote(&l.detail)
                )
            })
            .collect();
        let static_mode = self
            .static_mode
            .as_ref()
            .map_or("null".to_string(), |s| s.to_json());
        format!(
            "{{\"nonzero\": {}, \"rewritten\": {}, \"left\": {}, \"moved_to_domain\": {}, \"reasons\": {}, \"gathers_kept\": {}, \"removed_nodes\": {}, \"graphs\": {}, \"note\": {}, \"fallback_functions\": {}, \"coordinates_used\": [{}], \"rewrites\": [{}], \"left_nodes\": [{}], \"static\": {}}}",
            self.nonzero_nodes,
            self.nonzero_rewritten(),
            self.nonzero_left(),
            self.moved_to_domain,
            reasons(true),
            reasons(false),
            self.removed_nodes,
            self.graphs,
            self.note.as_deref().map_or("null".to_string(), quote),
            self.fallback_functions,
            used.join(", "),
            rewrites.join(", "),
            left.join(", "),
            static_mode
        )
    }
}

fn rewrite_json(r: &Rewrite) -> String {
    let facts: Vec<String> = r
        .facts
        .iter()
        .map(|f| match f {
            Fact::Rank { tensor, rank } => format!("{{\"tensor\": {}, \"rank\": {rank}}}", quote(tensor)),
            Fact::Bool { tensor } => format!("{{\"tensor\": {}, \"elem_type\": \"bool\"}}", quote(tensor)),
            Fact::SameSize { tensor, axis, other, other_axis, size } => format!(
                "{{\"tensor\": {}, \"axis\": {axis}, \"equals\": {{\"tensor\": {}, \"axis\": {other_axis}}}, \"size\": {}}}",
                quote(tensor), quote(other), quote(size)
            ),
            Fact::CheckedAtRunTime { tensor, other } => format!(
                "{{\"tensor\": {}, \"leading_sizes_of\": {}, \"checked\": \"at run time\"}}",
                quote(tensor), quote(other)
            ),
        })
        .collect();
    format!(
        "{{\"kind\": {}, \"op\": {}, \"graph\": {}, \"node\": {}, \"line\": {}, \"facts\": [{}]}}",
        quote(&format!("{:?}", r.kind)),
        quote(r.kind.op_type()),
        quote(&r.graph),
        quote(&r.node),
        quote(&r.line),
        facts.join(", ")
    )
}
