//! op-core keeps its own table of ONNX type codes (`DataType::onnx_code`), so that it needs no
//! protobuf crate; this checks that table against the codes prost compiled from `onnx.proto`.

use nonzero_core::DataType;
use nonzero_proto::onnx::tensor_proto::DataType as ProtoDataType;

#[test]
fn every_op_core_code_is_the_proto_code_of_the_same_type() {
    for dtype in DataType::ALL {
        let code = dtype.onnx_code();
        let proto = ProtoDataType::try_from(code)
            .unwrap_or_else(|_| panic!("{dtype}: code {code} is not in onnx.proto"));
        // onnx.proto spells the types as op-core does, in capitals (FLOAT, DOUBLE, BFLOAT16).
        assert_eq!(
            proto.as_str_name(),
            dtype.onnx_name().to_uppercase(),
            "code {code}"
        );
    }
}

#[test]
fn every_proto_type_op_core_lacks_is_not_a_nonzero_type() {
    let mut known = Vec::new();
    for code in 0..=64 {
        let Ok(proto) = ProtoDataType::try_from(code) else {
            continue;
        };
        match DataType::from_onnx_code(code) {
            Some(dtype) => {
                assert_eq!(dtype.onnx_code(), code);
                known.push(dtype);
            }
            // UNDEFINED and the types NonZero-13's T leaves out (float8, int4, ...).
            None => assert!(
                proto == ProtoDataType::Undefined || code > 16,
                "{} ({code}) is missing from op-core's table",
                proto.as_str_name()
            ),
        }
    }
    assert_eq!(known.len(), DataType::ALL.len());
}
