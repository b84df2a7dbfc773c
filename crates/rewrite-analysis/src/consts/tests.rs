//! Each op's values against numbers worked out by hand (or ONNX Runtime's, where stated).

use super::elementwise::{binary, cast, select, unary};
use super::layout::{concat, expand, gather, reduce, reshape_dims, slice, tile, transpose};
use super::{Const, Data};
use nonzero_proto::onnx::tensor_proto::DataType;

const I64: i32 = DataType::Int64 as i32;
const I32: i32 = DataType::Int32 as i32;
const F32: i32 = DataType::Float as i32;
const BOOL: i32 = DataType::Bool as i32;

fn ints(elem_type: i32, dims: &[usize], v: &[i64]) -> Const {
    Const::new(elem_type, dims.to_vec(), Data::Int(v.to_vec())).expect("a valid value")
}

fn floats(dims: &[usize], v: &[f32]) -> Const {
    Const::new(F32, dims.to_vec(), Data::F32(v.to_vec())).expect("a valid value")
}

#[test]
fn tensors_round_trip_through_initializers() {
    for c in [
        ints(I64, &[2], &[-1, 1 << 40]),
        ints(I32, &[3], &[-7, 0, i32::MAX.into()]),
        ints(BOOL, &[2, 1], &[1, 0]),
        ints(DataType::Uint8 as i32, &[1], &[255]),
        floats(&[], &[0.1]),
    ] {
        assert_eq!(Const::from_tensor(&c.to_tensor("t")), Some(c.clone()));
    }
    assert_eq!(
        ints(DataType::Int8 as i32, &[1], &[200]).ints(),
        Some(&[-56][..])
    );
}

#[test]
fn integer_arithmetic_is_onnx_runtimes() {
    let a = ints(I64, &[4], &[7, -7, 7, -7]);
    let b = ints(I64, &[4], &[2, 2, -2, -2]);
    let div = binary("Div", &a, &b, false).unwrap();
    assert_eq!(div.ints(), Some(&[3, -3, -3, 3][..]), "truncates");
    let m = binary("Mod", &a, &b, false).unwrap();
    assert_eq!(m.ints(), Some(&[1, 1, -1, -1][..]), "the divisor's sign");
    let f = binary("Mod", &a, &b, true).unwrap();
    assert_eq!(
        f.ints(),
        Some(&[1, -1, 1, -1][..]),
        "fmod: the dividend's sign"
    );
    assert_eq!(binary("Div", &a, &ints(I64, &[], &[0]), false), None);
    let wrapped = binary(
        "Add",
        &ints(I32, &[], &[i32::MAX.into()]),
        &ints(I32, &[], &[1]),
        false,
    );
    assert_eq!(wrapped.unwrap().ints(), Some(&[i64::from(i32::MIN)][..]));
}

#[test]
fn float32_stays_float32() {
    // 0.1f + 0.2f in float32 is 0.3f exactly (in double it is not 0.3).
    let s = binary("Add", &floats(&[], &[0.1]), &floats(&[], &[0.2]), false).unwrap();
    assert_eq!(s.data, Data::F32(vec![0.1f32 + 0.2f32]));
    let q = binary("Div", &floats(&[], &[320.0]), &floats(&[], &[32.0]), false).unwrap();
    assert_eq!(unary("Ceil", &q).unwrap().data, Data::F32(vec![10.0]));
    assert_eq!(unary("Exp", &q), None, "not correctly rounded: not folded");
    let nan = floats(&[], &[f32::NAN]);
    assert_eq!(binary("Max", &nan, &q, false), None);
}

#[test]
fn broadcasting_and_where() {
    let a = ints(I64, &[2, 1], &[10, 20]);
    let b = ints(I64, &[3], &[1, 2, 3]);
    let s = binary("Add", &a, &b, false).unwrap();
    assert_eq!(
        (s.dims.clone(), s.ints()),
        (vec![2, 3], Some(&[11, 12, 13, 21, 22, 23][..]))
    );
    let c = ints(BOOL, &[3], &[1, 0, 1]);
    let w = select(&c, &a, &ints(I64, &[], &[0])).unwrap();
    assert_eq!(w.ints(), Some(&[10, 0, 10, 20, 0, 20][..]));
    let lt = binary("Less", &b, &ints(I64, &[], &[2]), false).unwrap();
    assert_eq!((lt.elem_type, lt.ints()), (BOOL, Some(&[1, 0, 0][..])));
    assert_eq!(binary("Add", &b, &ints(I64, &[2], &[0; 2]), false), None);
}

#[test]
fn casts_truncate_and_refuse_out_of_range() {
    let f = floats(&[4], &[2.9, -2.9, 0.0, 1e10]);
    assert_eq!(
        cast(&f, I64).unwrap().ints(),
        Some(&[2, -2, 0, 10_000_000_000][..])
    );
    assert_eq!(cast(&f, I32), None, "1e10 is past int32");
    assert_eq!(cast(&f, BOOL).unwrap().ints(), Some(&[1, 1, 0, 1][..]));
    let big = ints(I64, &[1], &[16_777_217]);
    assert_eq!(cast(&big, F32).unwrap().data, Data::F32(vec![16_777_216.0]));
}

#[test]
fn layout_ops_pick_the_right_elements() {
    let x = ints(I64, &[2, 3], &[0, 1, 2, 3, 4, 5]);
    let t = transpose(&x, &[1, 0]).unwrap();
    assert_eq!(t.ints(), Some(&[0, 3, 1, 4, 2, 5][..]));
    let g = gather(&x, &ints(I64, &[2], &[-1, 0]), 1).unwrap();
    assert_eq!(
        (g.dims.clone(), g.ints()),
        (vec![2, 2], Some(&[2, 0, 5, 3][..]))
    );
    let r = slice(&x, &[i64::MAX], &[i64::MIN], &[1], &[-1]).unwrap();
    assert_eq!(
        r.ints(),
        Some(&[2, 1, 0, 5, 4, 3][..]),
        "reversed by step -1"
    );
    let s = slice(&x, &[1], &[100], &[1], &[1]).unwrap();
    assert_eq!(s.ints(), Some(&[1, 2, 4, 5][..]));
    let c = concat(&[&x, &ints(I64, &[2, 1], &[9, 9])], 1).unwrap();
    assert_eq!(c.ints(), Some(&[0, 1, 2, 9, 3, 4, 5, 9][..]));
    assert_eq!(reshape_dims(&x, &[0, -1], false), Some(vec![2, 3]));
    assert_eq!(reshape_dims(&x, &[-1], false), Some(vec![6]));
    let e = expand(&ints(I64, &[1], &[7]), &[2, 2]).unwrap();
    assert_eq!(e.ints(), Some(&[7; 4][..]));
    let tl = tile(&ints(I64, &[2], &[1, 2]), &[2]).unwrap();
    assert_eq!(tl.ints(), Some(&[1, 2, 1, 2][..]));
}

#[test]
fn reductions() {
    let x = ints(I64, &[2, 3], &[0, 1, 2, 3, 4, 5]);
    let m = reduce("ReduceMax", &x, &[1], false).unwrap();
    assert_eq!((m.dims.clone(), m.ints()), (vec![2], Some(&[2, 5][..])));
    let p = reduce("ReduceProd", &x, &[0], true).unwrap();
    assert_eq!(
        (p.dims.clone(), p.ints()),
        (vec![1, 3], Some(&[0, 4, 10][..]))
    );
    let f = floats(&[3], &[0.1, 0.2, 0.3]);
    assert_eq!(
        reduce("ReduceSum", &f, &[0], false),
        None,
        "order-dependent rounding"
    );
    assert_eq!(
        reduce("ReduceMin", &f, &[0], false).unwrap().data,
        Data::F32(vec![0.1])
    );
    let narrow = ints(I32, &[2], &[i32::MAX.into(), 1]);
    assert_eq!(
        reduce("ReduceSum", &narrow, &[0], false),
        None,
        "int32 would wrap"
    );
    let max = reduce("ReduceMax", &narrow, &[0], false).unwrap();
    assert_eq!(max.ints(), Some(&[i64::from(i32::MAX)][..]));
}

#[test]
fn a_selection_of_a_value() {
    let x = ints(BOOL, &[2, 3], &[0, 1, 0, 1, 0, 1]);
    let c = super::eval::nonzero(&x).unwrap();
    assert_eq!(
        (c.dims.clone(), c.ints()),
        (vec![2, 3], Some(&[0, 1, 1, 1, 0, 2][..]))
    );
    let none = super::eval::nonzero(&floats(&[2], &[0.0, -0.0])).unwrap();
    assert_eq!(none.dims, vec![1, 0]);
}
