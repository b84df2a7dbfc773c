//! BooleanMask, the semantics of `tf.boolean_mask` and torch's `x[mask]`: a bool mask whose shape
//! is the leading `k >= 1` dimensions of X selects whole slices `X[i0, .., ik-1, ...]`; Y, of shape
//! `[nnz] + X.shape[k:]`, holds the selected slices in row-major order of the mask.
//!
//! Two phases, because a host such as ONNX Runtime allocates Y only once its shape is known:
//! [`MaskPlan::count`] counts the mask per chunk (one counter per chunk, nothing proportional to
//! the input), then [`MaskPlan::gather_bytes`] lets each chunk copy its selected slices to its own
//! range of Y. X and the mask are read once, Y is written once; no coordinates are materialized.

mod axis;
mod compact;
mod error;

pub use axis::{check_axis, AxisShape};
pub use error::MaskError;

use crate::kernel::{run_owned, task_count, Counted, Executor};
use crate::layout::element_count;
use crate::{DataType, Layout};

/// The shapes of a valid BooleanMask call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaskShape {
    /// Elements of the mask (= slices of X).
    pub mask_len: usize,
    /// `X.shape[k:]`: the shape of one selected slice.
    pub slice_shape: Vec<usize>,
    /// Elements of one slice.
    pub slice_len: usize,
}

impl MaskShape {
    /// Y's shape for `nnz` selected slices: `[nnz] + X.shape[k:]`.
    pub fn output_shape(&self, nnz: usize) -> Vec<usize> {
        let mut shape = Vec::with_capacity(1 + self.slice_shape.len());
        shape.push(nnz);
        shape.extend_from_slice(&self.slice_shape);
        shape
    }
}

/// Checks the mask's element type: BooleanMask takes a bool mask only.
pub fn check_mask_type(mask_type: DataType) -> Result<(), MaskError> {
    if mask_type == DataType::Bool {
        Ok(())
    } else {
        Err(MaskError::MaskType {
            found: mask_type.onnx_name(),
        })
    }
}

/// Checks the shape rule (rank `k >= 1`, mask shape = the first `k` dimensions of X) and returns
/// the slice geometry. Shapes may be only partly known to a caller doing shape inference; this
/// takes them fully known.
pub fn check_mask_shape(x_shape: &[usize], mask_shape: &[usize]) -> Result<MaskShape, MaskError> {
    if mask_shape.is_empty() {
        return Err(MaskError::ScalarMask {
            x_shape: x_shape.to_vec(),
        });
    }
    if mask_shape.len() > x_shape.len() || x_shape[..mask_shape.len()] != *mask_shape {
        return Err(MaskError::ShapeMismatch {
            mask_shape: mask_shape.to_vec(),
            x_shape: x_shape.to_vec(),
        });
    }
    let overflow = |sizes: &[usize]| MaskError::ElementCountOverflow {
        sizes: sizes.to_vec(),
    };
    let mask_len = element_count(mask_shape).map_err(|_| overflow(mask_shape))?;
    let slice_shape = x_shape[mask_shape.len()..].to_vec();
    let slice_len = element_count(&slice_shape).map_err(|_| overflow(x_shape))?;
    // X's element count must fit too (a zero anywhere empties it).
    element_count(x_shape).map_err(|_| overflow(x_shape))?;
    Ok(MaskShape {
        mask_len,
        slice_shape,
        slice_len,
    })
}

/// The first phase's result: where each chunk of the mask starts writing in Y.
#[derive(Debug)]
pub struct MaskPlan<'m> {
    mask: &'m [bool],
    counted: Counted,
}

impl<'m> MaskPlan<'m> {
    /// Counts the mask's true entries per chunk; the chunk count follows the mask's length.
    pub fn count(mask: &'m [bool], exec: &dyn Executor) -> MaskPlan<'m> {
        MaskPlan::count_for_slices(mask, 1, exec)
    }

    /// As [`MaskPlan::count`], with the chunk count chosen for the whole copy: `slice_len`
    /// elements per selected slice, so that a short mask over large slices still runs in
    /// parallel.
    pub fn count_for_slices(
        mask: &'m [bool],
        slice_len: usize,
        exec: &dyn Executor,
    ) -> MaskPlan<'m> {
        let work = mask.len().saturating_mul(slice_len.max(1));
        MaskPlan::count_in_tasks(mask, exec, task_count(work, exec).min(mask.len()))
    }

    /// As [`MaskPlan::count`] with exactly `tasks` chunks (at most one per mask entry); tests use
    /// it to put chunk boundaries anywhere.
    pub fn count_in_tasks(mask: &'m [bool], exec: &dyn Executor, tasks: usize) -> MaskPlan<'m> {
        let layout = Layout::packed(&[mask.len()]).expect("a slice's length fits usize");
        let counted = Counted::count_chunks(mask, &layout, exec, tasks)
            .expect("a packed 1-D layout covers its own slice");
        MaskPlan { mask, counted }
    }

    /// Number of selected slices: Y's first dimension.
    pub fn nnz(&self) -> usize {
        self.counted.nnz()
    }

    /// The mask this plan counted.
    pub fn mask(&self) -> &'m [bool] {
        self.mask
    }

    /// Second phase for fixed-size types: copies every selected slice of `x` (packed, each
    /// `slice_bytes` bytes) into `out`, which must hold exactly `nnz * slice_bytes` bytes. Single
    /// elements and small slices (`slice_bytes` of 1, 2, 3, 4, 6, 8, 12, 16, 20, 24 or 32) go
    /// through a branch-free compaction; other sizes copy runs of consecutive selected slices
    /// with one `memcpy` each.
    pub fn gather_bytes(
        &self,
        x: &[u8],
        slice_bytes: usize,
        out: &mut [u8],
        exec: &dyn Executor,
    ) -> Result<(), MaskError> {
        let expected_x = self.mask.len().checked_mul(slice_bytes);
        if expected_x != Some(x.len()) {
            return Err(MaskError::InputLength {
                mask_len: self.mask.len(),
                slice_bytes,
                actual: x.len(),
            });
        }
        let expected = self.nnz() * slice_bytes;
        if out.len() != expected {
            return Err(MaskError::OutputLength {
                expected,
                actual: out.len(),
            });
        }
        if expected == 0 {
            return Ok(());
        }
        let pieces: Vec<_> = self
            .counted
            .spans()
            .zip(self.counted.split_output(out, slice_bytes))
            .collect();
        run_owned(exec, pieces, |_, (slices, mine)| {
            let x = &x[slices.start * slice_bytes..slices.end * slice_bytes];
            compact::gather(&self.mask[slices], x, slice_bytes, mine);
        });
        Ok(())
    }

    /// Typed convenience over [`MaskPlan::gather_bytes`]: `x` holds `mask.len() * slice_len`
    /// elements, `out` exactly `nnz * slice_len`.
    pub fn gather<T: bytemuck::NoUninit + bytemuck::AnyBitPattern>(
        &self,
        x: &[T],
        slice_len: usize,
        out: &mut [T],
        exec: &dyn Executor,
    ) -> Result<(), MaskError> {
        let size = std::mem::size_of::<T>();
        self.gather_bytes(
            bytemuck::cast_slice(x),
            slice_len * size,
            bytemuck::cast_slice_mut(out),
            exec,
        )
    }

    /// The chunks of the mask (flat index ranges), each with the selected count before it.
    pub(crate) fn spans_with_ranks(
        &self,
    ) -> impl Iterator<Item = (std::ops::Range<usize>, usize)> + '_ {
        self.counted.spans_with_ranks()
    }

    /// Calls `copy(source_slice, output_row)` for every selected slice in order, output rows
    /// `0..nnz`: the path for strings, which a host hands over one by one.
    pub fn for_each_selected(&self, mut copy: impl FnMut(usize, usize)) {
        for (row, slice) in self.selected().enumerate() {
            copy(slice, row);
        }
    }

    /// The indices of the selected slices (flat mask indices), ascending.
    pub fn selected(&self) -> impl Iterator<Item = usize> + 'm {
        self.mask
            .iter()
            .enumerate()
            .filter_map(|(i, &m)| m.then_some(i))
    }
}

/// BooleanMask of a packed tensor on the given executor: Y's shape and elements.
///
/// ```
/// use nonzero_core::{mask::boolean_mask, Sequential};
/// let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // [3, 2]
/// let (shape, y) = boolean_mask(&x, &[3, 2], &[true, false, true], &[3], &Sequential).unwrap();
/// assert_eq!((shape, y), (vec![2, 2], vec![1.0, 2.0, 5.0, 6.0]));
/// ```
pub fn boolean_mask<T>(
    x: &[T],
    x_shape: &[usize],
    mask: &[bool],
    mask_shape: &[usize],
    exec: &dyn Executor,
) -> Result<(Vec<usize>, Vec<T>), MaskError>
where
    T: bytemuck::NoUninit + bytemuck::AnyBitPattern + Default,
{
    let shape = check_mask_shape(x_shape, mask_shape)?;
    if mask.len() != shape.mask_len {
        return Err(MaskError::MaskLength {
            expected: shape.mask_len,
            actual: mask.len(),
        });
    }
    let plan = MaskPlan::count_for_slices(mask, shape.slice_len, exec);
    let mut y = vec![T::default(); plan.nnz() * shape.slice_len];
    plan.gather(x, shape.slice_len, &mut y, exec)?;
    Ok((shape.output_shape(plan.nnz()), y))
}

#[cfg(test)]
mod tests;
