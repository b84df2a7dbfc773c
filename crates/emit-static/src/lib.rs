//! The rewriter's static target, `nonzero optimize --static`: a model of standard ONNX ops in
//! which no shape depends on tensor values, for compilers and accelerators that refuse
//! data-dependent shapes (docs/static.md).
//!
//! Architecture invariant: this target knows no other target. It reads the matches and proofs of
//! nonzero-rewrite-match, lowers the library's ops through their bodies in the graph layer
//! (nonzero-rewrite-graph's `library`), and reports in plain values ([`StaticReport`], [`Tally`])
//! that the driver puts into its report (docs/architecture.md).
//!
//! In order: every graph input gets a fixed shape ([`inputs`]); the library's ops are lowered to
//! their standard bodies everywhere ([`lower`]). Then per graph, each body before its graph
//! ([`scope`]): an If the fixed shapes decide becomes its branch ([`branches`]); rewrites that
//! change no output remove NonZero where its coordinates are not needed ([`writes`], [`counts`]);
//! what must stay a list gets a fixed capacity ([`capacity`], [`compact`]) where its padding
//! reaches only padding-safe readers ([`padding`]), padded outputs gaining `<name>_count`
//! ([`outputs`]), the shapes each step fixed folded ([`fold`]); whatever still depends on values
//! is reported ([`dynamic`]).

mod branches;
mod capacity;
mod capped;
mod compact;
mod count_if;
mod counted_loops;
mod counts;
mod dead;
mod derived;
mod dynamic;
mod emit;
mod exact;
mod fixed;
mod fold;
mod gathers;
mod grid_writes;
mod if_outputs;
mod index_gather;
pub mod inputs;
mod litert;
mod lower;
mod mask;
mod nms;
mod outputs;
mod padding;
mod partners;
mod portable;
mod positions;
mod qnn;
mod reductions;
mod rejoin;
mod rknn;
mod scalar_inputs;
mod scatter;
mod scope;
mod sequences;
mod sinks;
pub mod summary;
mod target;
mod topk;
mod whole_split;
mod writes;

pub use summary::{still_dynamic, StaticReport};
pub use target::Target;

use crate::graph::{describe, is_onnx_op};
use crate::infer::BodyInputs;
use emit::Emitter;
use nonzero_proto::onnx::{GraphProto, ModelProto};
use nonzero_rewrite_analysis::dims::static_dims;
use nonzero_rewrite_analysis::findings::{Left, Reason};
use nonzero_rewrite_graph::indexed::remove_dead;
use nonzero_rewrite_graph::{GraphError, MAX_SUBGRAPH_DEPTH};
use scope::Scope;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

// The lower layers' modules at the paths this crate's modules name them by.
use nonzero_rewrite_analysis::{infer, trace};
use nonzero_rewrite_graph::{graph, versions};

/// The first opset with CumSum and ScatterElements.
const MIN_OPSET: i64 = 11;

/// What the static target is asked to do (the driver's `--static` options).
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The shape of each named graph input, over what the model declares.
    pub input_shapes: BTreeMap<String, Vec<i64>>,
    /// The most coordinates or rows a data-dependent output holds (default: the mask's size).
    pub capacity: Option<i64>,
    /// Per graph output of the main graph, the capacity of the selections reaching it.
    pub output_capacities: BTreeMap<String, i64>,
    /// Write the model even when data-dependent nodes remain (they are reported).
    pub allow_dynamic: bool,
    /// The toolchain the forms are for (`--target`; [`target`]).
    pub target: Target,
}

/// The counts the static target adds to the driver's report, and the nodes it left.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// ONNX NonZero nodes in the model as given.
    pub nonzero_nodes: usize,
    /// Nodes left dynamic, with the static reason codes.
    pub left: Vec<Left>,
    /// Nodes removed because the rewrites left them unread.
    pub removed_nodes: usize,
    /// Graphs visited.
    pub graphs: usize,
}

/// Why the static target wrote nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaticError {
    /// The model's own fault (no graph, nested too deep).
    Graph(GraphError),
    /// Static mode could not make the model static (inputs without fixed shapes, nodes left
    /// dynamic without `allow_dynamic`, a `<name>_count` that exists).
    Refused(String),
}

impl fmt::Display for StaticError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StaticError::Graph(e) => e.fmt(f),
            StaticError::Refused(why) => write!(f, "static mode: {why}"),
        }
    }
}

impl std::error::Error for StaticError {}

/// Replaces node `at` by what `e` emitted (whose last node writes the node's output).
/// Initializers the replaced node read that nothing reads now go too (a reduction's constant
/// axes, say), as dead-node removal does for the nodes it removes.
fn replace(graph: &mut GraphProto, at: usize, e: Emitter) -> HashSet<String> {
    let removed = graph.node.remove(at);
    e.insert(graph, at);
    let inputs: HashSet<String> = removed.input.into_iter().collect();
    // Initializers only the replaced node read go; found by one scan for just those names (an
    // index of the whole graph per rewrite made static mode quadratic).
    let declared: HashSet<&str> = graph
        .input
        .iter()
        .filter_map(|i| i.name.as_deref())
        .collect();
    let mut unread: HashSet<String> = graph
        .initializer
        .iter()
        .filter_map(|t| t.name.clone())
        .filter(|n| inputs.contains(n) && !declared.contains(n.as_str()))
        .collect();
    if !unread.is_empty() {
        let mut read = HashSet::new();
        for node in &graph.node {
            unread.retain(|n| !node.input.contains(n));
            graph::names_read_in_bodies(node, &mut read);
        }
        unread.retain(|n| {
            !read.contains(n) && !graph.output.iter().any(|o| o.name.as_ref() == Some(n))
        });
        graph
            .initializer
            .retain(|t| !unread.contains(t.name.as_deref().unwrap_or("")));
    }
    inputs
}

/// Makes `model` static as the module doc says, and says what it did. Errors: inputs that cannot
/// be fixed, a `<name>_count` that exists, and (without `allow_dynamic`) anything left dynamic.
pub fn run(
    model: &mut ModelProto,
    options: &Settings,
) -> Result<(StaticReport, Tally), StaticError> {
    let mut tally = Tally::default();
    let report = &mut tally;
    let opset = crate::versions::onnx_opset(&model.opset_import).unwrap_or(0);
    let graph = model
        .graph
        .as_mut()
        .ok_or(StaticError::Graph(GraphError::Incomplete("graph")))?;
    let mut summary = StaticReport {
        input_shapes: inputs::fix_input_shapes(graph, &options.input_shapes)?,
        capacity: options.capacity,
        output_capacities: options.output_capacities.clone(),
        ..Default::default()
    };
    outputs::check_named_capacities(graph, &options.output_capacities)?;
    if let Some(line) = options.target.why() {
        summary.rewrites.push(("target".to_string(), line));
    }
    report.nonzero_nodes = summary::count_nonzero(graph, 0);
    let original = dead::outputs(graph);
    let mut pass = StaticPass {
        capacity: options.capacity,
        output_capacities: &options.output_capacities,
        summary: &mut summary,
        known: HashMap::new(),
        rejoined: HashMap::new(),
        dead: HashSet::new(),
        flatten: vec![],
        report,
    };
    let scope = Scope {
        opset,
        outer: None,
        body_inputs: &BodyInputs::Declared,
        outer_names: &HashSet::new(),
        label: "main",
        depth: 0,
        target: options.target,
        pad_outputs: false,
    };
    // First everywhere, so that a Loop's carried shapes are proven on standard ops.
    pass.lower(graph, &scope)?;
    pass.graph(graph, &scope)?;
    portable::finish(graph, &scope, &mut pass.summary.rewrites);
    pass.report.removed_nodes += dead::sweep(graph, &original);
    let known = std::mem::take(&mut pass.known);
    dynamic::scan(graph, "main", &known, 0, &mut report.left);
    if report.left.is_empty() {
        outputs::not_fixed(graph, "main", 0, &mut report.left);
    }
    lower::drop_unused_domain(model);
    match summary::still_dynamic(&report.left) {
        Some(why) if !options.allow_dynamic => Err(StaticError::Refused(why)),
        _ => Ok((summary, tally)),
    }
}

/// State shared by every graph of one model.
struct StaticPass<'r> {
    capacity: Option<i64>,
    output_capacities: &'r BTreeMap<String, i64>,
    summary: &'r mut StaticReport,
    /// Why each NonZero left was left, by output name (names are unique in a model).
    known: HashMap<String, (Reason, String)>,
    /// Each padded input cut to its count at a Concat ([`rejoin`]), by the cut's name: which
    /// selection and count it has, so that Concats of the same lists share one selection.
    rejoined: HashMap<String, String>,
    /// Tensors whose producers the sinks may have left unread: removed together once the
    /// sinks are written ([`StaticPass::remove_unread`]), not one graph index per sink.
    dead: HashSet<String>,
    /// Ifs (by first output) whose branches' selections were joined, to become both branches
    /// and Wheres once the graph's bodies are done ([`if_outputs::flatten`]).
    flatten: Vec<String>,
    report: &'r mut Tally,
}

impl StaticPass<'_> {
    /// The library's ops of `graph` and of every body lowered to their standard bodies, and
    /// what the bodies repeat merged ([`lower`]).
    fn lower(&mut self, graph: &mut GraphProto, scope: &Scope) -> Result<(), StaticError> {
        if scope.depth > MAX_SUBGRAPH_DEPTH {
            return Err(StaticError::Graph(GraphError::TooDeep));
        }
        let lowered = lower::lower_library_ops(graph, scope);
        if lowered > 0 {
            self.summary.lowered += lowered;
            self.report.removed_nodes += lower::merge_repeated(graph);
        }
        self.each_body(graph, scope, false, Self::lower)
    }

    /// One graph: the Ifs its shapes decide replaced by their branch ([`branches`]), its bodies
    /// made static (they see its shapes), then its own exact rewrites and fixed capacities.
    fn graph(&mut self, graph: &mut GraphProto, scope: &Scope) -> Result<(), StaticError> {
        if scope.depth > MAX_SUBGRAPH_DEPTH {
            return Err(StaticError::Graph(GraphError::TooDeep));
        }
        self.report.graphs += 1;
        self.fold(graph, scope);
        if scope.opset >= MIN_OPSET {
            let lines = branches::fold_known(graph, scope);
            if !lines.is_empty() {
                // A taken branch's nodes may compute from shapes too.
                self.fold(graph, scope);
            }
            for line in lines {
                self.summary
                    .rewrites
                    .push(("known-branch".to_string(), line));
            }
        }
        self.each_body(graph, scope, true, Self::graph)?;
        if scope.depth == 0 && !self.flatten.is_empty() {
            let ifs = std::mem::take(&mut self.flatten);
            for line in if_outputs::flatten(graph, &ifs) {
                self.summary
                    .rewrites
                    .push(("branches-joined".to_string(), line));
            }
        }
        if scope.opset < MIN_OPSET {
            for node in graph.node.iter().filter(|n| is_onnx_op(n, "NonZero")) {
                let why = format!("opset {} has no CumSum or ScatterElements (from {MIN_OPSET}); the rewriter never raises the opset", scope.opset);
                self.known
                    .insert(node.output[0].clone(), (Reason::OpsetTooOld, why));
            }
            return Ok(());
        }
        let before = self.summary.rewrites.len();
        exact::rewrites(graph, scope, self.summary, self.report);
        if self.summary.rewrites.len() > before {
            // The Shapes of fixed tensors those rewrites wrote (a row mask's spread reads the
            // data's): folded now, or making the model static again would fold them.
            self.fold(graph, scope);
        }
        if scope.depth == 0 {
            self.capped_lengths(graph, scope)?;
        }
        let compacted = self.summary.compacted.len();
        self.fixed_capacity(graph, scope)?;
        if self.summary.compacted.len() > compacted {
            self.fold(graph, scope); // shapes read of padded rows, fixed now (idempotence)
        }
        outputs::declare_fixed(graph, scope);
        Ok(())
    }

    /// The shape arithmetic of `graph` folded into initializers ([`fold`]).
    fn fold(&mut self, graph: &mut GraphProto, scope: &Scope) {
        let folded = fold::fold_constants(graph, scope);
        if folded.nodes == 0 {
            return;
        }
        self.report.removed_nodes += folded.removed;
        let line = format!(
            "{} computed from constants and fixed shapes alone became {}",
            nonzero_rewrite_graph::text::plural(folded.nodes, "node"),
            nonzero_rewrite_graph::text::plural(folded.initializers, "initializer"),
        );
        self.summary
            .rewrites
            .push(("folded".to_string(), scope.line(line)));
    }

    /// Runs `visit` on every If, Loop and Scan body of `graph`, in place, each in its scope: the
    /// enclosing graphs' names and a label, and with `shaped`, this graph's shapes and how far
    /// the body's own inputs are trusted. A body's rewrites can leave a node of `graph` unread
    /// (an outer NonZero whose only reader was in the body): it goes too.
    fn each_body(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        shaped: bool,
        visit: fn(&mut Self, &mut GraphProto, &Scope) -> Result<(), StaticError>,
    ) -> Result<(), StaticError> {
        let shapes = shaped.then(|| scope.shapes_of(graph).1);
        let mut unread = HashSet::new();
        for at in 0..graph.node.len() {
            if graph.node[at]
                .attribute
                .iter()
                .all(|a| a.g.is_none() && a.graphs.is_empty())
            {
                continue;
            }
            let mut names = scope.outer_names.clone();
            scope::names_in(graph, &mut names, 0);
            let mut node = std::mem::take(&mut graph.node[at]);
            let mut read_before = HashSet::new();
            graph::names_read_in_bodies(&node, &mut read_before);
            let node_label = format!("{}/{}", scope.label, describe(&node));
            let body_inputs = match &shapes {
                Some(shapes) => BodyInputs::of(&node, shapes),
                None => BodyInputs::Declared,
            };
            let pad_outputs = shaped && if_outputs::may_pad_outputs(graph, &node, scope.depth);
            let mut result = Ok(());
            for attribute in &mut node.attribute {
                let attr_name = attribute.name.clone().unwrap_or_default();
                for body in attribute.g.iter_mut().chain(attribute.graphs.iter_mut()) {
                    let label = format!("{node_label}.{attr_name}");
                    let inner = Scope {
                        opset: scope.opset,
                        outer: shapes.as_ref(),
                        body_inputs: &body_inputs,
                        outer_names: &names,
                        label: &label,
                        depth: scope.depth + 1,
                        target: scope.target,
                        pad_outputs,
                    };
                    result = result.and_then(|_| visit(self, body, &inner));
                }
            }
            if pad_outputs && result.is_ok() {
                self.join_branch_counts(graph, &mut node);
            }
            let mut read_after = HashSet::new();
            graph::names_read_in_bodies(&node, &mut read_after);
            unread.extend(read_before.difference(&read_after).cloned());
            graph.node[at] = node;
            result?;
        }
        self.report.removed_nodes += remove_dead(graph, unread);
        Ok(())
    }
}
