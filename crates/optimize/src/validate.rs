//! The model is checked before anything is rewritten, so that a model ONNX Runtime refuses never
//! comes out as one it loads. One pass over each graph (the main graph, every subgraph, every
//! function body) refuses, naming the node and the name:
//! - a default-domain op where no `ai.onnx` opset is imported, or a node that does not fit its
//!   op's definition at the imported opset (inputs, outputs, attributes), for the ops the
//!   rewriter knows (crate::versions);
//! - a name defined twice in one graph (a graph input with an initializer of the same name is
//!   allowed: it is the input's default);
//! - a node input (or graph output) that is not a graph input, an initializer, a node's output
//!   or an outer-scope name;
//! - a cycle. Nodes out of order but acyclic are valid: ONNX Runtime sorts them.

use crate::graph::describe;
use crate::versions::{conformance, is_onnx_domain, onnx_opset};
use crate::{OptimizeError, MAX_SUBGRAPH_DEPTH};
use nonzero_proto::onnx::{GraphProto, ModelProto, NodeProto};
use std::collections::{HashMap, HashSet};

/// Checks `model` as the module doc says.
pub fn check_model(model: &ModelProto) -> Result<(), OptimizeError> {
    let opset = onnx_opset(&model.opset_import);
    if let Some(graph) = &model.graph {
        check_graph(graph, &[], opset, "main", 0)?;
    }
    for f in &model.functions {
        let label = format!(
            "function {}.{}",
            f.domain.as_deref().unwrap_or(""),
            f.name.as_deref().unwrap_or("")
        );
        let inputs: HashSet<String> = f.input.iter().cloned().collect();
        let mut defined = Definitions::default();
        for name in &f.input {
            defined.define(name, "a function input", &label)?;
        }
        let imports = onnx_opset(&f.opset_import);
        check_nodes(&f.node, &[], &defined, &[&inputs], imports, &label, 0)?;
        if let Some(out) = f
            .output
            .iter()
            .find(|o| !body_defines(&f.node, o) && !f.input.contains(o))
        {
            return Err(invalid(format!(
                "{label}: the function output '{out}' is not defined by any node of its body"
            )));
        }
    }
    Ok(())
}

fn body_defines(nodes: &[NodeProto], name: &str) -> bool {
    nodes.iter().any(|n| n.output.iter().any(|o| o == name))
}

/// What each name of one graph is, for messages.
#[derive(Default)]
struct Definitions {
    what: HashMap<String, String>,
}

impl Definitions {
    fn has(&self, name: &str) -> bool {
        self.what.contains_key(name)
    }

    fn define(&mut self, name: &str, what: &str, label: &str) -> Result<(), OptimizeError> {
        if let Some(before) = self.what.insert(name.to_string(), what.to_string()) {
            return Err(OptimizeError::Invalid(format!(
                "{label}: the name '{name}' is defined twice, as {before} and as {what}"
            )));
        }
        Ok(())
    }
}

/// Checks one graph; returns the names it reads from outer scopes (for the caller's cycle check).
fn check_graph(
    graph: &GraphProto,
    outer: &[&HashSet<String>],
    opset: Option<i64>,
    label: &str,
    depth: usize,
) -> Result<HashSet<String>, OptimizeError> {
    if depth > MAX_SUBGRAPH_DEPTH {
        return Err(OptimizeError::TooDeep);
    }
    let mut defined = Definitions::default();
    for input in &graph.input {
        defined.define(input.name.as_deref().unwrap_or(""), "a graph input", label)?;
    }
    let inputs: HashSet<&str> = graph
        .input
        .iter()
        .filter_map(|i| i.name.as_deref())
        .collect();
    let mut initializers = HashSet::new();
    let sparse = graph
        .sparse_initializer
        .iter()
        .filter_map(|s| s.values.as_ref());
    for t in graph.initializer.iter().chain(sparse) {
        let name = t.name.as_deref().unwrap_or("");
        if !initializers.insert(name) {
            return Err(invalid(format!(
                "{label}: the initializer '{name}' is defined twice"
            )));
        }
        if !inputs.contains(name) {
            defined.define(name, "an initializer", label)?;
        }
    }
    let names: HashSet<String> = defined.what.keys().cloned().collect();
    let mut scope = outer.to_vec();
    scope.push(&names);
    let outputs: Vec<&str> = graph
        .output
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    check_nodes(&graph.node, &outputs, &defined, &scope, opset, label, depth)
}

/// Checks the `nodes` of a graph (or function body) whose inputs and initializers are
/// `defined`, and that its `outputs` are defined; `scope` holds every name visible from
/// enclosing graphs and this one's inputs. Returns the names read from outside the graph.
fn check_nodes(
    nodes: &[NodeProto],
    outputs: &[&str],
    defined: &Definitions,
    scope: &[&HashSet<String>],
    opset: Option<i64>,
    label: &str,
    depth: usize,
) -> Result<HashSet<String>, OptimizeError> {
    // Node outputs, so that a node may read one produced further down (ONNX Runtime sorts).
    let mut producer: HashMap<&str, usize> = HashMap::new();
    let mut defined_here: HashSet<String> = defined.what.keys().cloned().collect();
    for (i, node) in nodes.iter().enumerate() {
        for out in node.output.iter().filter(|o| !o.is_empty()) {
            if !defined_here.insert(out.clone()) {
                let before = producer
                    .get(out.as_str())
                    .map(|&p| format!("the output of node {}", describe(&nodes[p])))
                    .or_else(|| defined.what.get(out).cloned())
                    .unwrap_or_default();
                return Err(invalid(format!(
                    "{label}: the name '{out}' is defined twice, as {before} and as the output of node {}",
                    describe(node)
                )));
            }
            producer.insert(out, i);
        }
    }
    let visible =
        |name: &str| defined_here.contains(name) || scope.iter().any(|s| s.contains(name));
    let mut free = HashSet::new();
    let mut depends: Vec<Vec<usize>> = vec![vec![]; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        let op = node.op_type.as_deref().unwrap_or("");
        let mut reads: Vec<String> = node
            .input
            .iter()
            .filter(|n| !n.is_empty())
            .cloned()
            .collect();
        for a in &node.attribute {
            for (k, sub) in a.g.iter().chain(a.graphs.iter()).enumerate() {
                let attr = a.name.as_deref().unwrap_or("");
                let sub_label = format!("{label}/{}.{attr}{}", describe(node), suffix(k));
                let mut inner = scope.to_vec();
                inner.push(&defined_here);
                reads.extend(check_graph(sub, &inner, opset, &sub_label, depth + 1)?);
            }
        }
        // After the subgraphs, so that nesting past the limit is reported as such.
        if is_onnx_domain(node.domain.as_deref()) {
            let Some(opset) = opset else {
                return Err(invalid(format!(
                    "{label}: node {} is the default-domain op {op}, but no ai.onnx opset is imported",
                    describe(node)
                )));
            };
            if let Err(why) = conformance(node, opset) {
                return Err(invalid(format!(
                    "{label}: node {} ({op}) {why}",
                    describe(node)
                )));
            }
        }
        for name in reads {
            if let Some(&p) = producer.get(name.as_str()) {
                depends[i].push(p);
            } else if !defined.has(&name) {
                if !visible(&name) {
                    return Err(invalid(format!(
                        "{label}: node {} ({op}) reads '{name}', which is not a graph input, an initializer, a node's output or an outer-scope name",
                        describe(node)
                    )));
                }
                free.insert(name);
            }
        }
    }
    for &out in outputs {
        if !visible(out) {
            return Err(invalid(format!(
                "{label}: the graph output '{out}' is not a graph input, an initializer, a node's output or an outer-scope name"
            )));
        }
        if !defined_here.contains(out) {
            free.insert(out.to_string());
        }
    }
    if let Some(stuck) = cycle(&depends) {
        let node = &nodes[stuck];
        return Err(invalid(format!(
            "{label}: the graph has a cycle through node {} ({}): it reads, directly or through other nodes, its own output",
            describe(node),
            node.op_type.as_deref().unwrap_or("")
        )));
    }
    Ok(free)
}

fn invalid(why: String) -> OptimizeError {
    OptimizeError::Invalid(why)
}

fn suffix(k: usize) -> String {
    if k == 0 {
        String::new()
    } else {
        format!("[{k}]")
    }
}

/// A node on a cycle, if `depends` (node -> nodes it reads from) has one (Kahn's algorithm).
fn cycle(depends: &[Vec<usize>]) -> Option<usize> {
    let mut waiting: Vec<usize> = depends.iter().map(Vec::len).collect();
    let mut readers: Vec<Vec<usize>> = vec![vec![]; depends.len()];
    for (i, ds) in depends.iter().enumerate() {
        for &d in ds {
            readers[d].push(i);
        }
    }
    let mut ready: Vec<usize> = (0..depends.len()).filter(|&i| waiting[i] == 0).collect();
    let mut done = 0;
    while let Some(i) = ready.pop() {
        done += 1;
        for &r in &readers[i] {
            waiting[r] -= 1;
            if waiting[r] == 0 {
                ready.push(r);
            }
        }
    }
    (done < depends.len()).then(|| {
        // A node still waiting on a node that is still waiting lies on or behind a cycle; walk
        // back along unfinished dependencies until a node repeats: that one is on the cycle.
        let mut seen = HashSet::new();
        let mut at = (0..depends.len())
            .find(|&i| waiting[i] > 0)
            .expect("some node waits");
        while seen.insert(at) {
            at = *depends[at]
                .iter()
                .find(|&&d| waiting[d] > 0)
                .expect("a waiting node waits on a waiting node");
        }
        at
    })
}
