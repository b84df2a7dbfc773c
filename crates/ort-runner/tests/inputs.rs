//! Invented inputs for bare models: integer inputs that index a table stay within it (issue 36).
//! No ONNX Runtime needed.

use nonzero_core::DataType;
use nonzero_harness::model::{attr_int, model, node, tensor_info, Dim};
use nonzero_harness::TensorData;
use nonzero_ort_runner::{index_bounds, random_inputs};
use nonzero_proto::onnx::{GraphProto, TensorProto};
use std::collections::HashMap;

fn table(name: &str, dims: &[i64]) -> TensorProto {
    TensorProto {
        name: Some(name.to_string()),
        dims: dims.to_vec(),
        data_type: Some(DataType::Float32.onnx_code()),
        float_data: vec![0.0; dims.iter().product::<i64>() as usize],
        ..Default::default()
    }
}

/// ids -> Unsqueeze -> Cast -> Gather(embed [7, 3]); pos -> GatherElements(axis=-1) of a
/// [2, 5] table and Gather(axis=1) of a [4, 9] one (the smaller wins); data indexes nothing
/// (it is a gather's table, not its indices); mask is bool.
fn graph() -> GraphProto {
    let d = [Dim::from("n")];
    GraphProto {
        name: Some("g".into()),
        node: vec![
            node("Unsqueeze", &["ids", "axes"], &["u"], vec![]),
            node("Cast", &["u"], &["c"], vec![attr_int("to", 7)]),
            node("Gather", &["embed", "c"], &["e"], vec![]),
            node(
                "GatherElements",
                &["t25", "pos"],
                &["g1"],
                vec![attr_int("axis", -1)],
            ),
            node(
                "Gather",
                &["t49", "pos"],
                &["g2"],
                vec![attr_int("axis", 1)],
            ),
            node("Gather", &["data", "ids"], &["g3"], vec![]),
        ],
        initializer: vec![
            table("embed", &[7, 3]),
            table("t25", &[2, 5]),
            table("t49", &[4, 9]),
            TensorProto {
                name: Some("axes".into()),
                dims: vec![1],
                data_type: Some(DataType::Int64.onnx_code()),
                int64_data: vec![0],
                ..Default::default()
            },
        ],
        input: vec![
            tensor_info("ids", DataType::Int64, &d),
            tensor_info(
                "pos",
                DataType::Int32,
                &[Dim::from(2usize), Dim::from(3usize)],
            ),
            tensor_info("data", DataType::Float32, &d),
            tensor_info("mask", DataType::Bool, &d),
        ],
        output: vec![tensor_info("e", DataType::Float32, &[])],
        ..Default::default()
    }
}

#[test]
fn inputs_that_index_a_table_are_found_through_casts_and_reshapes() {
    let bounds = index_bounds(&graph());
    let want: HashMap<String, u64> = [("ids".to_string(), 7), ("pos".to_string(), 5)].into();
    assert_eq!(bounds, want);
}

#[test]
fn invented_indices_stay_within_the_table() {
    let m = model(graph(), 17);
    let inputs = random_inputs(&m, 64, 0x5eed).unwrap();
    let get = |name: &str| &inputs.iter().find(|(n, _)| n == name).unwrap().1.data;
    let TensorData::Int64(ids) = get("ids") else {
        panic!("ids is int64")
    };
    assert_eq!(ids.len(), 64);
    assert!(ids.iter().all(|&v| (0..7).contains(&v)), "{ids:?}");
    assert!(
        ids.iter().collect::<std::collections::HashSet<_>>().len() > 3,
        "{ids:?}"
    );
    let TensorData::Int32(pos) = get("pos") else {
        panic!("pos is int32")
    };
    assert_eq!(pos.len(), 6);
    assert!(pos.iter().all(|&v| (0..5).contains(&v)), "{pos:?}");
}
