//! Fixed sizes read from the inference.

use crate::infer::ShapeTable;

/// The fixed shape of `name`, when every size is known.
pub fn static_dims(shapes: &ShapeTable, name: &str) -> Option<Vec<i64>> {
    shapes
        .info(name)?
        .dims
        .as_ref()?
        .iter()
        .map(|d| d.as_static())
        .collect()
}

/// The element count of fixed sizes, `None` when a size is negative or when it, or the product
/// of the non-zero sizes, does not fit in an int64. The second rule keeps every stride and every
/// partial product of these sizes in range as well: `[0, 2^40, 2^40]` holds no element, but
/// its strides would overflow.
pub fn checked_numel(dims: &[i64]) -> Option<i64> {
    let nonzero = dims.iter().filter(|&&d| d != 0).try_fold(1i64, |n, &d| {
        (d > 0).then_some(())?;
        n.checked_mul(d)
    })?;
    Some(if dims.contains(&0) { 0 } else { nonzero })
}

/// The most elements static mode gives a tensor it pads (2^31): a padded tensor holds the
/// capacity's rows whether or not they are selected, so past this it costs memory that no
/// selection needs. `--capacity` lowers it. The library itself handles tensors past 2^32.
pub const MAX_PADDED_ELEMENTS: i64 = 1 << 31;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_counts_past_int64_are_none() {
        assert_eq!(checked_numel(&[]), Some(1));
        assert_eq!(checked_numel(&[4, 5, 3]), Some(60));
        assert_eq!(checked_numel(&[0, i64::MAX]), Some(0));
        assert_eq!(checked_numel(&[1 << 32, 1 << 32]), None);
        assert_eq!(checked_numel(&[100_000_000_000, 100_000_000_000]), None);
        assert_eq!(checked_numel(&[1 << 62, 2]), None);
        assert_eq!(checked_numel(&[1 << 62, 1]), Some(1 << 62));
        // Empty, but its strides (2^80) would overflow.
        assert_eq!(checked_numel(&[0, 1 << 40, 1 << 40]), None);
        assert_eq!(checked_numel(&[3, -1]), None);
        assert_eq!(checked_numel(&[-2, -3]), None);
    }
}
