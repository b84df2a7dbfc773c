//! An If whose branches each return a selection (`y = x[m] if c else x[~m]`), its outputs the
//! main graph's: each branch's selection is compacted like a graph output of its own, gaining
//! `<name>_count` ([`crate::outputs`]); then the If gains `<y>_count`, a graph output, from the
//! branches' counts in one order. A branch whose selection stayed dynamic gives its own length
//! as its count (`Shape(out)[axis]`), so that the If's outputs stay one list per branch; the
//! report names what stayed dynamic there.
//!
//! Where every output of such an If is a selection joined so, and both branches are fully
//! static with no body, the If then becomes both branches and a Where per output
//! ([`flatten`]): NPU toolchains take no If (QNN HTP, LiteRT), and both branches are
//! fixed-shape work that cannot fail where the condition does not choose it.

use crate::graph::is_onnx_op;
use crate::StaticPass;
use nonzero_proto::onnx::{
    type_proto, GraphProto, NodeProto, TensorProto, TypeProto, ValueInfoProto,
};

/// True when the branches of `node` (in the graph `parent` at `depth`) may pad their outputs:
/// an If of the main graph whose every output is a main graph output.
pub(super) fn may_pad_outputs(parent: &GraphProto, node: &NodeProto, depth: usize) -> bool {
    let outputs: Vec<&str> = parent
        .output
        .iter()
        .filter_map(|o| o.name.as_deref())
        .collect();
    depth == 0
        && is_onnx_op(node, "If")
        && !node.output.is_empty()
        && node.output.iter().all(|o| outputs.contains(&o.as_str()))
}

fn branch<'a>(node: &'a mut NodeProto, name: &str) -> Option<&'a mut GraphProto> {
    let a = node
        .attribute
        .iter_mut()
        .find(|a| a.name.as_deref() == Some(name))?;
    a.g.as_mut()
}

fn output_names(g: &GraphProto) -> Vec<String> {
    g.output
        .iter()
        .map(|o| o.name.clone().unwrap_or_default())
        .collect()
}

/// The int64 scalar declaration of a count.
fn count_info(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(crate::compact::count_output_type()),
                shape: Some(Default::default()),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl StaticPass<'_> {
    /// After both branches of the If `node` (of the main graph `parent`) were made static: the
    /// If's `<y>_count` outputs from its branches' counts, in the If's output order.
    pub(super) fn join_branch_counts(&mut self, parent: &mut GraphProto, node: &mut NodeProto) {
        let Some(then) = branch(node, "then_branch").map(|g| output_names(g)) else {
            return;
        };
        let Some(other) = branch(node, "else_branch").map(|g| output_names(g)) else {
            return;
        };
        let outputs = node.output.clone();
        // (If output, then's output, else's output, padded axis) for each padded output.
        let mut padded = vec![];
        for (slot, y) in outputs.iter().enumerate() {
            let (Some(a), Some(b)) = (then.get(slot), other.get(slot)) else {
                continue;
            };
            let axis = self
                .summary
                .count_outputs
                .iter()
                .find(|(n, _, _)| n == a || n == b)
                .map(|(_, _, axis)| *axis);
            if let Some(axis) = axis {
                padded.push((y.clone(), a.clone(), b.clone(), axis));
            }
        }
        if padded.is_empty() {
            return;
        }
        // Branches padded to different capacities: the shorter padded on to the longer, with
        // the fill, so that the If's output has one fixed shape.
        for (_, a, b, axis) in &padded {
            let p = branch(node, "then_branch").and_then(|g| declared_rows(g, a, *axis));
            let q = branch(node, "else_branch").and_then(|g| declared_rows(g, b, *axis));
            if let (Some(p), Some(q)) = (p, q) {
                if p != q {
                    let (side, out, short) = if p < q {
                        ("then_branch", a, p)
                    } else {
                        ("else_branch", b, q)
                    };
                    let g = branch(node, side).expect("an If's branch");
                    pad_rows(g, out, *axis, p.max(q) - short);
                }
            }
        }
        for (side, names) in [("then_branch", 0), ("else_branch", 1)] {
            let g = branch(node, side).expect("an If's branch");
            for (_, a, b, axis) in &padded {
                let out = if names == 0 { a } else { b };
                let count = format!("{out}_count");
                // Counts come last, in the If's order: this one moved (or made) to the end.
                let declared = g
                    .output
                    .iter()
                    .position(|o| o.name.as_deref() == Some(&count));
                match declared {
                    Some(at) => {
                        let vi = g.output.remove(at);
                        g.output.push(vi);
                    }
                    None => {
                        let gather = length_of(g, out, *axis, &count);
                        g.node.push(gather);
                        g.output.push(count_info(&count));
                    }
                }
            }
        }
        let branch_outputs: Vec<&String> = padded.iter().flat_map(|(_, a, b, _)| [a, b]).collect();
        self.summary
            .count_outputs
            .retain(|(n, _, _)| !branch_outputs.contains(&n));
        let every = padded.len() == outputs.len();
        for (y, _, _, axis) in padded {
            let count = format!("{y}_count");
            node.output.push(count.clone());
            parent.output.push(count_info(&count));
            self.summary.count_outputs.push((y, count, axis));
        }
        let bodies = ["then_branch", "else_branch"].iter().any(|side| {
            branch(node, side).is_some_and(|g| {
                g.node.iter().any(|n| {
                    n.attribute
                        .iter()
                        .any(|a| a.g.is_some() || !a.graphs.is_empty())
                })
            })
        });
        // Both branches fully static: neither can fail when the condition does not choose it.
        let dynamic = ["then_branch", "else_branch"].iter().any(|side| {
            branch(node, side).is_some_and(|g| {
                g.node
                    .iter()
                    .any(|n| is_onnx_op(n, "NonZero") || is_onnx_op(n, "NonMaxSuppression"))
            })
        });
        if every && !bodies && !dynamic {
            self.flatten.push(node.output[0].clone());
        }
    }
}

/// Each If (by its first output) of `graph` in `ifs` as its two branches' nodes, then a Where
/// per output choosing by the If's condition. A name a branch defines that is taken elsewhere
/// gets the branch's name appended.
pub(super) fn flatten(graph: &mut GraphProto, ifs: &[String]) -> Vec<String> {
    let mut lines = vec![];
    for first in ifs {
        let Some(at) = crate::graph::writer_of(graph, first) else {
            continue;
        };
        let mut node = graph.node.remove(at);
        let mut taken = std::collections::HashSet::new();
        crate::graph::names_read_in(graph, &mut taken, 0);
        taken.extend(graph.node.iter().flat_map(|n| n.output.iter().cloned()));
        taken.extend(graph.initializer.iter().filter_map(|t| t.name.clone()));
        taken.extend(graph.input.iter().filter_map(|i| i.name.clone()));
        let mut inlined = vec![];
        let mut chosen = vec![];
        for side in ["then_branch", "else_branch"] {
            let g = branch(&mut node, side).expect("an If's branch");
            let defined: Vec<String> = g
                .node
                .iter()
                .flat_map(|n| n.output.iter().cloned())
                .chain(g.initializer.iter().filter_map(|t| t.name.clone()))
                .filter(|n| !n.is_empty())
                .collect();
            let renamed: std::collections::HashMap<String, String> = defined
                .iter()
                .filter(|n| taken.contains(*n))
                .map(|n| (n.clone(), format!("{n}/{side}")))
                .collect();
            let rename = |n: &mut String| {
                if let Some(to) = renamed.get(n) {
                    *n = to.clone();
                }
            };
            for mut n in std::mem::take(&mut g.node) {
                n.input.iter_mut().for_each(rename);
                n.output.iter_mut().for_each(rename);
                inlined.push(n);
            }
            for mut t in std::mem::take(&mut g.initializer) {
                if let Some(name) = t.name.as_mut() {
                    rename(name);
                }
                graph.initializer.push(t);
            }
            let mut outs = output_names(g);
            outs.iter_mut().for_each(rename);
            taken.extend(
                defined
                    .into_iter()
                    .map(|n| renamed.get(&n).cloned().unwrap_or(n)),
            );
            chosen.push(outs);
        }
        let condition = node.input[0].clone();
        for (slot, y) in node.output.iter().enumerate() {
            inlined.push(NodeProto {
                input: vec![
                    condition.clone(),
                    chosen[0][slot].clone(),
                    chosen[1][slot].clone(),
                ],
                output: vec![y.clone()],
                name: Some(format!("{y}/Where")),
                op_type: Some("Where".into()),
                domain: Some(String::new()),
                ..Default::default()
            });
        }
        lines.push(format!(
            "branches joined: If -> {first} became both branches and a Where per output (their selections padded alike)"
        ));
        let tail = graph.node.split_off(at);
        graph.node.extend(inlined);
        graph.node.extend(tail);
    }
    lines
}

/// `Shape(out)[axis]` as `count` (a branch whose selection stayed dynamic: its own length).
fn length_of(g: &mut GraphProto, out: &str, axis: usize, count: &str) -> NodeProto {
    let shape = format!("{count}/shape");
    let index = format!("{count}/axis");
    g.initializer.push(TensorProto {
        name: Some(index.clone()),
        data_type: Some(nonzero_proto::onnx::tensor_proto::DataType::Int64 as i32),
        int64_data: vec![axis as i64],
        ..Default::default()
    });
    g.node.push(NodeProto {
        input: vec![out.to_string()],
        output: vec![shape.clone()],
        name: Some(shape.clone()),
        op_type: Some("Shape".into()),
        domain: Some(String::new()),
        ..Default::default()
    });
    let mut gather = NodeProto {
        input: vec![shape, index],
        output: vec![count.to_string()],
        name: Some(format!("{count}/Gather")),
        op_type: Some("Gather".into()),
        domain: Some(String::new()),
        ..Default::default()
    };
    gather.attribute.push(crate::emit::int_attr("axis", 0));
    gather
}

/// The declared (fixed) size of `axis` of the output `out` of `g`.
fn declared_rows(g: &GraphProto, out: &str, axis: usize) -> Option<i64> {
    let vi = g.output.iter().find(|o| o.name.as_deref() == Some(out))?;
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_ref()?.value.as_ref() else {
        return None;
    };
    let dim = t.shape.as_ref()?.dim.get(axis)?;
    match dim.value {
        Some(nonzero_proto::onnx::tensor_shape_proto::dimension::Value::DimValue(v)) => Some(v),
        _ => None,
    }
}

/// Pads the output `out` of `g` by `more` rows of the fill along `axis` (-1 for int64, else
/// zero), declaring its new size.
fn pad_rows(g: &mut GraphProto, out: &str, axis: usize, more: i64) {
    let Some(vi) = g.output.iter_mut().find(|o| o.name.as_deref() == Some(out)) else {
        return;
    };
    let Some(type_proto::Value::TensorType(t)) = vi.r#type.as_mut().and_then(|t| t.value.as_mut())
    else {
        return;
    };
    let elem_type = t.elem_type.unwrap_or(0);
    let Some(shape) = t.shape.as_mut() else {
        return;
    };
    let rank = shape.dim.len();
    let Some(size) = crate::graph::element_size(elem_type) else {
        return;
    };
    if let Some(nonzero_proto::onnx::tensor_shape_proto::dimension::Value::DimValue(v)) =
        shape.dim.get_mut(axis).and_then(|d| d.value.as_mut())
    {
        *v += more;
    }
    let short = format!("{out}/short");
    for node in &mut g.node {
        for o in node.output.iter_mut().filter(|o| *o == out) {
            *o = short.clone();
        }
    }
    let mut pads = vec![0i64; 2 * rank];
    pads[rank + axis] = more;
    let int64 = nonzero_proto::onnx::tensor_proto::DataType::Int64 as i32;
    let (pads_name, fill_name) = (format!("{out}/pads"), format!("{out}/fill"));
    g.initializer.push(TensorProto {
        name: Some(pads_name.clone()),
        data_type: Some(int64),
        dims: vec![pads.len() as i64],
        int64_data: pads,
        ..Default::default()
    });
    let raw = if elem_type == int64 {
        (-1i64).to_le_bytes().to_vec()
    } else {
        vec![0; size]
    };
    g.initializer.push(TensorProto {
        name: Some(fill_name.clone()),
        data_type: Some(elem_type),
        raw_data: Some(raw.into()),
        ..Default::default()
    });
    g.node.push(NodeProto {
        input: vec![short, pads_name, fill_name],
        output: vec![out.to_string()],
        name: Some(format!("{out}/Pad")),
        op_type: Some("Pad".into()),
        domain: Some(String::new()),
        ..Default::default()
    });
}
