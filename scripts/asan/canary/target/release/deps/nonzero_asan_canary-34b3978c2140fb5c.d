/work/wt-ray/scripts/asan/canary/target/release/deps/nonzero_asan_canary-34b3978c2140fb5c.d: src/lib.rs Cargo.toml

/work/wt-ray/scripts/asan/canary/target/release/deps/libnonzero_asan_canary-34b3978c2140fb5c.rmeta: src/lib.rs Cargo.toml

src/lib.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
