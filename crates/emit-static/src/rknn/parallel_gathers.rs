//! For `--target rknn`: the Gathers (or GatherNDs) that read one tensor along one axis become
//! one at their indices put end to end, then a Split back into each one's part. rknn-toolkit2
//! 2.5.0's rule `remove_parallel_gather` merges gathers of the same data into one without
//! comparing their indices (a GatherND it has made a Gather first), so every expert of an MoE
//! read the last expert's tokens (torch_patterns/moe_router_*). Exact: a gather at concatenated
//! indices is the concatenation of the gathers. The graph is put back in topological order.

use crate::emit::{int_attr, ints_attr, Emitter};
use crate::graph::{is_onnx_op, names_read_in};
use crate::scope::Scope;
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_analysis::dims::static_dims;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

/// One Gather of a group: its node's position, its indices and their fixed dims.
struct Member {
    at: usize,
    indices: String,
    dims: Vec<i64>,
}

/// Merges every group of two or more Gathers of `graph` that read the same data along the same
/// axis, with indices of one type, of rank >= 1 and fixed sizes that agree past the first (and
/// so of GatherNDs with batch_dims 0 and indices of rank >= 2). Returns how many groups.
pub fn merge(graph: &mut GraphProto, scope: &Scope) -> usize {
    let (mut merged, mut skipped) = (0, HashSet::new());
    // One group at a time: a merge moves the positions the others were found at. A merged
    // group leaves one gather of its data, so no group comes back.
    while let Some((key, group)) = groups(graph, scope)
        .into_iter()
        .find(|(key, _)| !skipped.contains(key))
    {
        let before = graph.clone();
        merge_group(graph, scope, &group);
        // A member whose indices are computed from another member's rows cannot wait for one
        // gather of both: that group stays as it was.
        if topological(graph) {
            merged += 1;
        } else {
            *graph = before;
            skipped.insert(key);
        }
    }
    merged
}

/// What a group shares: the op, the data, the axis and the indices' type.
type Key = (String, String, i64, i32);

/// The groups, each in graph order; none shares a node.
fn groups(graph: &GraphProto, scope: &Scope) -> Vec<(Key, Vec<Member>)> {
    let (_, shapes) = scope.shapes_of(graph);
    let mut by_key: BTreeMap<Key, Vec<Member>> = BTreeMap::new();
    for (at, node) in graph.node.iter().enumerate() {
        let op = node.op_type.as_deref().unwrap_or("");
        let gather = is_onnx_op(node, "Gather") || is_onnx_op(node, "GatherND");
        if !gather || node.input.len() != 2 || node.output.len() != 1 {
            continue;
        }
        let Some(rank) = shapes.get(&node.input[0]).rank() else {
            continue;
        };
        let attr = |name| {
            crate::graph::int_attr(node, name)
                .ok()
                .flatten()
                .unwrap_or(0)
        };
        // A GatherND's indices are tuples along their last axis: its rows are along the first.
        let (axis, min_rank) = match op {
            "Gather" => match crate::infer::axis_in(attr("axis"), rank) {
                Some(axis) => (axis as i64, 1),
                None => continue,
            },
            _ if attr("batch_dims") == 0 => (0, 2),
            _ => continue,
        };
        let (indices, elem_type) = (&node.input[1], shapes.get(&node.input[1]).elem_type);
        let (Some(dims), Some(elem_type)) = (static_dims(&shapes, indices), elem_type) else {
            continue;
        };
        if dims.len() < min_rank {
            continue;
        }
        let key = (op.to_string(), node.input[0].clone(), axis, elem_type);
        let member = Member {
            at,
            indices: indices.clone(),
            dims,
        };
        by_key.entry(key).or_default().push(member);
    }
    by_key
        .into_iter()
        .filter(|(_, g)| g.len() > 1 && g.iter().all(|m| m.dims[1..] == g[0].dims[1..]))
        .collect()
}

/// One Gather at the members' indices concatenated, then a Split along the gather axis into the
/// members' outputs, in place of the first member; the others removed.
fn merge_group(graph: &mut GraphProto, scope: &Scope, group: &[Member]) {
    let first = graph.node[group[0].at].clone();
    let prefix = first
        .name
        .clone()
        .unwrap_or_else(|| first.output[0].clone());
    let mut e = Emitter::new(graph, scope, &format!("{prefix}/merged"));
    let indices: Vec<&str> = group.iter().map(|m| m.indices.as_str()).collect();
    let all = e.concat(&indices, 0);
    let op = first.op_type.as_deref().unwrap_or("Gather");
    let axis = match op {
        "Gather" => crate::graph::int_attr(&first, "axis")
            .ok()
            .flatten()
            .unwrap_or(0),
        _ => 0,
    };
    let rows = e.op(op, &[&first.input[0], &all], first.attribute.clone());
    let sizes: Vec<i64> = group.iter().map(|m| m.dims[0]).collect();
    if e.opset() >= 13 {
        let sizes = e.ints(&sizes);
        e.op("Split", &[&rows, &sizes], vec![int_attr("axis", axis)]);
    } else {
        let attributes = vec![int_attr("axis", axis), ints_attr("split", &sizes)];
        e.op("Split", &[&rows], attributes);
    }
    let outputs = group
        .iter()
        .map(|m| graph.node[m.at].output[0].clone())
        .collect();
    e.nodes.last_mut().expect("the Split").output = outputs;
    // From the last, so that the earlier positions stay valid; the first member's place takes
    // the new nodes.
    for m in group.iter().rev() {
        graph.node.remove(m.at);
    }
    e.insert(graph, group[0].at);
}

/// Reorders `graph.node` so that every node comes after what it reads (its inputs, and the names
/// its bodies read from this graph), keeping the given order where it can. False on a cycle
/// (the graph then keeps its order).
fn topological(graph: &mut GraphProto) -> bool {
    let producer: HashMap<&str, usize> = graph
        .node
        .iter()
        .enumerate()
        .flat_map(|(i, n)| n.output.iter().map(move |o| (o.as_str(), i)))
        .collect();
    let count = graph.node.len();
    let (mut waiting, mut readers) = (vec![0usize; count], vec![vec![]; count]);
    for (i, node) in graph.node.iter().enumerate() {
        let mut read: HashSet<String> = node.input.iter().cloned().collect();
        for body in node
            .attribute
            .iter()
            .flat_map(|a| a.g.iter().chain(&a.graphs))
        {
            names_read_in(body, &mut read, 1);
        }
        let from: HashSet<usize> = read
            .iter()
            .filter_map(|name| producer.get(name.as_str()).copied())
            .filter(|&p| p != i)
            .collect();
        waiting[i] = from.len();
        for p in from {
            readers[p].push(i);
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..count)
        .filter(|&i| waiting[i] == 0)
        .map(Reverse)
        .collect();
    let mut order = Vec::with_capacity(count);
    while let Some(Reverse(i)) = ready.pop() {
        order.push(i);
        for &r in &readers[i] {
            waiting[r] -= 1;
            if waiting[r] == 0 {
                ready.push(Reverse(r));
            }
        }
    }
    if order.len() != count {
        return false;
    }
    let mut nodes: Vec<Option<_>> = std::mem::take(&mut graph.node)
        .into_iter()
        .map(Some)
        .collect();
    graph.node = order
        .into_iter()
        .map(|i| nodes[i].take().expect("each node once"))
        .collect();
    true
}
