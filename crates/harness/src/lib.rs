//! Model and conformance-pack generation, ONNX test-data IO, ONNX Runtime driving
