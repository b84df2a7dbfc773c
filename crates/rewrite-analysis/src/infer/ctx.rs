//! One node under inference: its inputs' facts and constant operands, read through the table.

use super::{Dim, ShapeTable, TensorInfo};
use crate::graph::{int_attr, GraphIndex};
use nonzero_proto::onnx::{GraphProto, NodeProto};

/// One node under inference: its inputs' facts and its constant operands.
#[derive(Debug)]
pub struct Ctx<'a> {
    pub node: &'a NodeProto,
    pub table: &'a ShapeTable,
    pub graph: &'a GraphProto,
    pub index: &'a GraphIndex,
}

impl Ctx<'_> {
    /// What is known about input `slot` (nothing for a missing or empty input).
    pub fn input(&self, slot: usize) -> TensorInfo {
        match self.node.input.get(slot) {
            Some(n) if !n.is_empty() => self.table.get(n),
            _ => TensorInfo::default(),
        }
    }

    pub fn dims(&self, slot: usize) -> Option<Vec<Dim>> {
        self.input(slot).dims
    }

    pub fn elem(&self, slot: usize) -> Option<i32> {
        self.input(slot).elem_type
    }

    /// True when input `slot` is given (present and not empty).
    pub fn has_input(&self, slot: usize) -> bool {
        self.node.input.get(slot).is_some_and(|n| !n.is_empty())
    }

    /// The proven values of input `slot`.
    pub fn values(&self, slot: usize) -> Option<Vec<Dim>> {
        let name = self.node.input.get(slot).filter(|n| !n.is_empty())?;
        self.table.values(name).map(<[Dim]>::to_vec)
    }

    /// The entries of the 1-D input `slot` that are proven, one `None` per entry that is not:
    /// all of its values where known, else those of the Concat that made it, part by part (a
    /// shape put together from sizes and one value computed at run time). `None` where not
    /// even its length is known.
    pub fn entries(&self, slot: usize) -> Option<Vec<Option<Dim>>> {
        if let Some(v) = self.values(slot) {
            return Some(v.into_iter().map(Some).collect());
        }
        let name = self.node.input.get(slot).filter(|n| !n.is_empty())?;
        let concat = self.index.producer_of(self.graph, name)?;
        if concat.op_type.as_deref() != Some("Concat")
            || !concat.domain.as_deref().unwrap_or("").is_empty()
        {
            return None;
        }
        let mut entries = vec![];
        for part in &concat.input {
            match self.table.values(part) {
                Some(v) => entries.extend(v.iter().cloned().map(Some)),
                None => match self.table.info(part)?.dims.as_deref()? {
                    [n] => entries.extend(std::iter::repeat_n(None, n.as_static()? as usize)),
                    _ => return None,
                },
            }
        }
        (entries.len() <= super::values::MAX_VALUES).then_some(entries)
    }

    /// The concrete value of input `slot` ([`crate::consts`]).
    pub fn constant(&self, slot: usize) -> Option<&crate::consts::Const> {
        let name = self.node.input.get(slot).filter(|n| !n.is_empty())?;
        self.table.constant(name)
    }

    /// The static integer values of input `slot`.
    pub fn static_ints(&self, slot: usize) -> Option<Vec<i64>> {
        self.values(slot)?.iter().map(Dim::as_static).collect()
    }

    /// An INTS attribute, else (newer opsets) the static values of input `slot`.
    pub fn ints_or_input(&self, attr: &str, slot: usize) -> Option<Option<Vec<i64>>> {
        match crate::graph::ints_attr(self.node, attr) {
            Ok(Some(v)) => Some(Some(v)),
            Ok(None) if self.has_input(slot) => self.static_ints(slot).map(Some),
            Ok(None) => Some(None),
            Err(_) => None,
        }
    }

    /// An INT attribute with its default (`None` when present but malformed).
    pub fn int(&self, name: &str, default: i64) -> Option<i64> {
        int_attr(self.node, name).ok().map(|v| v.unwrap_or(default))
    }

    /// A fresh size for axis `axis` of output `slot`.
    pub fn fresh(&self, slot: usize, axis: usize) -> Dim {
        let out = self.node.output.get(slot).map_or("", String::as_str);
        Dim::fresh(&format!("{out}.{axis}"))
    }
}

/// Normalises `axis` for `rank`, `None` when out of range.
pub fn axis_in(axis: i64, rank: usize) -> Option<usize> {
    let r = i64::try_from(rank).ok()?;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}
