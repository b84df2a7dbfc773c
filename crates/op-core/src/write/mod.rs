//! Masked writes: Y is X with the elements a bool mask of X's shape selects overwritten, the
//! forms torch exports as `ScatterND(X, coordinates of M, U)` (`x[m] = v`, `masked_fill`,
//! `masked_scatter`). No coordinates are built: X and M are read once and Y written once.
//!
//! - **MaskedFill(X, M, V)** is `Where(M, V, X)` with V broadcast to X's shape (unidirectional
//!   broadcasting): every selected element takes V's value at its own position.
//! - **MaskedScatter(X, M, S)** is torch's `masked_scatter`: the j-th selected element in
//!   row-major order takes `S.flat[j]`; S holds at least as many values as M selects (the rest is
//!   not read).
//!
//! The kernels work on bytes (any fixed-size type); the host's strings go element by element
//! through [`MaskedPlan::for_each`].

mod error;
mod select;
#[cfg(test)]
mod tests;

pub use error::WriteError;

use crate::kernel::{run_owned, task_count, Executor};
use crate::layout::element_count;
use crate::mask::MaskPlan;
use crate::DataType;
use std::borrow::Cow;

/// Checks a masked write's mask: bool, of X's shape. Returns X's element count.
pub fn check_write_mask(
    op: &'static str,
    mask_type: DataType,
    x_shape: &[usize],
    mask_shape: &[usize],
) -> Result<usize, WriteError> {
    if mask_type != DataType::Bool {
        return Err(WriteError::MaskType {
            op,
            found: mask_type.onnx_name(),
        });
    }
    if x_shape != mask_shape {
        return Err(WriteError::MaskShape {
            op,
            mask_shape: mask_shape.to_vec(),
            x_shape: x_shape.to_vec(),
        });
    }
    element_count(x_shape).map_err(|_| WriteError::ElementCountOverflow {
        sizes: x_shape.to_vec(),
    })
}

/// How MaskedFill's value covers X: after `pattern_len` elements the broadcast value repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FillPattern {
    /// Elements of the repeating pattern: V's own data when V varies only along X's trailing
    /// dimensions (a scalar, a row), else V broadcast to X's whole shape.
    pub pattern_len: usize,
    /// True when V's data is itself the pattern; false when it must be broadcast first
    /// ([`FillPattern::expand`]).
    pub value_is_pattern: bool,
    x_shape: Vec<usize>,
    value_shape: Vec<usize>,
}

/// Checks that V broadcasts to X's shape (right-aligned, each size 1 or X's, rank at most X's)
/// and finds the pattern MaskedFill repeats.
pub fn check_fill_value(
    x_shape: &[usize],
    value_shape: &[usize],
) -> Result<FillPattern, WriteError> {
    let bad = || WriteError::ValueShape {
        value_shape: value_shape.to_vec(),
        x_shape: x_shape.to_vec(),
    };
    if value_shape.len() > x_shape.len() {
        return Err(bad());
    }
    let padded: Vec<usize> = std::iter::repeat_n(1, x_shape.len() - value_shape.len())
        .chain(value_shape.iter().copied())
        .collect();
    if padded.iter().zip(x_shape).any(|(&v, &x)| v != 1 && v != x) {
        return Err(bad());
    }
    // V repeats as a whole when it equals X's trailing dims after leading ones; then its own
    // data is the period. Trailing dims equal to X's, preceded only by ones:
    let equal_from = (0..=x_shape.len())
        .rev()
        .take_while(|&j| j == x_shape.len() || padded[j] == x_shape[j])
        .last()
        .unwrap_or(x_shape.len());
    let value_is_pattern = padded[..equal_from].iter().all(|&v| v == 1);
    let overflow = || WriteError::ElementCountOverflow {
        sizes: x_shape.to_vec(),
    };
    let pattern_len = if value_is_pattern {
        element_count(&x_shape[equal_from..]).map_err(|_| overflow())?
    } else {
        element_count(x_shape).map_err(|_| overflow())?
    };
    Ok(FillPattern {
        pattern_len,
        value_is_pattern,
        x_shape: x_shape.to_vec(),
        value_shape: padded,
    })
}

impl FillPattern {
    /// The pattern's bytes: `value` itself, or `value` broadcast to X's shape.
    pub fn expand<'v>(&self, value: &'v [u8], elem: usize) -> Cow<'v, [u8]> {
        if self.value_is_pattern {
            return Cow::Borrowed(value);
        }
        let rank = self.x_shape.len();
        let mut value_strides = vec![0usize; rank];
        let mut stride = 1;
        for d in (0..rank).rev() {
            value_strides[d] = if self.value_shape[d] == 1 { 0 } else { stride };
            stride *= self.value_shape[d];
        }
        let mut out = Vec::with_capacity(self.pattern_len * elem);
        let mut index = vec![0usize; rank];
        for _ in 0..self.pattern_len {
            let at: usize = index.iter().zip(&value_strides).map(|(i, s)| i * s).sum();
            out.extend_from_slice(&value[at * elem..(at + 1) * elem]);
            for d in (0..rank).rev() {
                index[d] += 1;
                if index[d] < self.x_shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
        Cow::Owned(out)
    }
}

fn check_len(
    what: &'static str,
    bytes: &[u8],
    elements: usize,
    elem: usize,
) -> Result<(), WriteError> {
    let expected = elements.saturating_mul(elem);
    if bytes.len() != expected {
        return Err(WriteError::Length {
            what,
            expected,
            actual: bytes.len(),
        });
    }
    Ok(())
}

/// MaskedFill on bytes: `out[i] = mask[i] ? pattern[i mod P] : x[i]`, elements of `elem` bytes,
/// where `pattern` ([`FillPattern::expand`]) holds P elements.
pub fn masked_fill_bytes(
    x: &[u8],
    mask: &[bool],
    pattern: &[u8],
    elem: usize,
    out: &mut [u8],
    exec: &dyn Executor,
) -> Result<(), WriteError> {
    let n = mask.len();
    check_len("X", x, n, elem)?;
    check_len("Y", out, n, elem)?;
    if n == 0 {
        return Ok(());
    }
    let period = pattern.len() / elem.max(1);
    if period == 0 || pattern.len() != period * elem {
        return Err(WriteError::Length {
            what: "the fill pattern",
            expected: period.max(1) * elem,
            actual: pattern.len(),
        });
    }
    // A short pattern (a row of 3) is repeated to at least 64 elements, so that the inner loop
    // runs long enough to be vectorized; the result repeats with the same values.
    let tiled: Cow<[u8]> = if period > 1 && period < 64 {
        Cow::Owned(pattern.repeat(64usize.div_ceil(period)))
    } else {
        Cow::Borrowed(pattern)
    };
    let (pattern, period) = (&tiled[..], tiled.len() / elem);
    // Chunks start at multiples of the period, so that each starts at the pattern's first element.
    let tasks = task_count(n, exec);
    let per_task = n.div_ceil(tasks).div_ceil(period) * period;
    let mut pieces = vec![];
    let mut rest = &mut out[..];
    let mut start = 0;
    while start < n {
        let end = (start + per_task).min(n);
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut((end - start) * elem);
        rest = tail;
        pieces.push((start..end, mine));
        start = end;
    }
    run_owned(exec, pieces, |_, (span, mine)| {
        let x = &x[span.start * elem..span.end * elem];
        select::fill(x, &mask[span], pattern, elem, mine);
    });
    Ok(())
}

/// MaskedScatter on bytes: `out[i] = mask[i] ? source[rank of i] : x[i]`, elements of `elem`
/// bytes. `source` holds at least as many elements as the mask selects. [`MaskedPlan::count`]
/// then [`MaskedPlan::scatter_bytes`], for a caller that has nothing to allocate in between.
pub fn masked_scatter_bytes(
    x: &[u8],
    mask: &[bool],
    source: &[u8],
    elem: usize,
    out: &mut [u8],
    exec: &dyn Executor,
) -> Result<(), WriteError> {
    MaskedPlan::count(mask, source.len() / elem.max(1), exec)?
        .scatter_bytes(x, source, elem, out, exec)
}

/// MaskedScatter's count, checked against the source: the plan both byte and string paths use.
#[derive(Debug)]
pub struct MaskedPlan<'m> {
    plan: MaskPlan<'m>,
}

impl<'m> MaskedPlan<'m> {
    /// Counts the mask; refuses a source of fewer than the selected count of values.
    pub fn count(
        mask: &'m [bool],
        source_len: usize,
        exec: &dyn Executor,
    ) -> Result<Self, WriteError> {
        let plan = MaskPlan::count(mask, exec);
        if source_len < plan.nnz() {
            return Err(WriteError::SourceTooShort {
                selected: plan.nnz(),
                available: source_len,
            });
        }
        Ok(MaskedPlan { plan })
    }

    /// The second pass: writes `out` (each chunk of the mask its own range, starting at its
    /// first selected element's place in `source`). `source` is the one [`MaskedPlan::count`]
    /// was checked against.
    pub fn scatter_bytes(
        &self,
        x: &[u8],
        source: &[u8],
        elem: usize,
        out: &mut [u8],
        exec: &dyn Executor,
    ) -> Result<(), WriteError> {
        let mask = self.plan.mask();
        check_len("X", x, mask.len(), elem)?;
        check_len("Y", out, mask.len(), elem)?;
        if source.len() < self.plan.nnz() * elem {
            return Err(WriteError::SourceTooShort {
                selected: self.plan.nnz(),
                available: source.len() / elem.max(1),
            });
        }
        let mut pieces = vec![];
        let mut rest = &mut out[..];
        for (span, first) in self.plan.spans_with_ranks() {
            let (mine, tail) = std::mem::take(&mut rest).split_at_mut(span.len() * elem);
            rest = tail;
            pieces.push((span, first, mine));
        }
        run_owned(exec, pieces, |_, (span, first, mine)| {
            let x = &x[span.start * elem..span.end * elem];
            select::scatter(x, &mask[span], &source[first * elem..], elem, mine);
        });
        Ok(())
    }

    /// Calls `write(i, Some(j))` for the j-th selected element i, `write(i, None)` for the rest.
    pub fn for_each(&self, mut write: impl FnMut(usize, Option<usize>)) {
        let mut j = 0;
        for (i, &m) in self.plan.mask().iter().enumerate() {
            write(i, m.then_some(j));
            j += usize::from(m);
        }
    }
}
