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
        for read in &flow.masked_indices {
            let Some(at) = crate::graph::writer_of(graph, &read.output) else {
                continue;
            };
            let gather = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&gather));
            let indices = &compacted.derived(&mut e, flow.counts.get(&read.indices));
            emit(
                &mut e,
                &gather,
                indices,
                read.axis,
                &read.dims,
                read.elem_type,
            )
            .ok_or_else(|| {
                StaticError::Refused(format!(
                    "Gather {}: no zero of its indices' type",
                    describe(&gather)
                ))
            })?;
            replace(graph, at, e);
        }
        Ok(())
    }
}

impl StaticPass<'_> {
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
        for pick in &flow.row_picks {
            let Some(at) = crate::graph::writer_of(graph, &pick.output) else {
                continue;
            };
            let mut gather = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&gather));
            let data = compacted.derived(&mut e, flow.counts.get(&pick.data));
            let indices = compacted.derived(&mut e, flow.counts.get(&pick.indices));
            let zero = e.scalar(0);
            let negative = e.binary("Less", &gather.input[1], &zero);
            let from_end = e.binary("Add", &gather.input[1], &data.count);
            let index = e.where_(&negative, &from_end, &gather.input[1]);
            gather.input[1] = index;
            let dims = [indices.capacity];
            let read = emit(&mut e, &gather, &indices, 0, &dims, int64);
            read.ok_or_else(|| StaticError::Refused(format!("Gather {}", describe(&gather))))?;
            replace(graph, at, e);
        }
        Ok(())
    }
}

impl StaticPass<'_> {
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
        for ((output, indices, axis), (_, dims, elem_type)) in flow.element_picks.iter().zip(sizes)
        {
            let Some(at) = crate::graph::writer_of(graph, output) else {
                continue;
            };
            let gather = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&gather));
            let padded = compacted.derived(&mut e, flow.counts.get(indices));
            emit(&mut e, &gather, &padded, *axis, dims, *elem_type).ok_or_else(|| {
                StaticError::Refused(format!("GatherElements {}", describe(&gather)))
            })?;
            replace(graph, at, e);
        }
        Ok(())
    }
}

impl StaticPass<'_> {
    /// Each float Div by padded rows, the divisor's padding read as 1.
    pub(super) fn emit_divisors(
        &mut self,
        graph: &mut GraphProto,
        scope: &Scope,
        flow: &Flow,
        compacted: &Compacted,
        sizes: &[(String, Vec<i64>, i32)],
    ) -> Result<(), StaticError> {
        for ((output, divisor, axis), (_, dims, elem_type)) in flow.divisors.iter().zip(sizes) {
            let Some(at) = crate::graph::writer_of(graph, output) else {
                continue;
            };
            let mut div = graph.node[at].clone();
            let mut e = Emitter::new(graph, scope, &describe(&div));
            let padded = compacted.derived(&mut e, flow.counts.get(divisor));
            let masked = padding_like(&mut e, &padded, *axis, dims)
                .zip(e.one(*elem_type))
                .map(|(padding, one)| e.select(&padding, &one, &div.input[1], *elem_type));
            let masked =
                masked.ok_or_else(|| StaticError::Refused(format!("Div {}", describe(&div))))?;
            div.input[1] = masked;
            div.name = Some(e.fresh("Div"));
            e.nodes.push(div);
            replace(graph, at, e);
        }
        Ok(())
    }
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
