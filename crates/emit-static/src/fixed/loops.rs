//! For the portable targets, a Loop of the main graph that runs a constant number of times over
//! fixed-shape work becomes its body written out once per iteration: QNN HTP runs no Loop (its
//! body goes to the CPU EP), onnx2tf writes one as a WHILE that loses its data
//! (flatbuffer_direct) or fails to convert it (tf_converter), and rknn-toolkit2 refuses it.
//! Exports write `for i in range(n)` over a fixed n so (`total += (x[i] > 0).nonzero().shape[0]`,
//! `out = torch.where(m[i], x[i] * 2, out)`): once `--static` has fixed the body's shapes, the
//! Loop is a chain of the same steps.
//!
//! Only where the Loop runs a known number of times, from 1 to [`MAX_TRIPS`] (a constant trip
//! count and no early exit: [`crate::infer::exact_trips`]), the body is fixed-shape work
//! ([`super::fixed_work`]) whose carried values keep their dims, and the written-out nodes stay
//! within [`MAX_UNROLLED_NODES`]. Each iteration's scan outputs are stacked as the Loop stacks
//! them (Unsqueeze, then Concat).

use super::fixed_work;
use crate::emit::Emitter;
use crate::graph::is_onnx_op;
use crate::infer::{exact_trips, BodyInputs, ShapeTable};
use crate::scope::Scope;
use nonzero_proto::onnx::{GraphProto, NodeProto, ValueInfoProto};
use nonzero_rewrite_analysis::dims::static_dims;
use std::collections::{HashMap, HashSet};

/// The most iterations written out: a Loop over more rows than this stays a Loop.
pub const MAX_TRIPS: i64 = 256;
/// The most nodes one Loop's iterations may add.
pub const MAX_UNROLLED_NODES: usize = 4096;

/// Writes out every such Loop of `graph` (the main graph); returns a report line for each.
pub fn unroll(graph: &mut GraphProto, scope: &Scope) -> Vec<(String, String)> {
    let mut lines = vec![];
    // One at a time: each changes the graph's names and node positions.
    while let Some((at, trips)) = next_loop(graph, scope) {
        let first = graph.node[at].output.first().cloned().unwrap_or_default();
        write_out(graph, scope, at, trips);
        let line = format!(
            "fixed-shape loop: Loop -> {first} became its body written out {trips} times ({} takes no Loop)",
            scope.target.name()
        );
        lines.push(("unrolled-loop".to_string(), line));
    }
    lines
}

/// The first Loop of `graph` that can be written out, with its trip count.
fn next_loop(graph: &GraphProto, scope: &Scope) -> Option<(usize, i64)> {
    let (_, shapes) = scope.shapes_of(graph);
    graph
        .node
        .iter()
        .enumerate()
        .find_map(|(at, node)| Some((at, trips(&shapes, node, scope)?)))
}

/// The trip count of `node` when it is a Loop the module doc says can be written out.
fn trips(shapes: &ShapeTable, node: &NodeProto, scope: &Scope) -> Option<i64> {
    if !is_onnx_op(node, "Loop") {
        return None;
    }
    let body = body(node)?;
    let carried = node.input.len().checked_sub(2)?;
    if body.input.len() != carried + 2 || body.output.len() < carried + 1 {
        return None;
    }
    let trips = exact_trips(node, shapes)?;
    if !(1..=MAX_TRIPS).contains(&trips) || trips as usize * body.node.len() > MAX_UNROLLED_NODES {
        return None;
    }
    let body_scope = Scope {
        outer: Some(shapes),
        body_inputs: &BodyInputs::of(node, shapes),
        depth: 1,
        ..*scope
    };
    let outputs = fixed_work(body, &body_scope)?;
    // Each carried value keeps the dims it came in with.
    let keeps = (0..carried).all(|k| {
        let initial = static_dims(shapes, &node.input[2 + k]);
        initial.is_some() && initial.as_ref() == outputs.get(1 + k).map(|(dims, _)| dims)
    });
    keeps.then_some(trips)
}

fn body(node: &NodeProto) -> Option<&GraphProto> {
    node.attribute
        .iter()
        .find(|a| a.name.as_deref() == Some("body"))?
        .g
        .as_ref()
}

/// Replaces the Loop at `at` by its body `trips` times, each iteration's names fresh, its
/// iteration number a constant and its carried inputs the previous iteration's outputs.
fn write_out(graph: &mut GraphProto, scope: &Scope, at: usize, trips: i64) {
    let node = graph.node.remove(at);
    let body = body(&node).expect("checked: a Loop's body").clone();
    let first = node.output.first().cloned().unwrap_or_default();
    let mut e = Emitter::new(graph, scope, &format!("{first}/unrolled"));
    let carried = node.input.len() - 2;
    let names = |values: &[ValueInfoProto]| -> Vec<String> {
        values
            .iter()
            .map(|v| v.name.clone().unwrap_or_default())
            .collect()
    };
    let (inputs, outputs) = (names(&body.input), names(&body.output));
    // The iteration number and the condition as constants where the body uses them.
    let mut used = HashSet::new();
    crate::graph::names_read_in(&body, &mut used, 0);
    used.extend(outputs.iter().cloned());
    let always = used.contains(&inputs[1]).then(|| e.bool_scalar(true));
    // The body's initializers it reads, once, under fresh names.
    let mut constants: HashMap<String, String> = HashMap::new();
    for t in body
        .initializer
        .iter()
        .filter(|t| t.name.as_ref().is_some_and(|n| used.contains(n)))
    {
        let name = t.name.clone().unwrap_or_default();
        let fresh = e.fresh(&format!("const{name}"));
        let mut t = t.clone();
        t.name = Some(fresh.clone());
        graph.initializer.push(t);
        constants.insert(name, fresh);
    }
    let mut state: Vec<String> = node.input[2..].to_vec();
    let mut scans: Vec<Vec<String>> = vec![vec![]; outputs.len() - 1 - carried];
    let mut written = vec![];
    for i in 0..trips {
        let mut renamed = constants.clone();
        if used.contains(&inputs[0]) {
            renamed.insert(inputs[0].clone(), e.scalar(i));
        }
        if let Some(always) = &always {
            renamed.insert(inputs[1].clone(), always.clone());
        }
        for (k, value) in state.iter().enumerate() {
            renamed.insert(inputs[2 + k].clone(), value.clone());
        }
        for n in &body.node {
            let mut n = n.clone();
            for o in n.output.iter_mut().filter(|o| !o.is_empty()) {
                let fresh = e.fresh(&format!("{i}/{}", o.trim_start_matches('/')));
                renamed.insert(std::mem::replace(o, fresh.clone()), fresh);
            }
            for input in n.input.iter_mut() {
                if let Some(to) = renamed.get(input.as_str()) {
                    *input = to.clone();
                }
            }
            n.name = Some(e.fresh(&format!("{i}/{}", n.name.as_deref().unwrap_or("node"))));
            written.push(n);
        }
        let read = |name: &String| renamed.get(name).cloned().unwrap_or_else(|| name.clone());
        state = outputs[1..=carried].iter().map(read).collect();
        for (k, scan) in scans.iter_mut().enumerate() {
            scan.push(read(&outputs[1 + carried + k]));
        }
    }
    // The Loop's outputs: the last carried values, then each scan output stacked on axis 0.
    let mut finals: Vec<String> = state;
    for scan in &scans {
        let rows: Vec<String> = scan.iter().map(|s| e.unsqueeze(s, &[0])).collect();
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        finals.push(e.concat(&rows, 0));
    }
    for (y, value) in node.output.iter().zip(&finals) {
        if !y.is_empty() {
            e.op("Identity", &[value], vec![]);
            e.finish_as(y);
        }
    }
    e.insert(graph, at);
    graph.node.splice(at..at, written);
    // The trip count and the condition, where they were constants only the Loop read.
    let mut read = HashSet::new();
    crate::graph::names_read_in(graph, &mut read, 0);
    read.extend(graph.output.iter().filter_map(|o| o.name.clone()));
    graph.initializer.retain(|t| {
        let name = t.name.as_deref().unwrap_or("");
        !node.input[..2].iter().any(|i| i == name) || read.contains(name)
    });
}
