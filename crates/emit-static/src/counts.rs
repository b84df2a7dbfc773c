//! A use of the count alone: `Shape` or `Size` of the coordinates (NonZero's `[rank, nnz]`, or
//! the transposed `[nnz, rank]`, or a 1-D mask's squeezed `[nnz]`) needs no coordinates:
//! nnz is `ReduceSum(Cast(mask != 0))`, the rank is fixed.

use super::emit::Emitter;
use super::mask::Selection;
use super::static_dims;
use crate::graph::{describe, int_attr};
use crate::trace::{mask_rank, trace, View};
use nonzero_rewrite_analysis::dims::checked_numel;

/// One size of the coordinates tensor: the count, or a fixed number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Size {
    Count,
    Fixed(i64),
}

/// A `Shape` or `Size` of coordinates.
pub struct CountUse {
    pub node: usize,
    mask: String,
    mask_type: i32,
    numel: i64,
    /// The sizes the node reports (Shape: after its start/end), or `None` for Size.
    sizes: Option<Vec<Size>>,
    /// Elements per count (Size: the rank, or 1 when squeezed).
    per_count: i64,
    pub line: String,
}

/// The first count use in the graph.
pub fn find(view: &View) -> Option<CountUse> {
    view.graph.node.iter().enumerate().find_map(|(i, node)| {
        let shape = view.is_op(node, "Shape");
        if !(shape || view.is_op(node, "Size")) || node.input.len() != 1 {
            return None;
        }
        let input = &node.input[0];
        // The dynamo exporter's Expand(p, Shape(Max(p))) is p itself, not a use of the count:
        // the tracer and the padding follow it whole. (An Expand of anything else to the
        // coordinates' shape is a count use.)
        let identity_expands = view
            .index
            .readers_of(&node.output[0])
            .iter()
            .all(|&(r, slot)| {
                let reader = &view.graph.node[r];
                slot == 1 && view.is_op(reader, "Expand") && trace(view, &reader.input[0]).is_some()
            });
        if shape && identity_expands && !view.index.graph_outputs.contains(&node.output[0]) {
            return None;
        }
        let (mask, dims) = match trace(view, input) {
            Some(t) if t.squeezed => (t.mask, vec![Size::Count]),
            Some(t) => (t.mask, vec![Size::Count, Size::Fixed(t.mask_rank as i64)]),
            None => {
                let nonzero = view.producer(input)?;
                if !view.is_op(nonzero, "NonZero") || nonzero.input.len() != 1 {
                    return None;
                }
                let mask = nonzero.input[0].clone();
                let rank = mask_rank(view, &mask, input)? as i64;
                (mask, vec![Size::Fixed(rank), Size::Count])
            }
        };
        let numel = checked_numel(&static_dims(view.shapes, &mask)?)?;
        let mask_type = view.shapes.get(&mask).elem_type?;
        let per_count = dims
            .iter()
            .map(|d| match d {
                Size::Fixed(n) => *n,
                Size::Count => 1,
            })
            .try_fold(1i64, |p, d| p.checked_mul(d))?;
        let sizes = if shape {
            let rank = dims.len() as i64;
            let bound = |v: i64| {
                if v < 0 {
                    (v + rank).max(0)
                } else {
                    v.min(rank)
                }
            };
            let start = bound(int_attr(node, "start").ok()?.unwrap_or(0));
            let end = bound(int_attr(node, "end").ok()?.unwrap_or(rank));
            Some(dims[start as usize..end.max(start) as usize].to_vec())
        } else {
            None
        };
        Some(CountUse {
            node: i,
            line: format!(
                "count use: {} {} of the coordinates of {mask} became a count of {mask}",
                node.op_type.as_deref().unwrap_or(""),
                describe(node)
            ),
            mask,
            mask_type,
            numel,
            sizes,
            per_count,
        })
    })
}

impl CountUse {
    /// Writes the count form; its last node outputs `output`.
    pub fn emit(&self, e: &mut Emitter, output: &str) -> Option<()> {
        let count = if self.numel == 0 {
            e.scalar(0)
        } else {
            let mut selection = Selection::of(e, &self.mask, self.mask_type, self.numel)?;
            selection.count(e)
        };
        match &self.sizes {
            None if self.per_count == 1 => {
                e.op("Identity", &[&count], vec![]);
            }
            None => {
                let per = e.scalar(self.per_count);
                e.binary("Mul", &count, &per);
            }
            Some(sizes) => {
                let count = e.reshape(&count, &[1]);
                let pieces: Vec<String> = sizes
                    .iter()
                    .map(|s| match s {
                        Size::Count => count.clone(),
                        Size::Fixed(n) => e.ints(&[*n]),
                    })
                    .collect();
                if pieces.is_empty() {
                    let empty = e.ints(&[]);
                    e.op("Identity", &[&empty], vec![]);
                } else {
                    let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
                    e.concat(&refs, 0);
                }
            }
        }
        e.finish_as(output);
        Some(())
    }
}
