//! The output NonZero and ArgWhere share: the int64 coordinates of the non-zero elements as one
//! matrix, `[rank, nnz]` for NonZero and `[nnz, rank]` (its transpose) for ArgWhere.

use crate::kernel::{Counted, Executor};
use crate::source::ZeroTest;
use crate::{Error, Layout};
#[cfg(feature = "ndarray")]
use ndarray::Array2;

/// The coordinates of the non-zero elements of a rank-`rank` input, as a row-major int64 matrix:
/// `[rank, nnz]` ([`OnnxCoordinates`]) when `NNZ_BY_RANK` is false, `[nnz, rank]`
/// ([`ArgWhereCoordinates`]) when it is true.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coordinates<const NNZ_BY_RANK: bool> {
    pub rank: usize,
    pub nnz: usize,
    /// Row-major, of the shape [`Coordinates::shape`] gives.
    pub data: Vec<i64>,
}

/// ONNX NonZero's output: `[rank, nnz]`; row `d` holds the `d`-th coordinate of every non-zero
/// element.
pub type OnnxCoordinates = Coordinates<false>;

/// ArgWhere's output: `[nnz, rank]`; row `j` holds the coordinates of the `j`-th non-zero
/// element.
pub type ArgWhereCoordinates = Coordinates<true>;

impl<const NNZ_BY_RANK: bool> Coordinates<NNZ_BY_RANK> {
    /// `[rank, nnz]` for NonZero, `[nnz, rank]` for ArgWhere; a scalar input has rank 0.
    pub fn shape(&self) -> [usize; 2] {
        if NNZ_BY_RANK {
            [self.nnz, self.rank]
        } else {
            [self.rank, self.nnz]
        }
    }

    /// The coordinates as an ndarray matrix.
    #[cfg(feature = "ndarray")]
    pub fn into_array(self) -> Array2<i64> {
        Array2::from_shape_vec(self.shape(), self.data)
            .expect("rank * nnz elements by construction")
    }

    /// Both passes over `src`: counts, then lets `write` fill an output of `rank * nnz`.
    pub(crate) fn compute<S: ZeroTest + ?Sized>(
        src: &S,
        layout: &Layout,
        exec: &dyn Executor,
        write: impl FnOnce(&Counted, &S, &mut [i64], &dyn Executor) -> Result<(), Error>,
    ) -> Result<Self, Error> {
        let counted = Counted::count(src, layout, exec)?;
        let mut data = vec![0i64; counted.rank() * counted.nnz()];
        write(&counted, src, &mut data, exec)?;
        Ok(Coordinates {
            rank: counted.rank(),
            nnz: counted.nnz(),
            data,
        })
    }
}
