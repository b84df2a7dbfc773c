//! Padded rows cut into equal groups and one row picked from each (BART's eos rows: `hidden[eos].
//! view(batch, -1, h)[:, -1]`), found for [`super::Regrouped`].

use super::Padded;
use crate::infer::Dim;
use crate::trace::View;
use nonzero_proto::onnx::NodeProto;

/// `Gather(Reshape(rows, [G, -1, rest...]), i, axis=1)` of the padded rows (`[C, rest...]`):
/// one row of each of G equal groups of the selected rows ([`super::Regrouped`]). The Reshape
/// must have that Gather as its only reader, G and i be constants.
pub(super) fn regrouped(
    view: &View,
    node: &NodeProto,
    op: &str,
    slot: usize,
    t: &Padded,
) -> Option<super::Regrouped> {
    (op == "Reshape" && slot == 0 && !t.coords && t.axis == 0).then_some(())?;
    let shape = view.const_ints(node.input.get(1)?)?;
    let dims = view.shapes.get(&t.name).dims?;
    let rest: Vec<i64> = dims[1..]
        .iter()
        .map(Dim::as_static)
        .collect::<Option<_>>()?;
    let [groups, -1, tail @ ..] = shape.as_slice() else {
        return None;
    };
    (*groups >= 1 && tail == rest.as_slice()).then_some(())?;
    let [(reader, 0)] = view.index.readers_of(&node.output[0]) else {
        return None;
    };
    let gather = &view.graph.node[*reader];
    let axis = crate::graph::int_attr(gather, "axis").ok()?.unwrap_or(0);
    let index = match view.shapes.values(gather.input.get(1)?)? {
        [i] if view.shapes.get(&gather.input[1]).rank() == Some(0) => i.as_static()?,
        _ => return None,
    };
    (view.is_op(gather, "Gather") && axis == 1).then_some(())?;
    Some(super::Regrouped {
        rows: t.name.clone(),
        output: gather.output.first()?.clone(),
        groups: *groups,
        index,
    })
}
