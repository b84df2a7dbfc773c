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
use crate::Sequential;

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
        let usable = self.mask().len() * slice_bytes;
        if shape.outer == 1 {
            return self.gather_bytes(&x[..usable], slice_bytes, out, exec);
        }
        let tasks = task_count(x.len() / slice_bytes.max(1), exec).min(shape.outer);
        let rows_per_task = shape.outer.div_ceil(tasks);
        let pieces: Vec<_> = out
            .chunks_mut(rows_per_task * row_out)
            .enumerate()
            .collect();
        let mut result = Ok(());
        let failed = std::sync::Mutex::new(&mut result);
        run_owned(exec, pieces, |_, (task, mine)| {
            let first = task * rows_per_task;
            for (r, row) in mine.chunks_mut(row_out).enumerate() {
                let from = (first + r) * row_in;
                if let Err(e) =
                    self.gather_bytes(&x[from..from + usable], slice_bytes, row, &Sequential)
                {
                    if let Ok(mut slot) = failed.lock() {
                        **slot = Err(e);
                    }
                }
            }
        });
        result
    }
}
