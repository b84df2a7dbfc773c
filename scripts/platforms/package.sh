#!/usr/bin/env bash
# Sourced by scripts/package (which sets ROOT, version, PATH with .venv-build, CARGO_TARGET_DIR):
# the Linux aarch64 and Windows x86_64 artifacts, cross-built here without Docker, CPU-only
# (--no-default-features): neither qemu-user nor Wine can run the wgpu path, and nothing ships
# that has not run (docs/platforms.md). The GPU option falls back to the CPU with its warning.
#   nonzero_ort-<v>-cp38-abi3-manylinux_2_28_aarch64.whl   maturin --zig, glibc 2.28
#   libnonzero_ort-<v>-linux-aarch64.tar.gz                 the wheel build's plain cdylib
#   nonzero_ort-<v>-cp38-abi3-win_amd64.whl                 mingw-w64, runtime linked statically
#   libnonzero_ort-<v>-windows-x86_64.zip                   nonzero_ort.dll
. "$ROOT/scripts/platforms/setup.sh"

# The dynamic symbols a shipped library may export: the ONNX Runtime entry point and the
# package's C ABI (python/src/optimize.rs). Anything else is a leak (e.g. a static runtime's).
exports_are_only_ours() { # exports_are_only_ours FILE: ELF (aarch64) or PE (x86_64) exports
  local names bad
  case "$1" in
  *.so) names=$(aarch64-linux-gnu-nm -D --defined-only "$1" | awk '{print $3}') ;;
  *) names=$(x86_64-w64-mingw32-objdump -p "$1" |
    sed -n '/^\[Ordinal\/Name Pointer\] Table/,/^$/p' | sed -n 's/^\s*\[ *[0-9]*\] //p') ;;
  esac
  if ! grep -qx RegisterCustomOps <<<"$names"; then
    echo "$1 does not export RegisterCustomOps" >&2
    return 1
  fi
  bad=$(grep -vxE 'RegisterCustomOps|nonzero_ort_[a-z_]+' <<<"$names" || true)
  if [ -n "$bad" ]; then
    echo "$1 exports more than RegisterCustomOps and nonzero_ort_*:" $bad >&2
    return 1
  fi
  echo "$(basename "$1") exports:" $names
}

# A Windows DLL may import only what Windows has: no mingw runtime, no python3.dll.
imports_are_windows_only() { # imports_are_windows_only FILE
  local dlls bad
  dlls=$(x86_64-w64-mingw32-objdump -p "$1" | sed -n 's/^\s*DLL Name: //p')
  bad=$(grep -iE 'libgcc|libwinpthread|libstdc|python' <<<"$dlls" || true)
  if [ -n "$bad" ]; then
    echo "$1 imports DLLs Windows does not have:" $bad >&2
    return 1
  fi
  echo "$(basename "$1") imports:" $dlls
}

package_aarch64() {
  local triple=aarch64-unknown-linux-gnu name=libnonzero_ort-$version-linux-aarch64 stage
  echo "=== aarch64 wheel (maturin --zig, manylinux_${GLIBC/./_}, CPU-only)"
  maturin build --release --zig --target $triple --compatibility "manylinux_${GLIBC/./_}" --strip \
    --no-default-features -m python/Cargo.toml -o dist
  echo "=== $name.tar.gz"
  stage=$ROOT/build/package/$name
  rm -rf "$stage"
  mkdir -p "$stage"
  # Left by the wheel's build (same zig linker, glibc 2.28, same features), as for x86_64.
  cp "$CARGO_TARGET_DIR/$triple/release/deps/libnonzero_ort.so" "$stage/"
  aarch64-linux-gnu-strip --strip-all "$stage/libnonzero_ort.so"
  exports_are_only_ours "$stage/libnonzero_ort.so"
  glibc_at_most "$stage/libnonzero_ort.so" aarch64-linux-gnu-objdump
  cp README.md LICENSE-MIT LICENSE-APACHE "$stage/"
  (cd "$stage" && sha256sum libnonzero_ort.so >SHA256SUMS)
  tar -C "$ROOT/build/package" --owner=0 --group=0 --sort=name -czf "dist/$name.tar.gz" "$name"
  auditwheel show dist/nonzero_ort-*-manylinux_*_aarch64.whl
}

glibc_at_most() { # glibc_at_most FILE OBJDUMP: the newest GLIBC_ symbol version is <= $GLIBC
  local newest
  newest=$("$2" -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -n 1)
  if [ "$(printf '%s\n%s\n' "GLIBC_$GLIBC" "$newest" | sort -V | tail -n 1)" != "GLIBC_$GLIBC" ]; then
    echo "$1 needs $newest, newer than glibc $GLIBC" >&2
    return 1
  fi
  echo "$(basename "$1") needs $newest at most"
}

package_windows() {
  local triple=x86_64-pc-windows-gnu name=libnonzero_ort-$version-windows-x86_64 stage wheel_dir
  echo "=== win_amd64 wheel (mingw-w64, CPU-only)"
  maturin build --release --target $triple --strip --no-default-features \
    -m python/Cargo.toml -o dist
  # The wheel's module is a plain DLL (no PyInit, no python3.dll import), so
  # get_library_path() hands ONNX Runtime a library that a host without Python loads too.
  wheel_dir=$ROOT/build/package/wheel-win_amd64
  rm -rf "$wheel_dir"
  mkdir -p "$wheel_dir"
  (cd "$wheel_dir" && python -m zipfile -e "$(ls "$ROOT"/dist/nonzero_ort-*-win_amd64.whl)" .)
  exports_are_only_ours "$wheel_dir/nonzero_ort/_nonzero_ort.pyd"
  imports_are_windows_only "$wheel_dir/nonzero_ort/_nonzero_ort.pyd"
  echo "=== $name.zip"
  stage=$ROOT/build/package/$name
  rm -rf "$stage"
  mkdir -p "$stage"
  cp "$CARGO_TARGET_DIR/$triple/release/deps/nonzero_ort.dll" "$stage/"
  x86_64-w64-mingw32-strip --strip-all "$stage/nonzero_ort.dll"
  exports_are_only_ours "$stage/nonzero_ort.dll"
  imports_are_windows_only "$stage/nonzero_ort.dll"
  cp README.md LICENSE-MIT LICENSE-APACHE "$stage/"
  (cd "$stage" && sha256sum nonzero_ort.dll >SHA256SUMS)
  rm -f "dist/$name.zip"
  (cd "$ROOT/build/package" && TZ=UTC find "$name" -exec touch -d 1980-01-02 {} + &&
    python -m zipfile -c "$ROOT/dist/$name.zip" "$name")
}

package_platforms() {
  platforms_setup
  package_aarch64
  package_windows
}
