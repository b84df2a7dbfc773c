//! ONNX protobuf types (`ModelProto`, `GraphProto`, `TensorProto`, ...) compiled with prost.
//!
//! The types are generated at build time from `proto/onnx.proto`, vendored unchanged from the
//! `onnx` 1.23.2 wheel (Apache-2.0, see `proto/LICENSE-onnx`), by protox (pure Rust, no `protoc`)
//! and prost-build. Encode and decode with [`prost::Message`], re-exported here.

pub use prost;
pub use prost::bytes::Bytes;
pub use prost::Message;

/// The `onnx` protobuf package.
#[allow(
    missing_docs,
    missing_debug_implementations,
    clippy::all,
    clippy::pedantic,
    clippy::doc_lazy_continuation,
    clippy::doc_overindented_list_items,
    clippy::large_enum_variant,
    rustdoc::all
)]
pub mod onnx {
    include!(concat!(env!("OUT_DIR"), "/onnx.rs"));
}

#[cfg(test)]
mod tests {
    use super::onnx::{tensor_proto::DataType, TensorProto};
    use super::Message;

    #[test]
    fn tensor_proto_round_trips() {
        let t = TensorProto {
            dims: vec![2, 3],
            data_type: Some(DataType::Float as i32),
            name: Some("x".into()),
            raw_data: Some(vec![0; 24].into()),
            ..Default::default()
        };
        let bytes = t.encode_to_vec();
        assert_eq!(TensorProto::decode(bytes.as_slice()).unwrap(), t);
    }
}
