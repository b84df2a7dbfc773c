#!/usr/bin/env bash
# Sourced by the `platforms` stage: the aarch64 wheel's Python tests (tests/python-package) on an
# aarch64 CPython under qemu-user, with ONNX Runtime from its own aarch64 PyPI wheel (1.17.3's
# links ONNX Runtime into its Python module, so this is how that release's wheel runs here).
#
# The interpreter is Debian bookworm's arm64 python3.11 (with venv and pip), unpacked with the
# arm64 libraries it needs into a sysroot of its own, build/platforms/arm64-root. apt resolves and
# downloads the packages with arm64 as its only architecture and an empty package database of its
# own, so the host's dpkg (its architectures, what is installed) is left alone; `dpkg-deb -x`
# unpacks each package. The host has no binfmt_misc entry for aarch64, so a script beside it,
# ROOT/usr/bin/python3.11-qemu, is the command: it runs the interpreter under qemu-user with
# argv[0] set to the name it was called by. A venv's bin/python (a link to that script) then finds
# its pyvenv.cfg, and the subprocesses that venv and pip start with sys.executable run too.
PF_ARM64_ROOT=$ROOT/build/platforms/arm64-root
# What the sysroot holds, with their dependencies; a sysroot made from another list is made again.
PF_ARM64_PACKAGES=(python3.11-venv libstdc++6)

pf_arm64_python() { # -> the aarch64 python3.11 as a host command (the sysroot is made once)
  local root=$PF_ARM64_ROOT apt=$ROOT/build/platforms/arm64-apt deb
  mkdir -p "$(dirname "$root")"
  cache_link "$(pf_rel "$root")" # kept between clones (scripts/cache.sh)
  root=$(readlink -f "$root")     # what the link points to: emptied below when stale
  if [ "$(cat "$root/.packages" 2>/dev/null)" != "${PF_ARM64_PACKAGES[*]}" ]; then
    step "aarch64 CPython: Debian's arm64 python3.11-venv and its libraries, unpacked into $(pf_rel "$root")" >&2
    rm -rf "$root" "$apt"
    mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$root"
    : >"$apt/status"
    local opts=(-o APT::Architecture=arm64 -o APT::Architectures=arm64
      -o Dir::State::Lists="$apt/lists" -o Dir::State::status="$apt/status"
      -o Dir::Cache="$apt" -o Dir::Cache::archives="$apt/archives" -o Debug::NoLocking=1)
    apt-get "${opts[@]}" update -qq >&2
    apt-get "${opts[@]}" install -y -qq --download-only --no-install-recommends "${PF_ARM64_PACKAGES[@]}" >&2
    for deb in "$apt"/archives/*.deb; do
      dpkg-deb -x "$deb" "$root"
    done
    rm -rf "$apt"
    # The script finds the sysroot from its own path, so the checkout may move.
    cat >"$root/usr/bin/python3.11-qemu" <<'SCRIPT'
#!/bin/sh
root=$(readlink -f "$0")
root=${root%/usr/bin/python3.11-qemu}
exec qemu-aarch64 -L "$root" -0 "$0" "$root/usr/bin/python3.11" "$@"
SCRIPT
    chmod +x "$root/usr/bin/python3.11-qemu"
    echo "${PF_ARM64_PACKAGES[*]}" >"$root/.packages"
  fi
  echo "$root/usr/bin/python3.11-qemu"
}

pf_python_tests() { # pf_python_tests VERSION: tests/python-package, the aarch64 dist wheel, one row
  local version=$1 python requirements out summary t0=$SECONDS
  python=$(pf_arm64_python)
  requirements=requirements/ort-${version%.*}.txt
  grep -qx "onnxruntime==$version" "$requirements" || { echo "$requirements does not pin onnxruntime==$version" >&2; return 1; }
  step "linux-aarch64, ONNX Runtime $version (its aarch64 PyPI wheel, qemu-user): the dist wheel's Python tests"
  if ! out=$(NONZERO_PACKAGE_PYTHON=$python NONZERO_PACKAGE_REQUIREMENTS=$requirements \
    NONZERO_WHEEL=$(ls "$ROOT"/dist/nonzero_ort-*_aarch64.whl) \
    .venv/bin/python -m pytest -q -p no:cacheprovider tests/python-package 2>&1); then
    echo "$out" >&2
    echo "FAILED: tests/python-package on aarch64 CPython, ONNX Runtime $version" >&2
    return 1
  fi
  summary=$(tail -n 1 <<<"$out")
  # Every test passed: no skip, no deselection, nothing but "N passed in T".
  if ! grep -qE '^[0-9]+ passed in ' <<<"$summary"; then
    echo "$out" >&2
    echo "FAILED: tests/python-package on aarch64 CPython, ONNX Runtime $version: $summary" >&2
    return 1
  fi
  echo "$summary ($((SECONDS - t0)) s)"
  local interpreter
  interpreter=$($python -c 'import platform; print(platform.python_implementation(), platform.python_version(), platform.machine())')
  PF_PYTHON_ROWS+=("| linux-aarch64 | $version | qemu-user | $interpreter (Debian bookworm) | ${summary%% in *} |")
}
