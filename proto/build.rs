//! Compiles the vendored `onnx.proto` with protox (a pure-Rust protobuf compiler, so no `protoc`
//! binary is needed) and generates Rust types with prost-build.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=onnx.proto");
    let fds = protox::compile(["onnx.proto"], ["."])?;
    prost_build::Config::new().compile_fds(fds)?;
    Ok(())
}
