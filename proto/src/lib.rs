//! ONNX protobuf types compiled with prost (protox, no protoc download)
