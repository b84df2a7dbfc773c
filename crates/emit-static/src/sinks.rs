//! What a padded list's padding reaches, made safe once the list has a fixed capacity: the
//! gathers through its coordinates, the reductions over it, nested selections, writes, regrouped
//! rows, graph outputs re-padded and each padded graph output's `<name>_count`. The list is a
//! compacted NonZero ([`super::capacity`]) or a fixed-shape NonMaxSuppression ([`super::nms`]).

use super::compact::{self, Compacted};
use super::emit::Emitter;
use super::scope::Scope;
use super::{outputs, padding, replace, scatter, static_dims, StaticPass};
use crate::graph::describe;
use crate::trace::View;
use crate::StaticError;
use nonzero_proto::onnx::GraphProto;
use nonzero_rewrite_analysis::findings::Reason;
use nonzero_rewrite_graph::indexed::remove_dead;

/// The sizes and types each reader of the padding needs, read before the graph changes.
pub(super) struct Sinks {
    pub gathers: Vec<(String, compact::GatherSizes)>,
    reductions: Vec<(padding::Reduction, Vec<i64>, i32)>,
    writes: Vec<WriteSizes>,
    repads: Vec<(String, usize, usize, i32)>,
    /// Each TopK's input sizes and type.
    topks: Vec<(padding::TopK, Vec<i64>, i32)>,
    /// Each GatherElements pick's indices: sizes and type.
    element_picks: Vec<(String, Vec<i64>, i32)>,
    /// Each padded divisor's sizes and type.
    divisors: Vec<(String, Vec<i64>, i32)>,
}

/// The sinks of `flow` in `view`'s graph.
pub(super) fn plan(view: &View, flow: &padding::Flow) -> Result<Sinks, (Reason, String)> {
    let (graph, index, shapes) = (view.graph, view.index, view.shapes);
    let sizes = |name: &str| -> Vec<i64> {
        let dims = shapes.get(name).dims.unwrap_or_default();
        dims.iter().map(|d| d.as_static().unwrap_or(-1)).collect()
    };
    let gathers: Vec<(String, compact::GatherSizes)> = flow
        .gathers
        .iter()
        .map(|(out, kind)| {
            let gather = index.producer_of(graph, out).expect("a gather reached");
            let sizes = compact::GatherSizes {
                kind: *kind,
                data_dims: sizes(&gather.input[0]),
                out_dims: sizes(out),
                data_type: shapes.get(&gather.input[0]).elem_type.unwrap_or(0),
            };
            (out.clone(), sizes)
        })
        .collect();
    let reductions: Vec<(padding::Reduction, Vec<i64>, i32)> = flow
        .reductions
        .iter()
        .map(|r| {
            let node = index
                .producer_of(graph, &r.output)
                .expect("a reduction reached");
            let info = shapes.get(&node.input[0]);
            // The input's sizes, the padded one aside (its size is the capacity now).
            let sizes = info
                .dims
                .iter()
                .flatten()
                .map(|d| d.as_static().unwrap_or(-1));
            (r.clone(), sizes.collect(), info.elem_type.unwrap_or(0))
        })
        .collect();
    let writes = scatter_sizes(shapes, index, graph, flow)?;
    let repads: Vec<(String, usize, usize, i32)> = flow
        .repad
        .iter()
        .map(|(name, axis)| {
            let info = shapes.get(name);
            let rank = info.rank().unwrap_or(0);
            (name.clone(), *axis, rank, info.elem_type.unwrap_or(0))
        })
        .collect();
    let topks = flow
        .topks
        .iter()
        .map(|t| {
            let node = index.producer_of(graph, &t.output).expect("a TopK reached");
            let info = shapes.get(&node.input[0]);
            (
                t.clone(),
                sizes(&node.input[0]),
                info.elem_type.unwrap_or(0),
            )
        })
        .collect();
    let sized = |list: &Vec<(String, String, usize)>| -> Vec<(String, Vec<i64>, i32)> {
        let typed = |name: &String| shapes.get(name).elem_type.unwrap_or(0);
        let each = list.iter().map(|(_, n, _)| (n.clone(), sizes(n), typed(n)));
        each.collect()
    };
    let (element_picks, divisors) = (sized(&flow.element_picks), sized(&flow.divisors));
    Ok(Sinks {
        gathers,
        reductions,
        writes,
        repads,
        topks,
        element_picks,
        divisors,
    })
}

impl StaticPass<'_> {
    /// Rewrites each sink of `flow` for the padding of `compacted`, and gives each padded
    /// graph output its count.
    pub(super) fn emit_sinks(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        flow: &padding::Flow,
        sinks: Sinks,
        compacted: &Compacted,
    ) -> Result<(), StaticError> {
        let Sinks {
            gathers,
            reductions,
            writes,
            repads,
            topks,
            element_picks,
            divisors,
        } = sinks;
        for (out, sizes) in gathers {
            let g = graph
                .node
                .iter()
                .position(|n| n.output.first() == Some(&out))
                .expect("the gather is still there");
            let gather = graph.node[g].clone();
            let mut e = Emitter::new(graph, scope, &describe(&gather));
            let compacted = &compacted.derived(&mut e, flow.counts.get(&out));
            if compact::emit_gather(&mut e, &gather, compacted, &sizes).is_none() {
                return Err(StaticError::Refused(format!(
                    "GatherND {}: its data has no zero (strings)",
                    describe(&gather)
                )));
            }
            let inputs = replace(graph, g, e);
            self.dead.extend(inputs);
        }
        for (reduction, sizes, data_type) in reductions {
            let at = graph
                .node
                .iter()
                .position(|n| n.output.first() == Some(&reduction.output))
                .expect("the reduction is still there");
            let node = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&node));
            let compacted = &compacted.derived(&mut e, flow.counts.get(&reduction.output));
            let done = crate::reductions::emit_reduction(
                &mut e, &node, compacted, &reduction, &sizes, data_type,
            );
            if done.is_none() {
                return Err(StaticError::Refused(format!(
                    "{} {}: no sum identity for its type, or a reduced size is not fixed",
                    node.op_type.as_deref().unwrap_or(""),
                    describe(&node)
                )));
            }
            let inputs = replace(graph, at, e);
            self.dead.extend(inputs);
        }
        for (sink, dims, elem_type) in topks {
            let at = position_of(graph, &sink.output);
            let node = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&node));
            let input = &compacted.derived(&mut e, flow.counts.get(&node.input[0]));
            if super::topk::emit(&mut e, &node, input, &sink, &dims, elem_type).is_none() {
                return Err(StaticError::Refused(format!(
                    "TopK {}: no lowest or highest value of its type",
                    describe(&node)
                )));
            }
            // Its run-time k stays: the counts past it read it.
            replace(graph, at, e);
        }
        for nested in &flow.nested {
            let at = graph
                .node
                .iter()
                .position(|n| n.output.first() == Some(nested))
                .expect("the nested NonZero is still there");
            let node = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&node));
            let compacted = &compacted.derived(&mut e, flow.counts.get(nested));
            let kept = compact::emit_unpadded_mask(&mut e, &node.input[0], compacted);
            let mut remasked = node;
            remasked.input[0] = kept;
            e.nodes.push(remasked);
            replace(graph, at, e);
        }
        for (out, data_dims, data_type, index_type, width) in writes {
            let at = position_of(graph, &out);
            let node = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&node));
            scatter::emit_scatter(&mut e, &node, &data_dims, data_type, index_type, width)
                .ok_or_else(|| {
                    StaticError::Refused(format!(
                        "{} {}: no zero of its data's type (strings)",
                        node.op_type.as_deref().unwrap_or(""),
                        describe(&node)
                    ))
                })?;
            replace(graph, at, e);
        }
        for pick in &flow.regrouped {
            let at = position_of(graph, &pick.output);
            let gather = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&gather));
            let compacted = &compacted.derived(&mut e, flow.counts.get(&pick.output));
            scatter::emit_regrouped(&mut e, pick, compacted);
            let inputs = replace(graph, at, e);
            self.dead.extend(inputs);
        }
        for out in &flow.nms {
            let at = position_of(graph, out);
            let node = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&node));
            let compacted = &compacted.derived(&mut e, flow.counts.get(out));
            emit_nms_over_rows(&mut e, &node, compacted);
            replace(graph, at, e);
            // Its boxes are fixed now: the fixed-shape form may take it (a body's pass, before
            // its If was taken, may have refused it).
            self.known.remove(out);
        }
        self.emit_masked_indices(graph, scope, flow, compacted)?;
        self.emit_row_picks(graph, scope, flow, compacted)?;
        self.emit_element_picks(graph, scope, flow, compacted, &element_picks)?;
        self.emit_divisors(graph, scope, flow, compacted, &divisors)?;
        self.cut_rejoined(graph, scope, flow, compacted);
        self.cut_whole_splits(graph, scope, flow, compacted)?;
        self.count_loops(graph, scope, flow, compacted);
        for (name, axis, rank, elem_type) in repads {
            let at = position_of(graph, &name);
            let mut e = Emitter::new(graph, scope, &format!("{name}/repad"));
            let unpadded = e.fresh("unpadded");
            let compacted = &compacted.derived(&mut e, flow.counts.get(&name));
            graph.node[at].output[0] = unpadded.clone();
            if scatter::emit_repad(&mut e, &unpadded, &name, axis, rank, elem_type, compacted)
                .is_none()
            {
                return Err(StaticError::Refused(format!(
                    "the padded output '{name}': no fill of its type (strings)"
                )));
            }
            e.insert(graph, at + 1);
        }
        for (name, axis) in &flow.outputs {
            let mut e = Emitter::new(graph, scope, &format!("{name}/count"));
            let compacted = compacted.derived(&mut e, flow.counts.get(name));
            e.insert(graph, graph.node.len());
            outputs::add_count_output(graph, name, *axis, &compacted.count, compacted.capacity)?;
            self.summary
                .count_outputs
                .push((name.clone(), format!("{name}_count"), *axis));
        }
        Ok(())
    }
}

impl StaticPass<'_> {
    /// Removes the producers the rewrites so far left unread ([`StaticPass::dead`]).
    pub(super) fn remove_unread(&mut self, graph: &mut GraphProto) {
        if !self.dead.is_empty() {
            let candidates = std::mem::take(&mut self.dead);
            self.report.removed_nodes += remove_dead(graph, candidates);
        }
    }
}

/// NMS over padded rows: the padding scored -inf, under a score threshold (the model's, or -inf)
/// that no -inf passes, so that NMS keeps valid rows only. Exact but where a valid row's own
/// score is -inf and the model has no threshold (the original may keep it; here it is dropped).
fn emit_nms_over_rows(
    e: &mut Emitter,
    nms: &nonzero_proto::onnx::NodeProto,
    compacted: &Compacted,
) {
    let float = nonzero_proto::onnx::tensor_proto::DataType::Float as i32;
    let padding = e.reshape(&compacted.padding, &[1, 1, compacted.capacity]);
    let lowest = e.unscored(float).expect("float32 has a lowest value");
    let scores = e.where_(&padding, &lowest, &nms.input[1]);
    let threshold = match nms.input.get(4).filter(|t| !t.is_empty()) {
        Some(t) => t.clone(),
        None => e.reshape(&lowest, &[1]),
    };
    let mut inputs: Vec<String> = vec![nms.input[0].clone(), scores];
    for slot in 2..4 {
        inputs.push(nms.input.get(slot).cloned().unwrap_or_default());
    }
    inputs.push(threshold);
    let inputs: Vec<&str> = inputs.iter().map(String::as_str).collect();
    e.op("NonMaxSuppression", &inputs, nms.attribute.clone());
    e.finish_as(&nms.output[0]);
}

/// The node writing `name` (its first output).
fn position_of(graph: &GraphProto, name: &str) -> usize {
    crate::graph::writer_of(graph, name).expect("the node the flow reached is still there")
}

/// What each padded write needs: its data's fixed sizes and type, its indices' type, and a
/// ScatterND's index width.
type WriteSizes = (String, Vec<i64>, i32, i32, Option<i64>);

fn scatter_sizes(
    shapes: &crate::infer::ShapeTable,
    index: &crate::graph::GraphIndex,
    graph: &GraphProto,
    flow: &padding::Flow,
) -> Result<Vec<WriteSizes>, (Reason, String)> {
    flow.scatters
        .iter()
        .map(|out| {
            let node = index.producer_of(graph, out).expect("a write reached");
            let data_dims = static_dims(shapes, &node.input[0]).ok_or((
                Reason::PaddingUnsafe,
                format!(
                    "{} writes padded rows into {}, whose shape is not fixed",
                    describe(node),
                    node.input[0]
                ),
            ))?;
            let indices = shapes.get(&node.input[1]);
            let width = indices
                .dims
                .as_ref()
                .and_then(|d| d.last())
                .and_then(|d| d.as_static());
            Ok((
                out.clone(),
                data_dims,
                shapes.get(&node.input[0]).elem_type.unwrap_or(0),
                indices
                    .elem_type
                    .unwrap_or(nonzero_proto::onnx::tensor_proto::DataType::Int64 as i32),
                width,
            ))
        })
        .collect()
}
