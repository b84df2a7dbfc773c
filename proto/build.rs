//! Compiles the vendored `onnx.proto` with protox (a pure-Rust protobuf compiler, so no `protoc`
//! binary is needed) and generates Rust types with prost-build.
//!
//! `TensorProto.raw_data` is generated as `bytes::Bytes` (re-exported as `prost::bytes`): a
//! model decoded from a `Bytes` buffer then shares its weights with that buffer instead of
//! copying them, which keeps `nonzero optimize` at about twice the file in memory.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=onnx.proto");
    let fds = protox::compile(["onnx.proto"], ["."])?;
    prost_build::Config::new()
        .bytes([".onnx.TensorProto.raw_data"])
        .compile_fds(fds)?;
    Ok(())
}
