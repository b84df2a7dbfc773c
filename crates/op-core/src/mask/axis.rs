//! BooleanMaskAxis: `tf.boolean_mask(x, m, axis=a)` for a 1-D m, defined as the gather exporters
//! write for it: `Gather(X, positions of m's true entries, axis=a)`. Y is
//! `X.shape[..a] + [nnz] + X.shape[a+1..]`.
//!
//! M may be shorter or longer than X's axis: exactly what the gather accepts. Every true entry
//! must name a position inside the axis; a true entry past its end is refused, as Gather refuses
//! the index (false entries past the end are ignored).
//!
//! The copy is BooleanMask's: for each index over the leading axes, the plan of M (cut to the
//! axis) gathers that row's selected slices of `X.shape[a+1..]`.

use super::{MaskError, MaskPlan};
use crate::kernel::{run_owned, task_count, Executor};
use crate::layout::element_count;

/// The shapes of a valid BooleanMaskAxis call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisShape {
    /// The axis, in `0..rank`.
    pub axis: usize,
    /// Elements before the axis (the product of `X.shape[..axis]`).
    pub outer: usize,
    /// `X.shape[axis]`.
    pub axis_len: usize,
    /// Elements of one slice after the axis (the product of `X.shape[axis+1..]`).
    pub inner: usize,
    x_shape: Vec<usize>,
}

impl AxisShape {
    /// Y's shape for `nnz` selected positions.
    pub fn output_shape(&self, nnz: usize) -> Vec<usize> {
        let mut shape = self.x_shape.clone();
        shape[self.axis] = nnz;
        shape
    }

    /// The part of the mask that can select: its first `axis_len` entries. Refuses a true entry
    /// past the axis's end, naming it.
    pub fn usable<'m>(&self, mask: &'m [bool]) -> Result<&'m [bool], MaskError> {
        if let Some(past) = mask.iter().skip(self.axis_len).position(|&m| m) {
            return Err(MaskError::PastAxisEnd {
                position: self.axis_len + past,
                axis: self.axis,
                axis_len: self.axis_len,
            });
        }
        Ok(&mask[..mask.len().min(self.axis_len)])
    }
}

/// Checks `axis` (in `-rank..rank`) against X's rank and returns the geometry; M's own length
/// is free (see [`AxisShape::usable`]).
pub fn check_axis(x_shape: &[usize], axis: i64) -> Result<AxisShape, MaskError> {
    let rank = x_shape.len() as i64;
    if rank == 0 || axis < -rank || axis >= rank {
        return Err(MaskError::Axis {
            axis,
            x_shape: x_shape.to_vec(),
        });
    }
    let axis = if axis < 0 { axis + rank } else { axis } as usize;
    let overflow = || MaskError::ElementCountOverflow {
        sizes: x_shape.to_vec(),
    };
    element_count(x_shape).map_err(|_| overflow())?;
    Ok(AxisShape {
        axis,
        outer: element_count(&x_shape[..axis]).map_err(|_| overflow())?,
        axis_len: x_shape[axis],
        inner: element_count(&x_shape[axis + 1..]).map_err(|_| overflow())?,
        x_shape: x_shape.to_vec(),
    })
}

impl MaskPlan<'_> {
    /// BooleanMaskAxis's copy, for a plan of the usable mask ([`AxisShape::usable`]): `x` holds
    /// `outer` rows of `axis_len` slices of `slice_bytes`; `out` exactly `outer * nnz` slices.
    /// Rows are split among tasks when there are several; one row uses the plan's own chunks.
    pub fn gather_along(
        &self,
        x: &[u8],
        shape: &AxisShape,
        slice_bytes: usize,
        out: &mut [u8],
        exec: &dyn Executor,
    ) -> Result<(), MaskError> {
        let row_in = shape.axis_len * slice_bytes;
        let row_out = self.nnz() * slice_bytes;
        if x.len() != shape.outer * row_in {
            return Err(MaskError::InputLength {
                mask_len: shape.outer * shape.axis_len,
                slice_bytes,
                actual: x.len(),
            });
        }
        if out.len() != shape.outer * row_out {
            return Err(MaskError::OutputLength {
                expected: shape.outer * row_out,
                actual: out.len(),
            });
        }
        if row_out == 0 || shape.outer == 0 {
            return Ok(());
        }
        // A dense mask over one row: BooleanMask's branch-free compaction. Otherwise the runs of
        // consecutive selected positions, found once, are copied for every row: a sparse mask
        // then costs its runs, not its length (the compaction visits every entry).
        if shape.outer == 1 && self.nnz() * SPARSE_BELOW >= self.mask().len() {
            let usable = self.mask().len() * slice_bytes;
            return self.gather_bytes(&x[..usable], slice_bytes, out, exec);
        }
        let runs = runs_of(self.mask());
        if shape.outer == 1 {
            // One row: the runs split among tasks, each writing its own range of Y.
            let tasks = task_count(row_out / slice_bytes.max(1), exec)
                .min(runs.len())
                .max(1);
            let per_task = runs.len().div_ceil(tasks);
            let mut pieces = vec![];
            let mut rest = &mut out[..];
            for group in runs.chunks(per_task) {
                let len: usize = group.iter().map(|r| r.len).sum::<usize>() * slice_bytes;
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(len);
                rest = tail;
                pieces.push((group, mine));
            }
            run_owned(exec, pieces, |_, (group, mine)| {
                copy_runs(x, group, slice_bytes, mine)
            });
            return Ok(());
        }
        let tasks = task_count(x.len() / slice_bytes.max(1), exec).min(shape.outer);
        let rows_per_task = shape.outer.div_ceil(tasks);
        let pieces: Vec<_> = out
            .chunks_mut(rows_per_task * row_out)
            .enumerate()
            .collect();
        run_owned(exec, pieces, |_, (task, mine)| {
            let first = task * rows_per_task;
            for (r, row) in mine.chunks_mut(row_out).enumerate() {
                let from = (first + r) * row_in;
                copy_runs(&x[from..from + row_in], &runs, slice_bytes, row);
            }
        });
        Ok(())
    }
}

/// Below one selected position in this many, a single row is copied by runs.
const SPARSE_BELOW: usize = 8;

/// Consecutive selected positions `start..start + len`.
#[derive(Debug, Clone, Copy)]
struct Run {
    start: usize,
    len: usize,
}

/// The runs of true entries of `mask`, in order. Bools are bytes 0 or 1: eight are read as one
/// word, a zero word is skipped, and a set byte is found by its trailing zeros, so the false
/// stretches of a sparse mask cost one test per eight entries.
fn runs_of(mask: &[bool]) -> Vec<Run> {
    let mut runs: Vec<Run> = vec![];
    let mut push = |i: usize| match runs.last_mut() {
        Some(r) if r.start + r.len == i => r.len += 1,
        _ => runs.push(Run { start: i, len: 1 }),
    };
    let bytes: &[u8] = bytemuck::cast_slice(mask);
    let (words, tail) = bytes.as_chunks::<8>();
    for (c, word) in words.iter().enumerate() {
        let mut bits = u64::from_le_bytes(*word);
        while bits != 0 {
            let k = bits.trailing_zeros() as usize / 8;
            push(c * 8 + k);
            bits &= !(0xFFu64 << (k * 8));
        }
    }
    let base = words.len() * 8;
    for (k, _) in tail.iter().enumerate().filter(|(_, &b)| b != 0) {
        push(base + k);
    }
    runs
}

/// Copies the `runs` of one row `x` (slices of `slice_bytes`) to `out`, in order.
fn copy_runs(x: &[u8], runs: &[Run], slice_bytes: usize, out: &mut [u8]) {
    let mut at = 0;
    for r in runs {
        let len = r.len * slice_bytes;
        let from = r.start * slice_bytes;
        out[at..at + len].copy_from_slice(&x[from..from + len]);
        at += len;
    }
}
