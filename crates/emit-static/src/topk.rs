//! A TopK over a padded list ([`crate::padding::Flow`]'s `topks`; issue 37, item 3): its padding
//! read as the value that sorts last (the type's lowest for `largest=1`, its highest for
//! `largest=0`), k fixed at the capacity or the constant bound of the run-time k, and sorted,
//! so that no padding comes before a real row (ties go to the lower index: a real row first).

use crate::compact::{padding_like, Compacted};
use crate::emit::{int_attr, Emitter};
use nonzero_proto::onnx::NodeProto;

/// Writes `node` (a TopK whose input is padded like `input`, of sizes `dims` and type
/// `elem_type`) in the fixed form; `None` for a type with no lowest or highest value.
pub fn emit(
    e: &mut Emitter,
    node: &NodeProto,
    input: &Compacted,
    sink: &crate::padding::TopK,
    dims: &[i64],
    elem_type: i32,
) -> Option<()> {
    let k = sink.bound.map_or(input.capacity, |b| b.min(input.capacity));
    let largest = crate::graph::int_attr(node, "largest").ok().flatten() != Some(0);
    let padding = padding_like(e, input, sink.axis, dims)?;
    let last = e.extreme(elem_type, largest)?;
    let masked = e.select(&padding, &last, &node.input[0], elem_type);
    let k = e.ints(&[k]);
    let mut topk = node.clone();
    topk.input = vec![masked, k];
    topk.attribute
        .retain(|a| a.name.as_deref() != Some("sorted"));
    topk.attribute.push(int_attr("sorted", 1));
    topk.name = Some(e.fresh("TopK"));
    e.nodes.push(topk);
    Some(())
}
