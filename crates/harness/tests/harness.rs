//! Harness tests that need no ONNX Runtime: TensorProto round trips, models, case dirs, the pack.

use nonzero_core::{bf16, f16, Complex32, Complex64, DataType};
use nonzero_harness::model::{masked_select_model, nonzero_model, threshold_filter_model, Dim};
use nonzero_harness::onnx::TensorProto;
use nonzero_harness::pack::{case_specs, special_values, write_pack};
use nonzero_harness::{bundled, Tensor, TensorData, TestCase};
use std::path::PathBuf;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "nonzero-harness-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn one_of_each() -> Vec<Tensor> {
    let mut v: Vec<Tensor> = special_values()
        .into_iter()
        .map(|(_, d)| Tensor::new(vec![d.len()], d))
        .collect();
    v.push(Tensor::new(vec![2, 0], TensorData::Float32(vec![])));
    v.push(Tensor::new(vec![], TensorData::Int64(vec![-7])));
    v
}

#[test]
fn every_type_round_trips_through_tensor_proto() {
    let all = one_of_each();
    for t in DataType::ALL {
        assert!(all.iter().any(|x| x.dtype() == t), "no sample of {t}");
    }
    for t in &all {
        let (name, back) = Tensor::decode(&t.encode("x")).unwrap();
        assert_eq!(name, "x");
        assert!(
            back.same_as(t),
            "{} -> {}",
            t.describe(20),
            back.describe(20)
        );
    }
}

#[test]
fn typed_fields_are_read() {
    let proto = |code: i32, dims: Vec<i64>, f: &dyn Fn(&mut TensorProto)| {
        let mut p = TensorProto {
            data_type: Some(code),
            dims,
            ..Default::default()
        };
        f(&mut p);
        Tensor::from_proto(&p).unwrap()
    };
    let t = proto(9, vec![3], &|p| p.int32_data = vec![1, 0, 1]);
    assert_eq!(t.data, TensorData::Bool(vec![true, false, true]));
    let t = proto(3, vec![2], &|p| p.int32_data = vec![-128, 127]);
    assert_eq!(t.data, TensorData::Int8(vec![-128, 127]));
    let t = proto(10, vec![2], &|p| p.int32_data = vec![0x8000, 0x7E00]);
    assert!(t.data.same_bits(&TensorData::Float16(vec![
        f16::from_bits(0x8000),
        f16::from_bits(0x7E00)
    ])));
    let t = proto(16, vec![1], &|p| p.int32_data = vec![0x0001]);
    assert!(t
        .data
        .same_bits(&TensorData::Bfloat16(vec![bf16::from_bits(1)])));
    let t = proto(12, vec![1], &|p| p.uint64_data = vec![u32::MAX as u64]);
    assert_eq!(t.data, TensorData::Uint32(vec![u32::MAX]));
    let t = proto(13, vec![1], &|p| p.uint64_data = vec![u64::MAX]);
    assert_eq!(t.data, TensorData::Uint64(vec![u64::MAX]));
    let t = proto(7, vec![2, 1], &|p| p.int64_data = vec![i64::MIN, 3]);
    assert_eq!(
        (t.shape.clone(), t.data),
        (vec![2, 1], TensorData::Int64(vec![i64::MIN, 3]))
    );
    let t = proto(1, vec![], &|p| p.float_data = vec![-0.0]);
    assert!(t.data.same_bits(&TensorData::Float32(vec![-0.0])));
    let t = proto(14, vec![1], &|p| p.float_data = vec![0.0, 2.0]);
    assert_eq!(
        t.data,
        TensorData::Complex64(vec![Complex32::new(0.0, 2.0)])
    );
    let t = proto(15, vec![1], &|p| p.double_data = vec![3.0, 0.0]);
    assert_eq!(
        t.data,
        TensorData::Complex128(vec![Complex64::new(3.0, 0.0)])
    );
    let t = proto(11, vec![1], &|p| p.double_data = vec![f64::INFINITY]);
    assert_eq!(t.data, TensorData::Float64(vec![f64::INFINITY]));
    let t = proto(8, vec![2], &|p| {
        p.string_data = vec![b"".to_vec(), b"\0".to_vec()]
    });
    assert_eq!(t.data, TensorData::String(vec!["".into(), "\0".into()]));
    // Wrong element count is an error, not a panic.
    let mut p = TensorProto {
        data_type: Some(1),
        dims: vec![3],
        ..Default::default()
    };
    p.float_data = vec![1.0];
    assert!(Tensor::from_proto(&p).is_err());
}

#[test]
fn raw_data_is_little_endian() {
    let p = Tensor::new(vec![2], TensorData::Uint16(vec![0x0102, 0xA0B0])).to_proto("x");
    assert_eq!(p.raw_data.as_deref(), Some(&[0x02, 0x01, 0xB0, 0xA0][..]));
    let p = Tensor::new(
        vec![1],
        TensorData::Complex64(vec![Complex32::new(1.0, -0.0)]),
    )
    .to_proto("x");
    assert_eq!(
        p.raw_data.unwrap(),
        [1.0f32.to_le_bytes(), (-0.0f32).to_le_bytes()].concat()
    );
    let p = Tensor::new(vec![1], TensorData::String(vec!["ab".into()])).to_proto("s");
    assert_eq!((p.raw_data, p.string_data), (None, vec![b"ab".to_vec()]));
}

#[test]
fn backend_example_case_dir_round_trips() {
    let dir = tmp("example");
    let case = bundled::nonzero_example();
    case.write(&dir).unwrap();
    assert!(dir.join("model.onnx").is_file() && dir.join("test_data_set_0/input_0.pb").is_file());
    let back = TestCase::read(&dir).unwrap();
    assert_eq!(back, case);
    let set = &back.data_sets[0];
    assert_eq!(set.inputs[0].0, "x");
    assert_eq!(set.outputs[0].0, "y");
    assert_eq!(
        set.outputs[0].1,
        Tensor::new(vec![2, 3], TensorData::Int64(vec![0, 1, 1, 0, 0, 1]))
    );
    let m = &back.model;
    assert_eq!(m.opset_import[0].version, Some(9));
    let g = m.graph.as_ref().unwrap();
    assert_eq!(g.node[0].op_type(), "NonZero");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn models_have_the_declared_structure() {
    let m = nonzero_model(DataType::Float32, &[Dim::from("N"), Dim::from(3usize)], 13);
    assert_eq!(m.ir_version, Some(8));
    let out = &m.graph.as_ref().unwrap().output[0];
    let dbg = format!("{out:?}");
    assert!(
        dbg.contains("DimValue(2)") && dbg.contains("DimParam(\"nnz\")"),
        "{dbg}"
    );
    let ms = masked_select_model(DataType::Float32, &[Dim::from(3usize)], 11);
    let ops: Vec<&str> = ms
        .graph
        .as_ref()
        .unwrap()
        .node
        .iter()
        .map(|n| n.op_type())
        .collect();
    assert_eq!(ops, ["NonZero", "Transpose", "GatherND"]);
    let tf9 = threshold_filter_model(9);
    let squeeze9 = &tf9.graph.as_ref().unwrap().node[2];
    assert_eq!((squeeze9.input.len(), squeeze9.attribute.len()), (1, 1));
    let tf13 = threshold_filter_model(13);
    let squeeze13 = &tf13.graph.as_ref().unwrap().node[2];
    assert_eq!((squeeze13.input.len(), squeeze13.attribute.len()), (2, 0));
}

#[test]
fn bundled_expected_outputs() {
    for (name, case) in bundled::bundled_models() {
        let set = &case.data_sets[0];
        if name.starts_with("nonzero_") {
            assert_eq!(
                set.outputs[0].1,
                set.inputs[0].1.nonzero_reference(),
                "{name}"
            );
        }
    }
    let float = bundled::bundled_models()
        .into_iter()
        .find(|(n, _)| *n == "nonzero_opset13_float")
        .unwrap()
        .1;
    // [[0, -0, 1.5, NaN], [0, inf, -2, 0], [denormal, 0, -0, 3.25]]
    let want = Tensor::new(
        vec![2, 6],
        TensorData::Int64(vec![0, 0, 1, 1, 2, 2, 2, 3, 1, 2, 0, 3]),
    );
    assert_eq!(float.data_sets[0].outputs[0].1, want);
    let tf = bundled::threshold_filter(9, 9);
    let set = &tf.data_sets[0];
    let TensorData::Float32(scores) = &set.inputs[0].1.data else {
        panic!()
    };
    let TensorData::Int64(idx) = &set.outputs[0].1.data else {
        panic!()
    };
    let want: Vec<i64> = scores
        .iter()
        .enumerate()
        .filter(|(_, &s)| s > 0.5)
        .map(|(i, _)| i as i64)
        .collect();
    assert_eq!(idx, &want);
}

#[test]
fn pack_subset_with_hand_checked_values() {
    let dir = tmp("pack");
    let summary = write_pack(&dir, false, |s| {
        s.name.starts_with("bool_op9_scalar")
            || s.name.contains("specials")
            || s.name.contains("bitpatterns")
            || s.name.ends_with("_2x0x3_d50")
    })
    .unwrap();
    assert!(summary.entries.len() > 20, "{}", summary.entries.len());
    let manifest = std::fs::read_to_string(dir.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("\"name\": \"float_op13_specials\""),
        "{manifest}"
    );

    let output = |name: &str| {
        TestCase::read(&dir.join(name)).unwrap().data_sets[0].outputs[0]
            .1
            .clone()
    };
    // Scalars: [0, nnz].
    assert_eq!(
        output("bool_op9_scalar_d0"),
        Tensor::new(vec![0, 0], TensorData::Int64(vec![]))
    );
    assert_eq!(
        output("bool_op9_scalar_d100"),
        Tensor::new(vec![0, 1], TensorData::Int64(vec![]))
    );
    // Zero-size dimension: [rank, 0].
    assert_eq!(
        output("int32_op13_2x0x3_d50"),
        Tensor::new(vec![3, 0], TensorData::Int64(vec![]))
    );
    // 0, -0, NaN, -NaN, inf, -inf, denormal, -denormal, min normal, 1, -0, 0.
    let f = Tensor::new(vec![1, 8], TensorData::Int64(vec![2, 3, 4, 5, 6, 7, 8, 9]));
    assert_eq!(output("float_op9_specials"), f);
    assert_eq!(output("double_op13_specials"), f);
    // 0x0000, 0x8000 zero; 0x0001, 0x8001, 0x7C00, 0xFC00, 0x7E00, 0x3C00, 0x03FF non-zero; 0x8000 zero.
    let h = Tensor::new(vec![1, 7], TensorData::Int64(vec![2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(output("float16_op9_bitpatterns"), h);
    assert_eq!(output("bfloat16_op13_bitpatterns"), h);
    assert!(!dir.join("bfloat16_op9_bitpatterns").exists());
    // Complex: zero only when both parts are.
    assert_eq!(
        output("complex64_op13_specials"),
        Tensor::new(vec![1, 5], TensorData::Int64(vec![2, 3, 4, 5, 6]))
    );
    // Strings "", " ", "\0", "a", "", "0", "false", "": the empty string is the only zero.
    assert_eq!(
        output("string_op13_specials"),
        Tensor::new(vec![1, 5], TensorData::Int64(vec![1, 2, 3, 5, 6]))
    );
    // Same as [2, 4]: (0,1) (0,2) (0,3) (1,1) (1,2).
    assert_eq!(
        output("string_op13_specials_2d"),
        Tensor::new(
            vec![2, 5],
            TensorData::Int64(vec![0, 0, 0, 1, 1, 1, 2, 3, 1, 2])
        )
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn pack_covers_what_it_promises() {
    let specs = case_specs(false);
    for t in DataType::ALL {
        let opsets: Vec<i64> = specs
            .iter()
            .filter(|s| s.dtype == t)
            .map(|s| s.opset)
            .collect();
        assert!(opsets.contains(&13), "{t}");
        assert_eq!(opsets.contains(&9), t != DataType::Bfloat16, "{t}");
    }
    for rank in 0..=8 {
        assert!(specs.iter().any(|s| s.shape.len() == rank), "rank {rank}");
    }
    assert!(specs.iter().any(|s| s.numel() >= 2_000_000));
    let mut names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    names.sort();
    let n = names.len();
    names.dedup();
    assert_eq!(names.len(), n, "case names are unique");
    // Deterministic.
    let a = specs
        .iter()
        .find(|s| s.name == "uint16_op9_3x4_d50")
        .unwrap();
    assert_eq!(a.input(), a.input());
    assert!(case_specs(true).len() > specs.len());
}
