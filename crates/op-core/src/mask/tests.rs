use super::*;
use crate::{Rayon, Sequential};

#[test]
fn mask_of_x_shape_selects_elements() {
    // x[mask] with mask of x's shape: a 1-D result.
    let x = [1i32, 2, 3, 4, 5, 6];
    let mask = [true, false, false, true, true, false];
    let (shape, y) = boolean_mask(&x, &[2, 3], &mask, &[2, 3], &Sequential).unwrap();
    assert_eq!((shape, y), (vec![3], vec![1, 4, 5]));
}

#[test]
fn leading_mask_selects_rows() {
    // boxes[scores > t]: mask [4] over boxes [4, 2].
    let boxes = [0u16, 1, 10, 11, 20, 21, 30, 31];
    let (shape, y) =
        boolean_mask(&boxes, &[4, 2], &[false, true, false, true], &[4], &Rayon).unwrap();
    assert_eq!((shape, y), (vec![2, 2], vec![10, 11, 30, 31]));
    // A rank-2 mask over a rank-3 X.
    let x: Vec<f64> = (0..12).map(f64::from).collect();
    let (shape, y) =
        boolean_mask(&x, &[2, 2, 3], &[false, true, true, false], &[2, 2], &Rayon).unwrap();
    assert_eq!((shape, y), (vec![2, 3], vec![3.0, 4.0, 5.0, 6.0, 7.0, 8.0]));
}

#[test]
fn empty_all_false_and_all_true() {
    let (shape, y) = boolean_mask::<f32>(&[], &[0, 4], &[], &[0], &Sequential).unwrap();
    assert_eq!((shape, y.len()), (vec![0, 4], 0));
    let (shape, y) = boolean_mask(&[1u8; 6], &[3, 2], &[false; 3], &[3], &Sequential).unwrap();
    assert_eq!((shape, y.len()), (vec![0, 2], 0));
    let (shape, y) = boolean_mask(&[1u8, 2, 3], &[3], &[true; 3], &[3], &Sequential).unwrap();
    assert_eq!((shape, y), (vec![3], vec![1, 2, 3]));
    // Zero-size slices: Y is [nnz, 0] and empty.
    let (shape, y) =
        boolean_mask::<i64>(&[], &[3, 0], &[true, false, true], &[3], &Sequential).unwrap();
    assert_eq!((shape, y.len()), (vec![2, 0], 0));
}

#[test]
fn strings_go_through_for_each_selected() {
    let x = ["a", "", "b", "c", "d", "e"]; // [3, 2]
    let mask = [true, false, true];
    let shape = check_mask_shape(&[3, 2], &[3]).unwrap();
    let plan = MaskPlan::count(&mask, &Sequential);
    let mut y = vec![""; plan.nnz() * shape.slice_len];
    plan.for_each_selected(|slice, row| {
        let n = shape.slice_len;
        y[row * n..(row + 1) * n].copy_from_slice(&x[slice * n..(slice + 1) * n]);
    });
    assert_eq!(shape.output_shape(plan.nnz()), vec![2, 2]);
    assert_eq!(y, vec!["a", "", "d", "e"]);
    assert_eq!(plan.selected().collect::<Vec<_>>(), vec![0, 2]);
}

#[test]
fn shape_rules_name_both_shapes() {
    let e = check_mask_shape(&[2, 4, 5], &[2, 3]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "mask shape [2, 3] must equal the leading dimensions of X's shape [2, 4, 5]"
    );
    assert!(matches!(
        check_mask_shape(&[2], &[2, 1]),
        Err(MaskError::ShapeMismatch { .. })
    ));
    let e = check_mask_shape(&[2, 4], &[]).unwrap_err();
    assert_eq!(
        e,
        MaskError::ScalarMask {
            x_shape: vec![2, 4]
        }
    );
    assert!(e.to_string().contains("rank 1 or more"), "{e}");
    let e = check_mask_type(DataType::Float32).unwrap_err();
    assert_eq!(
        e.to_string(),
        "BooleanMask's mask must be a bool tensor, not float"
    );
    assert_eq!(check_mask_type(DataType::Bool), Ok(()));
    let ok = check_mask_shape(&[2, 4, 5], &[2, 4]).unwrap();
    assert_eq!((ok.mask_len, ok.slice_len), (8, 5));
    assert_eq!(ok.output_shape(3), vec![3, 5]);
}

#[test]
fn wrong_buffer_lengths_are_errors_and_write_nothing() {
    let mask = [true, false];
    let plan = MaskPlan::count(&mask, &Sequential);
    let mut out = [7u8; 4];
    assert_eq!(
        plan.gather_bytes(&[1, 2, 3], 2, &mut out[..2], &Sequential),
        Err(MaskError::InputLength {
            mask_len: 2,
            slice_bytes: 2,
            actual: 3
        })
    );
    assert_eq!(
        plan.gather_bytes(&[1, 2, 3, 4], 2, &mut out, &Sequential),
        Err(MaskError::OutputLength {
            expected: 2,
            actual: 4
        })
    );
    assert_eq!(out, [7; 4]);
    assert!(matches!(
        boolean_mask(&[1u8; 4], &[4], &[true; 3], &[4], &Sequential),
        Err(MaskError::MaskLength {
            expected: 4,
            actual: 3
        })
    ));
}

#[test]
fn chunks_split_anywhere() {
    let mask: Vec<bool> = (0..1000).map(|i| (i * 7919) % 5 < 2).collect();
    let x: Vec<u32> = (0..1000 * 3).collect();
    let expected: Vec<u32> = (0..1000)
        .filter(|&i| mask[i])
        .flat_map(|i| x[3 * i..3 * i + 3].to_vec())
        .collect();
    for tasks in [1, 2, 3, 7, 64, 999, 5000] {
        let plan = MaskPlan::count_in_tasks(&mask, &Rayon, tasks);
        let mut out = vec![0u32; plan.nnz() * 3];
        plan.gather(&x, 3, &mut out, &Rayon).unwrap();
        assert_eq!(out, expected, "tasks {tasks}");
    }
}

/// `Gather(x, positions of m's true entries, axis)`, element by element.
fn naive_gather_along(x: &[u32], shape: &[usize], axis: usize, mask: &[bool]) -> Vec<u32> {
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let picked: Vec<usize> = (0..mask.len()).filter(|&i| mask[i]).collect();
    let mut y = vec![];
    for o in 0..outer {
        for &j in &picked {
            let at = (o * shape[axis] + j) * inner;
            y.extend_from_slice(&x[at..at + inner]);
        }
    }
    y
}

fn gather_along(
    x: &[u32],
    shape: &[usize],
    axis: i64,
    mask: &[bool],
    exec: &dyn Executor,
) -> Result<(Vec<usize>, Vec<u32>), MaskError> {
    let geometry = check_axis(shape, axis)?;
    let usable = geometry.usable(mask)?;
    let plan = MaskPlan::count(usable, exec);
    let mut y = vec![0u32; geometry.outer * plan.nnz() * geometry.inner];
    plan.gather_along(
        bytemuck::cast_slice(x),
        &geometry,
        geometry.inner * 4,
        bytemuck::cast_slice_mut(&mut y),
        exec,
    )?;
    Ok((geometry.output_shape(plan.nnz()), y))
}

#[test]
fn gather_along_any_axis_matches_the_gather() {
    // Past the parallel threshold too (many rows, one long row), except under Miri (too slow).
    let big = if cfg!(miri) {
        vec![]
    } else {
        vec![vec![600, 3, 90], vec![1, 200_000]]
    };
    let small = [vec![7], vec![3, 5], vec![2, 3, 4], vec![4, 0, 3]];
    for shape in small.into_iter().chain(big) {
        let n: usize = shape.iter().product();
        let x: Vec<u32> = (0..n as u32).collect();
        for axis in 0..shape.len() {
            let len = shape[axis];
            // Shorter than the axis, as long, and longer with only false entries past the end;
            // dense (BooleanMask's compaction) and sparse (runs; pairs make runs of 2).
            let lengths = [len / 2, len, len + 3];
            for (mask_len, every) in lengths.into_iter().flat_map(|l| [(l, 1), (l, 23)]) {
                let mask: Vec<bool> = (0..mask_len)
                    .map(|i| i < len && (i / every * 5 + 1) % 3 != 0 && i % every < 2)
                    .collect();
                for exec in [&Sequential as &dyn Executor, &Rayon] {
                    let (out_shape, y) =
                        gather_along(&x, &shape, axis as i64, &mask, exec).unwrap();
                    let nnz = mask.iter().filter(|&&m| m).count();
                    let mut want_shape = shape.clone();
                    want_shape[axis] = nnz;
                    assert_eq!(out_shape, want_shape);
                    assert_eq!(
                        y,
                        naive_gather_along(&x, &shape, axis, &mask),
                        "{shape:?} axis {axis}"
                    );
                }
            }
        }
    }
}

#[test]
fn gather_along_refuses_a_bad_axis_and_a_position_past_the_end() {
    let x = [0u32; 6];
    let e = gather_along(&x, &[2, 3], 1, &[true, false, false, true], &Sequential).unwrap_err();
    assert_eq!(
        e.to_string(),
        "BooleanMaskAxis's mask selects position 3, past the end of X's axis 1 (size 3), as the \
         Gather it stands for would refuse"
    );
    let (shape, _) =
        gather_along(&x, &[2, 3], -1, &[true, false, false, false], &Sequential).unwrap();
    assert_eq!(shape, [2, 1]);
    let e = gather_along(&x, &[2, 3], 2, &[true], &Sequential).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("BooleanMaskAxis's axis 2 is not an axis of X's shape [2, 3]"),
        "{e}"
    );
    assert!(check_axis(&[], 0).is_err());
}
