# Sourced by scripts/run-models --ray and the ray stage of scripts/test (after scripts/env.sh):
# .venv-ray with requirements/ray.txt (Ray Data + Serve pinned, ONNX Runtime 1.31.1) and the
# nonzero-ort wheel of this checkout, built by maturin into build/ray/wheels.
ray_wheel() { # prints the path of the wheel built from the working tree (cargo's cache makes a rebuild quick)
  # pip's lines go to stderr too: a first run, which makes .venv-build, printed them into the path.
  venv .venv-build requirements/build.txt >&2
  rm -rf build/ray/wheels
  # maturin's and cargo's progress go to stderr: this function's stdout is the wheel's path.
  timed_step "building the nonzero-ort wheel (maturin, release; seconds when target/ is current, 2 to 7 minutes on 2 cores when not)" \
    env CARGO_TARGET_DIR="$PWD/target" .venv-build/bin/maturin build --release \
    -m python/Cargo.toml -o build/ray/wheels >&2
  ls build/ray/wheels/nonzero_ort-*.whl
}

ray_venv() { # .venv-ray, then the wheel installed into it when it differs from the one there
  mkdir -p build/ray
  local wheel sum
  wheel=$(ray_wheel)
  venv .venv-ray requirements/ray.txt
  sum=$(sha256sum "$wheel" | cut -d' ' -f1)
  if [ "$(cat .venv-ray/.installed-wheel 2>/dev/null)" != "$sum" ]; then
    .venv-ray/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --force-reinstall "$wheel"
    echo "$sum" >.venv-ray/.installed-wheel
  fi
  export NONZERO_RAY_WHEEL=$PWD/$wheel
}
