//! A spread of a row mask over whole rows, as [`nonzero_rewrite_graph::forms::spread_rows`]
//! writes it (in both modes), read back: the static target finds the default mode's spread in
//! what it lowers.

use crate::trace::View;
/// A spread as `spread_rows` writes it, read back: the default mode's output, lowered by
/// `--static`, has it where the export had its Expand.
#[derive(Debug)]
pub struct Spread {
    pub rows: String,
    /// Elements a row.
    pub row: i64,
    /// The final Reshape's shape operand (the data's shape).
    pub shape: String,
}

/// `mask` as a [`Spread`] of a row mask, when it is one.
pub fn spread_of(view: &View, mask: &str) -> Option<Spread> {
    let producer = |name: &str, op: &str| {
        view.producer(name)
            .filter(|n| view.is_op(n, op) && !n.input.is_empty())
    };
    let reshape = producer(mask, "Reshape").filter(|n| n.input.len() == 2)?;
    let transpose = producer(&reshape.input[0], "Transpose")?;
    if crate::graph::ints_attr(transpose, "perm").ok()?? != [1, 0] {
        return None;
    }
    let expand = producer(&transpose.input[0], "Expand").filter(|n| n.input.len() == 2)?;
    let [row, 1] = view.const_ints(&expand.input[1])?[..] else {
        return None;
    };
    let across = producer(&expand.input[0], "Reshape").filter(|n| n.input.len() == 2)?;
    (view.const_ints(&across.input[1])? == [1, -1]).then(|| Spread {
        rows: across.input[0].clone(),
        row,
        shape: reshape.input[1].clone(),
    })
}
