//! The padding a masked ReduceMin or ReduceMax reads (emit-static's reductions.rs): the type's
//! extreme, or, where every reader casts the result to bool (dynamo's `x[m].all()` and
//! `.any()`), a small integer that QNN HTP holds exactly (it mangles int64's extremes).
//! Values on ONNX Runtime, OpenVINO, IREE: the static stage's masked_all and masked_any exports;
//! on QNN HTP: tests/deploy.

use super::*;
use crate::optimize_with;
use nonzero_proto::onnx::tensor_proto::DataType;
use nonzero_proto::onnx::{GraphProto, ModelProto};
use nonzero_proto::Message;

/// `x[m]` reduced over its rows by `op` into `r`, then `tail`; `outputs` are the graph's.
fn reduced(op: &str, elem: DataType, tail: Vec<NodeProto>, outputs: &[&str]) -> ModelProto {
    let mut nodes = vec![
        node("NonZero", &["m"], &["nz"], vec![]),
        node("Transpose", &["nz"], &["t"], vec![ints("perm", &[1, 0])]),
        node("GatherND", &["x", "t"], &["xs"], vec![]),
        node(op, &["xs"], &["r"], vec![int("keepdims", 0)]),
    ];
    nodes.extend(tail);
    let inputs = vec![
        value("x", elem, Some(&["5", "3"])),
        value("m", DataType::Bool, Some(&["5"])),
    ];
    let options = static_options(&[]);
    let bytes = model(graph(nodes, inputs, outputs, vec![]), 17);
    let (out, report) = optimize_with(&bytes, &options).expect("static");
    assert_eq!(report.nonzero_left(), 0);
    ModelProto::decode(out.as_slice()).expect("re-parse")
}

fn producer<'g>(g: &'g GraphProto, name: &str) -> Option<&'g NodeProto> {
    g.node
        .iter()
        .find(|n| n.output.first().map(String::as_str) == Some(name))
}

/// An integer scalar's value, from its raw bytes (the static forms write them raw).
fn int_scalar(t: &TensorProto) -> i64 {
    let raw = t.raw_data.as_deref().expect("raw data");
    match DataType::try_from(t.data_type.unwrap()).unwrap() {
        DataType::Int8 => i64::from(raw[0] as i8),
        DataType::Uint32 => i64::from(u32::from_le_bytes(raw.try_into().unwrap())),
        DataType::Int32 => i64::from(i32::from_le_bytes(raw.try_into().unwrap())),
        DataType::Int64 => i64::from_le_bytes(raw.try_into().unwrap()),
        other => panic!("{other:?}"),
    }
}

/// The value of the scalar initializer `name` is, through Casts.
fn scalar_behind<'g>(g: &'g GraphProto, mut name: &'g str) -> Option<i64> {
    loop {
        if let Some(t) = g
            .initializer
            .iter()
            .find(|t| t.name.as_deref() == Some(name))
        {
            return t.dims.is_empty().then(|| int_scalar(t));
        }
        match producer(g, name) {
            Some(cast) if cast.op_type.as_deref() == Some("Cast") => name = &cast.input[0],
            _ => return None,
        }
    }
}

/// The scalar the padding reads as: the one scalar among the inputs of the Where whose result
/// the reduction reads (through Casts: a narrow integer is selected as int32).
fn padding_value(m: &ModelProto, op: &str) -> i64 {
    let g = m.graph.as_ref().unwrap();
    let reduce = g
        .node
        .iter()
        .find(|n| n.op_type.as_deref() == Some(op))
        .unwrap();
    let mut masking = producer(g, &reduce.input[0]).expect("the reduction reads a masked input");
    while masking.op_type.as_deref() == Some("Cast") {
        masking = producer(g, &masking.input[0]).expect("a Cast of the masked input");
    }
    assert_eq!(masking.op_type.as_deref(), Some("Where"));
    let values: Vec<i64> = masking
        .input
        .iter()
        .filter_map(|i| scalar_behind(g, i))
        .collect();
    assert_eq!(values.len(), 1, "{masking:?}");
    values[0]
}

fn cast_to_bool() -> Vec<NodeProto> {
    vec![node(
        "Cast",
        &["r"],
        &["y"],
        vec![int("to", DataType::Bool as i64)],
    )]
}

#[test]
fn a_reduction_read_as_a_truth_value_pads_with_a_small_integer() {
    let all = reduced("ReduceMin", DataType::Int64, cast_to_bool(), &["y"]);
    assert_eq!(padding_value(&all, "ReduceMin"), 1);
    let any = reduced("ReduceMax", DataType::Int64, cast_to_bool(), &["y"]);
    assert_eq!(padding_value(&any, "ReduceMax"), -1);
    let int8_min = reduced("ReduceMin", DataType::Int8, cast_to_bool(), &["y"]);
    assert_eq!(padding_value(&int8_min, "ReduceMin"), 1);
    // Unsigned: the lowest is already small.
    let unsigned_max = reduced("ReduceMax", DataType::Uint32, cast_to_bool(), &["y"]);
    assert_eq!(padding_value(&unsigned_max, "ReduceMax"), 0);
}

#[test]
fn a_reduction_whose_value_is_read_pads_with_the_extreme() {
    // The result itself is an output, or also read by an Add: the extremes (an empty
    // selection's min is the type's highest value, as ONNX Runtime gives it).
    let output = reduced("ReduceMin", DataType::Int64, cast_to_bool(), &["y", "r"]);
    assert_eq!(padding_value(&output, "ReduceMin"), i64::MAX);
    let mut tail = cast_to_bool();
    tail.push(node("Add", &["r", "r"], &["s"], vec![]));
    let also_added = reduced("ReduceMax", DataType::Int64, tail, &["y", "s"]);
    assert_eq!(padding_value(&also_added, "ReduceMax"), i64::MIN);
    let to_float = vec![node(
        "Cast",
        &["r"],
        &["y"],
        vec![int("to", DataType::Float as i64)],
    )];
    let cast_elsewhere = reduced("ReduceMin", DataType::Int32, to_float, &["y"]);
    assert_eq!(
        padding_value(&cast_elsewhere, "ReduceMin"),
        i64::from(i32::MAX)
    );
}
