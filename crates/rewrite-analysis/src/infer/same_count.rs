//! Masks that select as many elements as another mask, by their arithmetic alone: HF
//! Longformer's local slots `arange(R) < m.sum(1)[:, None]` hold one true element per true
//! element of `m` wherever `R` is at least every row's sum (its `m.sum(1).max()`, or the
//! row length once a capped length fixed it). The NonZeros of both masks then share one count,
//! so their rows can be written at each other's coordinates ([`super::index`]).

use super::{Dim, ShapeTable};
use crate::graph::{int_attr, ints_attr, GraphIndex};
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{GraphProto, NodeProto};

const BOOL: i32 = DataType::Bool as i32;

/// The NonZero output whose count equals that of a NonZero of `mask`, where `mask` is the
/// prefix mask of another mask's row sums and that mask has a NonZero of its own.
pub fn nonzero_of_equal_count(
    graph: &GraphProto,
    index: &GraphIndex,
    table: &ShapeTable,
    mask: &str,
) -> Option<String> {
    let reads = Reads {
        graph,
        index,
        table,
    };
    let counted = reads.prefix_of_row_sums(mask)?;
    reads.nonzero_of(&counted)
}

struct Reads<'a> {
    graph: &'a GraphProto,
    index: &'a GraphIndex,
    table: &'a ShapeTable,
}

impl Reads<'_> {
    fn producer(&self, name: &str) -> Option<&NodeProto> {
        self.index.producer_of(self.graph, name)
    }

    /// The output of a NonZero of `mask`, where the graph has one.
    fn nonzero_of(&self, mask: &str) -> Option<String> {
        self.index.readers_of(mask).iter().find_map(|&(r, slot)| {
            let node = &self.graph.node[r];
            (slot == 0 && self.is_op(node, "NonZero") && node.input.len() == 1)
                .then(|| node.output.first().cloned())
                .flatten()
        })
    }

    fn is_op(&self, node: &NodeProto, op: &str) -> bool {
        node.op_type.as_deref() == Some(op) && node.domain.as_deref().unwrap_or("").is_empty()
    }

    fn made_by(&self, name: &str, op: &str) -> Option<&NodeProto> {
        self.producer(name).filter(|n| self.is_op(n, op))
    }

    fn elem(&self, name: &str) -> Option<i32> {
        self.table.get(name).elem_type
    }

    /// `name` through Casts that keep which elements are nonzero (from bool, or to bool).
    fn truth_of<'s>(&'s self, mut name: &'s str) -> &'s str {
        for _ in 0..8 {
            let Some(cast) = self.made_by(name, "Cast") else {
                break;
            };
            let to = int_attr(cast, "to").ok().flatten();
            if to != Some(i64::from(BOOL)) && self.elem(&cast.input[0]) != Some(BOOL) {
                break;
            }
            name = &cast.input[0];
        }
        name
    }

    /// The mask `m` (bool, rank 2) whose row sums `s` make `name` the prefix mask
    /// `positions < s[:, None]`, with positions reaching at least every row's sum; masked
    /// further only past `max(s)`, where it holds no element.
    fn prefix_of_row_sums(&self, name: &str) -> Option<String> {
        let name = self.truth_of(name);
        let node = self.producer(name)?;
        let op = node.op_type.as_deref()?;
        match op {
            // `Where(p >= max(s), 0, x)` or `x and p < max(s)`: the same elements as x.
            "Where" if self.is_op(node, op) && node.input.len() == 3 => {
                let fill = self.truth_of(&node.input[1]);
                let zero = self.table.constant(fill)?;
                zero.data.as_f64().iter().all(|v| *v == 0.0).then_some(())?;
                let m = self.prefix_of_row_sums(&node.input[2])?;
                let not = self.made_by(self.truth_of(&node.input[0]), "Not")?;
                self.below_max_of_sums(self.truth_of(&not.input[0]), &m)
                    .then_some(m)
            }
            "And" if self.is_op(node, op) && node.input.len() == 2 => (0..2).find_map(|i| {
                let m = self.prefix_of_row_sums(&node.input[i])?;
                self.below_max_of_sums(self.truth_of(&node.input[1 - i]), &m)
                    .then_some(m)
            }),
            "Less" | "Greater" if self.is_op(node, op) && node.input.len() == 2 => {
                // `positions < s[:, None]`, or `s[:, None] > positions`.
                let (positions, sums) = if op == "Less" {
                    (&node.input[0], &node.input[1])
                } else {
                    (&node.input[1], &node.input[0])
                };
                let unsqueeze = self.made_by(sums, "Unsqueeze")?;
                let axes = self.axes(unsqueeze)?;
                (axes == [1] || axes == [-1]).then_some(())?;
                let s = &unsqueeze.input[0];
                let m = self.summed_rows_of(s)?;
                let row = self.table.get(&m).dims?.get(1)?.as_static()?;
                let reach = self.positions_reach(positions)?;
                let enough = match reach {
                    Reach::Static(n) => n >= row,
                    Reach::MaxOf(of) => self.summed_rows_of(&of).as_deref() == Some(m.as_str()),
                };
                enough.then_some(m)
            }
            _ => None,
        }
    }

    /// The mask `m` (bool, rank 2) where `s` is `ReduceSum(Cast(m), axes=[1], keepdims=0)`.
    fn summed_rows_of(&self, s: &str) -> Option<String> {
        let sum = self.made_by(s, "ReduceSum")?;
        let axes = self.axes(sum)?;
        let keepdims = int_attr(sum, "keepdims").ok()?.unwrap_or(1);
        ((axes == [1] || axes == [-1]) && keepdims == 0).then_some(())?;
        let cast = self.made_by(&sum.input[0], "Cast")?;
        let m = &cast.input[0];
        let rank2 = self.table.get(m).dims.is_some_and(|d| d.len() == 2);
        (self.elem(m) == Some(BOOL) && rank2).then(|| m.clone())
    }

    /// True where `name` is `positions < max(s)` (positions along the last axis) for row sums
    /// `s` of `m`: false only past every row's sum.
    fn below_max_of_sums(&self, name: &str, m: &str) -> bool {
        let Some(less) = self.made_by(name, "Less") else {
            return false;
        };
        let sums = self.max_of(&less.input[1]);
        self.positions_reach(&less.input[0]).is_some()
            && sums.is_some_and(|s| self.summed_rows_of(&s).as_deref() == Some(m))
    }

    /// `s` where `name` is `ReduceMax(s)` over every axis (through a Cast).
    fn max_of(&self, name: &str) -> Option<String> {
        let mut name = name;
        if let Some(cast) = self.made_by(name, "Cast") {
            name = &cast.input[0];
        }
        let max = self.made_by(name, "ReduceMax")?;
        let axes = self.axes(max)?;
        let whole = axes.is_empty() || axes == [0] || axes == [-1];
        let rank1 = self
            .table
            .get(&max.input[0])
            .dims
            .is_some_and(|d| d.len() == 1);
        (whole && rank1).then(|| max.input[0].clone())
    }

    /// How far positions `0, 1, ...` along the last axis reach: a fixed length, or up to
    /// (not including) `max(s)`.
    fn positions_reach(&self, name: &str) -> Option<Reach> {
        let dims = self.table.get(name).dims?;
        if !dims.is_empty()
            && dims[..dims.len() - 1]
                .iter()
                .all(|d| d.as_static() == Some(1))
        {
            if let Some(values) = self.table.values(name) {
                let counting = values
                    .iter()
                    .enumerate()
                    .all(|(i, v)| v.as_static() == Some(i as i64));
                return counting.then_some(Reach::Static(values.len() as i64));
            }
        }
        // `Range(0, max(s), 1)`.
        let range = self.made_by(name, "Range")?;
        let start = self.table.values(&range.input[0])?;
        let step = self.table.values(&range.input[2])?;
        let unit = start.first()?.as_static() == Some(0) && step.first()?.as_static() == Some(1);
        unit.then(|| self.max_of(&range.input[1]).map(Reach::MaxOf))?
    }

    /// A Reduce's or Unsqueeze's axes: attribute or (newer opsets) input 1; `None` when
    /// neither is known.
    fn axes(&self, node: &NodeProto) -> Option<Vec<i64>> {
        if let Ok(Some(axes)) = ints_attr(node, "axes") {
            return Some(axes);
        }
        match node.input.get(1).filter(|n| !n.is_empty()) {
            Some(axes) => self
                .table
                .values(axes)?
                .iter()
                .map(Dim::as_static)
                .collect(),
            None => Some(vec![]),
        }
    }
}

enum Reach {
    Static(i64),
    MaxOf(String),
}
