//! Tensor layouts (sizes and element strides) and the shape rules both specs share.

use crate::Error;
use smallvec::SmallVec;

/// Ranks up to this many dimensions are stored inline: building a layout and walking it allocate
/// nothing (ONNX models rarely go past rank 6).
pub(crate) const INLINE_RANK: usize = 8;

/// Per-dimension values (sizes, strides, coordinates), inline up to [`INLINE_RANK`].
pub(crate) type Dims = SmallVec<[usize; INLINE_RANK]>;

/// Sizes and element strides of a tensor view. A stride of 0 broadcasts one element along that
/// dimension (as in DirectML's `DML_BUFFER_TENSOR_DESC`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    sizes: Dims,
    strides: Dims,
    numel: usize,
    packed: bool,
}

impl Layout {
    /// A packed row-major layout.
    pub fn packed(sizes: &[usize]) -> Result<Layout, Error> {
        let numel = element_count(sizes)?;
        Ok(Layout {
            sizes: Dims::from_slice(sizes),
            strides: row_major(sizes),
            numel,
            packed: true,
        })
    }

    /// The packed layout of `sizes` for a buffer of exactly `len` elements (the check that
    /// [`crate::nonzero`] and [`crate::argwhere`] make on their typed slices).
    pub(crate) fn packed_exact(sizes: &[usize], len: usize) -> Result<Layout, Error> {
        let layout = Layout::packed(sizes)?;
        if len != layout.numel() {
            return Err(Error::DataLengthMismatch {
                expected: layout.numel(),
                actual: len,
            });
        }
        Ok(layout)
    }

    /// A layout with explicit element strides.
    pub fn strided(sizes: &[usize], strides: &[usize]) -> Result<Layout, Error> {
        if sizes.len() != strides.len() {
            return Err(Error::StrideRankMismatch {
                sizes: sizes.len(),
                strides: strides.len(),
            });
        }
        let numel = element_count(sizes)?;
        // Size-1 dimensions never move the offset, so their stride does not affect packing.
        let packed = numel == 0
            || sizes
                .iter()
                .zip(strides)
                .zip(row_major(sizes))
                .all(|((&n, &s), r)| n == 1 || s == r);
        Ok(Layout {
            sizes: Dims::from_slice(sizes),
            strides: Dims::from_slice(strides),
            numel,
            packed,
        })
    }

    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    pub fn strides(&self) -> &[usize] {
        &self.strides
    }

    pub fn rank(&self) -> usize {
        self.sizes.len()
    }

    /// Number of logical elements (1 for a scalar, 0 when any size is 0).
    pub fn numel(&self) -> usize {
        self.numel
    }

    /// True when element `i` in row-major order sits at offset `i`.
    pub fn is_packed(&self) -> bool {
        self.packed
    }

    /// Number of elements the data must hold: the largest addressed offset plus one.
    pub fn required_len(&self) -> Result<usize, Error> {
        if self.numel == 0 || self.packed {
            // A packed view addresses offsets 0..numel (size-1 dimensions never move it).
            return Ok(self.numel);
        }
        let overflow = || Error::ElementCountOverflow {
            sizes: self.sizes.to_vec(),
        };
        let mut last = 0usize;
        for (&n, &s) in self.sizes.iter().zip(&self.strides) {
            last = (n - 1)
                .checked_mul(s)
                .and_then(|o| o.checked_add(last))
                .ok_or_else(overflow)?;
        }
        last.checked_add(1).ok_or_else(overflow)
    }
}

/// Product of the sizes, checked.
pub fn element_count(sizes: &[usize]) -> Result<usize, Error> {
    // A zero size empties the tensor whatever the others are, even if their product overflows.
    if sizes.contains(&0) {
        return Ok(0);
    }
    sizes
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .ok_or_else(|| Error::ElementCountOverflow {
            sizes: sizes.to_vec(),
        })
}

/// Row-major (C order) element strides.
pub fn row_major_strides(sizes: &[usize]) -> Vec<usize> {
    row_major(sizes).to_vec()
}

fn row_major(sizes: &[usize]) -> Dims {
    let mut strides = Dims::from_elem(0, sizes.len());
    let mut acc = 1usize;
    for (s, &n) in strides.iter_mut().zip(sizes).rev() {
        *s = acc;
        acc = acc.saturating_mul(n);
    }
    strides
}

/// DirectML's effective rank: the dimension count without the leading size-1 dimensions.
/// `{1,2,3,4}` has effective rank 3, `{1,1,5,5,5}` 3, `{1,1,1,1}` 0.
pub fn effective_rank(sizes: &[usize]) -> usize {
    sizes.len() - sizes.iter().take_while(|&&n| n == 1).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effective_rank_matches_the_directml_examples() {
        assert_eq!(effective_rank(&[1, 2, 3, 4]), 3);
        assert_eq!(effective_rank(&[1, 1, 5, 5, 5]), 3);
        assert_eq!(effective_rank(&[1, 1, 1, 1]), 0);
        assert_eq!(effective_rank(&[1, 1, 12, 5]), 2);
        assert_eq!(effective_rank(&[2, 1, 1]), 3);
        assert_eq!(effective_rank(&[]), 0);
    }

    #[test]
    fn packed_detection_and_required_len() {
        let l = Layout::strided(&[2, 3], &[3, 1]).unwrap();
        assert!(l.is_packed());
        assert_eq!(l.required_len().unwrap(), 6);
        let b = Layout::strided(&[2, 3], &[0, 1]).unwrap();
        assert!(!b.is_packed());
        assert_eq!(b.required_len().unwrap(), 3);
        let t = Layout::strided(&[3, 2], &[1, 3]).unwrap();
        assert!(!t.is_packed());
        assert_eq!(t.required_len().unwrap(), 6);
        assert!(Layout::strided(&[1, 4], &[99, 1]).unwrap().is_packed());
        assert_eq!(
            Layout::strided(&[0, 4], &[7, 7])
                .unwrap()
                .required_len()
                .unwrap(),
            0
        );
        assert_eq!(Layout::packed(&[]).unwrap().numel(), 1);
        assert_eq!(row_major_strides(&[2, 3, 4]), vec![12, 4, 1]);
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(matches!(
            element_count(&[usize::MAX, 2]),
            Err(Error::ElementCountOverflow { .. })
        ));
        assert!(Layout::strided(&[2, 2], &[1]).is_err());
        assert_eq!(element_count(&[usize::MAX, usize::MAX, 0]), Ok(0));
    }
}
