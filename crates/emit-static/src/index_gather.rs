//! A Gather of data of fixed sizes at padded integer values (the flow's `masked_indices`): the
//! padding's values are whatever row-wise work made of them (a TopK's picks past its count,
//! divided into anchor indices), so the indices are read as 0 there, a valid index of any
//! non-empty axis, and the rows gathered there are padding. A Gather of padded data at such
//! indices (the flow's `row_picks`) also reads a negative index from the data's count.

use crate::compact::{padding_like, Compacted};
use crate::emit::Emitter;
use crate::graph::describe;
use crate::padding::Flow;
use crate::scope::Scope;
use crate::{replace, StaticError, StaticPass};
use nonzero_proto::onnx::{GraphProto, NodeProto};

impl StaticPass<'_> {
    /// Each Gather of `flow` at padded integer values, reading the padding as index 0.
    pub(super) fn emit_masked_indices(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        flow: &Flow,
        compacted: &Compacted,
    ) -> Result<(), StaticError> {
        let reads = flow.masked_indices.iter().map(|r| (r.output.as_str(), r));
        let why = ": no zero of its indices' type";
        rebuild_each(graph, scope, reads, ("Gather", why), |e, gather, read| {
            let indices = &compacted.derived(e, flow.counts.get(&read.indices));
            emit(e, &gather, indices, read.axis, &read.dims, read.elem_type)
        })
    }

    /// Each pick of padded rows at padded indices: a negative index counts from the data's
    /// count, as in the original, and the padding reads index 0.
    pub(super) fn emit_row_picks(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        flow: &Flow,
        compacted: &Compacted,
    ) -> Result<(), StaticError> {
        let int64 = nonzero_proto::onnx::tensor_proto::DataType::Int64 as i32;
        let picks = flow.row_picks.iter().map(|p| (p.output.as_str(), p));
        rebuild_each(
            graph,
            scope,
            picks,
            ("Gather", ""),
            |e, mut gather, pick| {
                let data = compacted.derived(e, flow.counts.get(&pick.data));
                let indices = compacted.derived(e, flow.counts.get(&pick.indices));
                let zero = e.scalar(0);
                let negative = e.binary("Less", &gather.input[1], &zero);
                let from_end = e.binary("Add", &gather.input[1], &data.count);
                gather.input[1] = e.where_(&negative, &from_end, &gather.input[1]);
                emit(e, &gather, &indices, 0, &[indices.capacity], int64)
            },
        )
    }

    /// Each GatherElements of rows padded alike along another axis, its indices' padding read
    /// as 0.
    pub(super) fn emit_element_picks(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        flow: &Flow,
        compacted: &Compacted,
        sizes: &[(String, Vec<i64>, i32)],
    ) -> Result<(), StaticError> {
        let picks = flow.element_picks.iter().zip(sizes);
        let picks = picks.map(|((output, indices, axis), (_, dims, elem_type))| {
            (output.as_str(), (indices, *axis, dims, *elem_type))
        });
        rebuild_each(
            graph,
            scope,
            picks,
            ("GatherElements", ""),
            |e, gather, pick| {
                let (indices, axis, dims, elem_type) = pick;
                let padded = compacted.derived(e, flow.counts.get(indices));
                emit(e, &gather, &padded, axis, dims, elem_type)
            },
        )
    }

    /// Each float Div by padded rows, the divisor's padding read as 1.
    pub(super) fn emit_divisors(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        flow: &Flow,
        compacted: &Compacted,
        sizes: &[(String, Vec<i64>, i32)],
    ) -> Result<(), StaticError> {
        let divs = flow.divisors.iter().zip(sizes);
        let divs = divs.map(|((output, divisor, axis), (_, dims, elem_type))| {
            (output.as_str(), (divisor, *axis, dims, *elem_type))
        });
        rebuild_each(graph, scope, divs, ("Div", ""), |e, mut div, read| {
            let (divisor, axis, dims, elem_type) = read;
            let padded = compacted.derived(e, flow.counts.get(divisor));
            let padding = padding_like(e, &padded, axis, dims)?;
            let one = e.one(elem_type)?;
            div.input[1] = e.select(&padding, &one, &div.input[1], elem_type);
            div.name = Some(e.fresh("Div"));
            e.nodes.push(div);
            Some(())
        })
    }
}

/// For each `(output, item)`: the node that writes `output`, where it is still there, rebuilt by
/// `build` in an emitter named after it and put in its place. A `None` from `build` refuses,
/// naming the node (`what`: its op, and why).
fn rebuild_each<'o, T>(
    graph: &mut GraphProto,
    scope: &Scope,
    items: impl Iterator<Item = (&'o str, T)>,
    (op, why): (&str, &str),
    mut build: impl FnMut(&mut Emitter, NodeProto, T) -> Option<()>,
) -> Result<(), StaticError> {
    for (output, item) in items {
        let Some(at) = crate::graph::writer_of(graph, output) else {
            continue;
        };
        let node = graph.node[at].clone();
        let name = describe(&node);
        let mut e = Emitter::new(graph, scope, &name);
        build(&mut e, node, item)
            .ok_or_else(|| StaticError::Refused(format!("{op} {name}{why}")))?;
        replace(graph, at, e);
    }
    Ok(())
}

/// Writes `gather` reading its indices (padded like `indices`, of sizes `dims` and type
/// `elem_type`) as 0 in the padding.
pub fn emit(
    e: &mut Emitter,
    gather: &NodeProto,
    indices: &Compacted,
    axis: usize,
    dims: &[i64],
    elem_type: i32,
) -> Option<()> {
    let padding = padding_like(e, indices, axis, dims)?;
    let zero = e.zero(elem_type)?;
    let masked = e.select(&padding, &zero, &gather.input[1], elem_type);
    let mut read = gather.clone();
    read.input[1] = masked;
    read.name = Some(e.fresh("Gather"));
    e.nodes.push(read);
    Some(())
}
