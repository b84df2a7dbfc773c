//! GatherND at constant indices as a Gather, for `--target qnn`: QNN HTP sends a GatherND to the
//! CPU EP (BART's attention mask, expanded by the dynamo exporter as a GatherND of `[2, 12]` at
//! `[2, 1, 1, 12, 2]` constant indices).
//!
//! With `batch_dims` 0 and each index tuple naming the first k axes of the data, the result is
//! the data flattened over those k axes (`[d0 * .. * dk-1, dk, ..]`), gathered on axis 0 at each
//! tuple's row: `i0 * (d1 * .. * dk-1) + .. + ik-1`, a negative index counted from its axis's
//! size, all computed here. The same elements in the same places: exact. A tuple outside the
//! data keeps the GatherND, which then fails as the model's own would.

use crate::emit::{int_attr, Emitter};
use crate::graph::is_onnx_op;
use crate::scope::Scope;
use nonzero_proto::onnx::{GraphProto, NodeProto};
use nonzero_rewrite_analysis::dims::static_dims;

/// Rewrites every such GatherND of `graph`. Returns how many.
pub fn rewrite(graph: &mut GraphProto, scope: &Scope) -> usize {
    let (index, shapes) = scope.shapes_of(graph);
    let plans: Vec<(usize, Vec<i64>, Plan)> = graph
        .node
        .iter()
        .enumerate()
        .filter_map(|(at, node)| {
            let data = static_dims(&shapes, node.input.first()?)?;
            let tuples = node.input.get(1)?;
            let values = index.const_ints(graph, tuples)?;
            let plan = plan(node, &data, &static_dims(&shapes, tuples)?, &values)?;
            Some((at, data, plan))
        })
        .collect();
    // From the last, so that the positions of the ones before stay valid.
    for (at, data, plan) in plans.iter().rev() {
        let node = graph.node[*at].clone();
        let prefix = node.name.clone().unwrap_or_else(|| node.output[0].clone());
        let mut e = Emitter::new(graph, scope, &format!("{prefix}/gather"));
        let mut matrix = vec![data[..plan.k].iter().product::<i64>()];
        matrix.extend(&data[plan.k..]);
        let reshaped = e.reshape(&node.input[0], &matrix);
        let at_rows = e.ints_shaped(&plan.rows, &plan.dims);
        e.op("Gather", &[&reshaped, &at_rows], vec![int_attr("axis", 0)]);
        e.finish_as(&node.output[0]);
        graph.node.remove(*at);
        e.insert(graph, *at);
    }
    plans.len()
}

/// The Gather that a GatherND is.
struct Plan {
    /// How many leading axes of the data each tuple names.
    k: usize,
    /// The Gather's indices: their dims (the tuples' but the last) and each tuple's row.
    dims: Vec<i64>,
    rows: Vec<i64>,
}

/// For a GatherND `node` of `data` dims at constant `values` of dims `tuples`, its Gather, or
/// `None` where the module doc says the GatherND stays.
fn plan(node: &NodeProto, data: &[i64], tuples: &[i64], values: &[i64]) -> Option<Plan> {
    if !is_onnx_op(node, "GatherND") || node.output.len() != 1 {
        return None;
    }
    let batch_dims = crate::graph::int_attr(node, "batch_dims")
        .ok()?
        .unwrap_or(0);
    let (&k, dims) = tuples.split_last()?;
    let k = usize::try_from(k).ok()?;
    if batch_dims != 0 || k == 0 || k > data.len() || data.iter().any(|&d| d <= 0) {
        return None;
    }
    let rows = values
        .chunks_exact(k)
        .map(|tuple| {
            tuple.iter().zip(data).try_fold(0i64, |row, (&i, &d)| {
                let i = if i < 0 { i + d } else { i };
                (0..d).contains(&i).then(|| row * d + i)
            })
        })
        .collect::<Option<Vec<i64>>>()?;
    (rows.len() as i64 == dims.iter().product::<i64>()).then(|| Plan {
        k,
        dims: dims.to_vec(),
        rows,
    })
}
