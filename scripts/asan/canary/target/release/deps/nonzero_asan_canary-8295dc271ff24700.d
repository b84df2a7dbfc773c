/work/wt-ray/scripts/asan/canary/target/release/deps/nonzero_asan_canary-8295dc271ff24700.d: src/lib.rs Cargo.toml

/work/wt-ray/scripts/asan/canary/target/release/deps/libnonzero_asan_canary-8295dc271ff24700.rmeta: src/lib.rs Cargo.toml

src/lib.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
