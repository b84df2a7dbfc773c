#!/usr/bin/env bash
# Sourced by scripts/test: the `platforms` stage and CI's quick subset `platforms-quick`. Both test
# the cross-built files in dist/ (scripts/package makes them when missing), each on its platform's
# own ONNX Runtime library, run by the cross-built `nonzero` runner:
#   Linux aarch64 under qemu-user, Windows x86_64 under Wine, next to Linux x86_64 natively.
# ONNX Runtime's library comes from that release's PyPI wheel for the platform; 1.17.3's wheels
# link it into their Python module instead, so that release's plain library comes from npm's
# onnxruntime-node, Microsoft's build of the same release (see docs/platforms.md). The stage also
# runs the aarch64 wheel's Python tests on an aarch64 CPython (python.sh): on 1.31.1 in
# `platforms` (CI's), and on 1.17.3's own aarch64 wheel too in `platforms_full`.
# Cached between runs (links into scripts/cache.sh's cache): ONNX Runtime under build/platforms/ort,
# the Wine prefix, the aarch64 sysroot, cross builds under target/.
PF_AARCH64=aarch64-unknown-linux-gnu
PF_WINDOWS=x86_64-pc-windows-gnu
PF_WINE=/usr/lib/wine/wine64

pf_rel() { echo "${1#"$ROOT"/}"; } # Wine's runner takes paths relative to the repo root

pf_ort_lib() { # pf_ort_lib PLATFORM VERSION -> ONNX Runtime's own library (fetched once)
  local platform=$1 version=$2 dir=$ROOT/build/platforms/ort/$1-$2 tag member npm_member wheel
  case $platform in
  linux-aarch64)
    tag=manylinux_2_28_aarch64 member=onnxruntime/capi/libonnxruntime.so.$version
    npm_member=package/bin/napi-v3/linux/arm64/libonnxruntime.so.$version
    ;;
  windows-x86_64)
    tag=win_amd64 member=onnxruntime/capi/onnxruntime.dll
    npm_member=package/bin/napi-v3/win32/x64/onnxruntime.dll
    ;;
  esac
  if [ ! -f "$dir/$(basename "$member")" ]; then
    rm -rf "$dir"
    mkdir -p "$dir/download"
    .venv/bin/python -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
      --platform "$tag" --python-version 3.11 --implementation cp --no-deps -d "$dir/download" \
      "onnxruntime==$version" >&2
    wheel=$(ls "$dir"/download/onnxruntime-*.whl)
    if unzip -l "$wheel" "$member" >/dev/null 2>&1; then
      unzip -oqj "$wheel" "$member" -d "$dir"
      echo "PyPI wheel $(basename "$wheel")" >"$dir/SOURCE"
    else
      # No plain library in this release's wheel: the same release's build from npm.
      (cd "$dir/download" && npm pack --silent "onnxruntime-node@$version" >/dev/null)
      tar -xzf "$dir"/download/onnxruntime-node-*.tgz -C "$dir/download" "$npm_member"
      mv "$dir/download/$npm_member" "$dir/"
      echo "npm onnxruntime-node-$version.tgz (its PyPI wheel has no plain library)" >"$dir/SOURCE"
    fi
    rm -rf "$dir/download"
  fi
  echo "$dir/$(basename "$member")"
}

pf_runners() { # the test runner for both targets (not shipped: Debian's linkers are fine here)
  step "cross-built runner: cargo build --release --target {$PF_AARCH64,$PF_WINDOWS} -p nonzero-cli"
  cargo build --release --target $PF_AARCH64 -p nonzero-cli
  cargo build --release --target $PF_WINDOWS -p nonzero-cli
  # Wine 8.0 lacks bcryptprimitives.dll (Rust's std imports ProcessPrng from it): a test-only shim
  # beside the .exe, where Windows looks first for the .exe's and the libraries' imports.
  local win=$ROOT/build/platforms/win
  mkdir -p "$win"
  cp "target/$PF_WINDOWS/release/nonzero.exe" "$win/"
  x86_64-w64-mingw32-gcc -O2 -Wall -shared -s -o "$win/bcryptprimitives.dll" \
    tests/platforms/bcryptprimitives.c -ladvapi32
}

pf_unpack_dist() { # checksums, then each artifact's library under build/platforms/dist
  local out=$ROOT/build/platforms/dist
  step "dist/: SHA256SUMS, then each platform's tarball/zip and wheel"
  (cd dist && sha256sum -c --quiet SHA256SUMS)
  rm -rf "$out"
  mkdir -p "$out"/{aarch64-wheel,windows-wheel}
  tar -xzf dist/libnonzero_ort-*-linux-aarch64.tar.gz -C "$out"
  (cd "$out" && python3 -m zipfile -e "$ROOT"/dist/libnonzero_ort-*-windows-x86_64.zip .)
  (cd "$out"/libnonzero_ort-*-linux-aarch64 && sha256sum -c --quiet SHA256SUMS)
  (cd "$out"/libnonzero_ort-*-windows-x86_64 && sha256sum -c --quiet SHA256SUMS)
  python3 -m zipfile -e "$(ls dist/nonzero_ort-*_aarch64.whl)" "$out/aarch64-wheel"
  python3 -m zipfile -e "$(ls dist/nonzero_ort-*-win_amd64.whl)" "$out/windows-wheel"
  PF_LIBS=(
    "linux-aarch64 tarball $(ls "$out"/libnonzero_ort-*-linux-aarch64/libnonzero_ort.so)"
    "linux-aarch64 wheel $(pf_wheel_library "$out/aarch64-wheel")"
    "windows-x86_64 zip $(ls "$out"/libnonzero_ort-*-windows-x86_64/nonzero_ort.dll)"
    "windows-x86_64 wheel $(pf_wheel_library "$out/windows-wheel")"
  )
  local entry
  for entry in "${PF_LIBS[@]}"; do
    exports_are_only_ours "${entry##* }"
    case $entry in windows*) imports_are_windows_only "${entry##* }" ;; esac
  done
}

pf_wheel_library() { # the library the unpacked wheel's own get_library_path() returns
  python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import nonzero_ort; print(nonzero_ort.get_library_path())' "$1"
}

pf_runner() { # pf_runner PLATFORM: the command line that runs the cross-built runner there
  case $1 in
  linux-aarch64) echo "qemu-aarch64 -L /usr/aarch64-linux-gnu target/$PF_AARCH64/release/nonzero" ;;
  windows-x86_64) echo "$PF_WINE build/platforms/win/nonzero.exe" ;;
  linux-x86_64) echo "target/release/nonzero" ;;
  esac
}

pf_how() {
  case $1 in linux-aarch64) echo qemu-user ;; windows-x86_64) echo Wine ;; *) echo native ;; esac
}

pf_counts() { # pf_counts OUTPUT: "matched total" from the runner's summary, failing on any failure
  local summary
  summary=$(grep -E '^[0-9]+ models: [0-9]+ matched, [0-9]+ failed, [0-9]+ other$' <<<"$1" | tail -n 1)
  [ -n "$summary" ] || return 1
  set -- $summary # N models: M matched, F failed, O other
  [ "$5" = 0 ] || return 1
  echo "$3 $1"
}

pf_run() { # pf_run PLATFORM VERSION LABEL LIBRARY: models + conformance pack, exact, one row
  local platform=$1 version=$2 label=$3 lib=$4 ort runner out models pack
  if [ "$platform" = linux-x86_64 ]; then
    ort=$ORT_DYLIB_PATH
  else
    ort=$(pf_ort_lib "$platform" "$version")
  fi
  runner=$(pf_runner "$platform")
  step "$platform, ONNX Runtime $version ($(pf_how "$platform")), $label library: models + pack"
  local t0=$SECONDS
  if ! out=$($runner run --quiet --library "$(pf_rel "$lib")" --ort-dylib "$(pf_rel "$ort")" models 2>&1) ||
    ! models=$(pf_counts "$out"); then
    echo "$out" | grep -v '^MATCH' >&2
    echo "FAILED: bundled models on $platform, ONNX Runtime $version, $label library" >&2
    return 1
  fi
  if ! out=$($runner run --quiet --library "$(pf_rel "$lib")" --ort-dylib "$(pf_rel "$ort")" build/conformance 2>&1) ||
    ! pack=$(pf_counts "$out"); then
    echo "$out" | grep -Ev '^(MATCH|SKIPPED)' >&2
    echo "FAILED: conformance pack on $platform, ONNX Runtime $version, $label library" >&2
    return 1
  fi
  if [ "${models% *}" != "${models#* }" ]; then
    echo "FAILED: $platform matched ${models% *} of ${models#* } bundled models" >&2
    return 1
  fi
  # Exactly the cases that match natively: the same skips (complex, NUL strings), no others.
  if [ -n "${PF_NATIVE_PACK:-}" ] && [ "${pack% *}" != "$PF_NATIVE_PACK" ]; then
    echo "FAILED: $platform matched ${pack% *} pack cases, Linux x86_64 $PF_NATIVE_PACK" >&2
    return 1
  fi
  echo "models ${models% *}/${models#* } exact, pack ${pack% *}/${pack#* } exact ($((SECONDS - t0)) s)"
  PF_ROWS+=("| $platform | $version | $(pf_how "$platform") | $label | ${pack% *} of ${pack#* } | ${models% *} of ${models#* } |")
  if [ "$platform" = linux-x86_64 ]; then
    PF_NATIVE_PACK=${pack% *}
  fi
}

pf_wine_prefix() { # a prefix of our own, made once, with no Mono/Gecko download prompts
  export WINEPREFIX=$ROOT/build/platforms/wine-prefix WINEDLLOVERRIDES="mscoree,mshtml=" WINEDEBUG=-all
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    step "Wine prefix (wineboot --init)"
    $PF_WINE wineboot --init >/dev/null 2>&1 || true
    # wineserver writes the registry files when it exits, a few seconds after wineboot returns.
    /usr/lib/wine/wineserver -w || true
    [ -f "$WINEPREFIX/system.reg" ] || { echo "wineboot made no prefix in $WINEPREFIX" >&2; return 1; }
  fi
}

pf_windows_panic() { # pf_windows_panic VERSION: an injected panic under Wine, then a healthy model
  local ort out rc=0 fault=$ROOT/target/fault-injection/$PF_WINDOWS/release/nonzero_ort.dll
  ort=$(pf_ort_lib windows-x86_64 "$1")
  step "Windows x86_64, ONNX Runtime $1: injected panic, then the library registered again in the same process"
  # Its own target dir (as tests/reliability's), so the shipped DLL's build is never replaced.
  cargo build --release --locked --target $PF_WINDOWS -p nonzero-ort --no-default-features \
    --features fault-injection --target-dir target/fault-injection
  out=$(NONZERO_ORT_INJECT_PANIC=nonzero_y $PF_WINE build/platforms/win/nonzero.exe run --quiet \
    --library "$(pf_rel "$fault")" --ort-dylib "$(pf_rel "$ort")" \
    models/nonzero_opset13_float models/masked_select_opset13 2>&1) || rc=$?
  echo "$out" | grep -E '^(ERROR|MATCH|[0-9]+ models)'
  # The panicking node's run fails with an error status (exit code 1, not a crash), and the next
  # model, in a new session that registers the library again, still matches.
  if [ "$rc" != 1 ] || ! grep -qE '^ERROR +nonzero_opset13_float: .*panic' <<<"$out" ||
    ! grep -qE '^MATCH +masked_select_opset13$' <<<"$out" ||
    ! grep -qx '2 models: 1 matched, 1 failed, 0 other' <<<"$out"; then
    echo "FAILED: injected panic under Wine, ONNX Runtime $1 (exit code $rc)" >&2
    return 1
  fi
}

pf_windows_load_unload() { # pf_windows_load_unload VERSION LIBRARY: issue 39's loop under Wine
  # 1,000 cycles, each new session options registering the DLL by path and one session running
  # one model (`nonzero run --load-unload`, crates/cli/src/load_unload.rs). The DLL pins itself
  # (GetModuleHandleExW PIN): it must be loaded after every cycle, and not before the first (so
  # the runner itself does not hold it), and the working set after the last cycle within 2 MB of
  # after the 100th. A DLL that did not pin itself was unloaded after every cycle (+1.8 MB).
  local ort out line growth
  ort=$(pf_ort_lib windows-x86_64 "$1")
  step "Windows x86_64, ONNX Runtime $1 (Wine): 1,000 load-unload cycles of the DLL"
  out=$($PF_WINE build/platforms/win/nonzero.exe run --quiet --library "$(pf_rel "$2")" \
    --ort-dylib "$(pf_rel "$ort")" --load-unload 1000 models/nonzero_opset13_float 2>&1) || true
  line=$(grep '^load-unload: ' <<<"$out" || true)
  echo "${line:-$out}"
  growth=$(sed -n 's/.* KiB after cycle 1000 (\([-+][0-9]*\) KiB).*/\1/p' <<<"$line")
  if ! grep -q '^load-unload: 1000 cycles x 1 models: 1000 matched, 0 failed; ' <<<"$line" ||
    ! grep -q 'library loaded before the first cycle: no; after every cycle: yes$' <<<"$line" ||
    [ -z "$growth" ] || [ "${growth#+}" -ge 2048 ]; then
    echo "FAILED: load-unload cycles under Wine, ONNX Runtime $1" >&2
    return 1
  fi
}

pf_package() { # scripts/package's cross-built half alone, keeping dist/'s other files
  step "dist/ lacks the aarch64 or Windows files: scripts/platforms/package.sh"
  . scripts/env.sh # the venv helper
  venv .venv-build requirements/build.txt
  mkdir -p dist
  rm -f dist/*aarch64* dist/*win_amd64* dist/*windows-x86_64* dist/SHA256SUMS
  (
    GLIBC=2.28 # as in scripts/package
    version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
    export PATH=$ROOT/.venv-build/bin:$PATH CARGO_TARGET_DIR=$ROOT/target
    . scripts/platforms/package.sh
    package_platforms
  )
  (cd dist && sha256sum -- * >SHA256SUMS.tmp && mv SHA256SUMS.tmp SHA256SUMS)
}

pf_prepare() {
  setup # scripts/test's: host runner, conformance pack, ORT_DYLIB_PATH
  . scripts/platforms/setup.sh
  platforms_setup
  # ONNX Runtime's libraries and the Wine prefix are kept between clones (scripts/cache.sh).
  cache_link build/platforms/ort build/platforms/wine-prefix
  if ! ls dist/nonzero_ort-*_aarch64.whl dist/nonzero_ort-*-win_amd64.whl \
    dist/libnonzero_ort-*-linux-aarch64.tar.gz dist/libnonzero_ort-*-windows-x86_64.zip \
    dist/SHA256SUMS >/dev/null 2>&1; then
    pf_package
  fi
  # exports_are_only_ours, imports_are_windows_only
  . scripts/platforms/package.sh
  pf_unpack_dist
  pf_runners
  pf_wine_prefix
  PF_ROWS=()
  PF_NATIVE_PACK=
  pf_run linux-x86_64 "$(.venv/bin/python -c 'import onnxruntime; print(onnxruntime.__version__)')" \
    "target/release" "$NONZERO_ORT_LIB"
}

pf_lib() { # pf_lib PLATFORM LABEL -> the unpacked library
  local entry
  for entry in "${PF_LIBS[@]}"; do
    [ "${entry% *}" = "$1 $2" ] && echo "${entry##* }"
  done
}

# CI's: every runner row, and the aarch64 Python tests on 1.31.1 alone (their 1.17.3 run is about
# 4 minutes more under qemu-user); the table goes to build/platforms/platforms.md.
stage_platforms() {
  pf_platforms "1.31.1" build/platforms/platforms.md
}

# Everything, the aarch64 Python tests on 1.17.3 too, and docs/platforms.md written from it.
stage_platforms_full() {
  pf_platforms "1.31.1 1.17.3" docs/platforms.md
}

pf_platforms() { # pf_platforms "PYTHON-VERSIONS" OUT
  local python_versions=$1 out=$2
  pf_prepare
  step "op-core's unit and property tests on aarch64 (qemu-user as cargo's runner)"
  cargo test --profile release-tests -q --target $PF_AARCH64 -p nonzero-core # Cargo.toml says why
  local version
  for version in 1.31.1 1.17.3; do
    pf_run linux-aarch64 $version tarball "$(pf_lib linux-aarch64 tarball)"
    pf_run linux-aarch64 $version wheel "$(pf_lib linux-aarch64 wheel)"
    pf_run windows-x86_64 $version zip "$(pf_lib windows-x86_64 zip)"
    pf_run windows-x86_64 $version wheel "$(pf_lib windows-x86_64 wheel)"
    pf_windows_panic $version
    pf_windows_load_unload $version "$(pf_lib windows-x86_64 zip)"
  done
  . scripts/platforms/python.sh
  PF_PYTHON_ROWS=()
  for version in $python_versions; do
    pf_python_tests "$version"
  done
  .venv/bin/python tests/platforms/write_doc.py "$out" "${PF_ROWS[@]}" --python "${PF_PYTHON_ROWS[@]}"
  echo "wrote $out"
}

stage_platforms_quick() { # CI's subset: one aarch64 run and one Windows run, on 1.31.1
  pf_prepare
  pf_run linux-aarch64 1.31.1 tarball "$(pf_lib linux-aarch64 tarball)"
  pf_run windows-x86_64 1.31.1 wheel "$(pf_lib windows-x86_64 wheel)"
  pf_windows_panic 1.31.1
  printf '%s\n' "${PF_ROWS[@]}"
}
