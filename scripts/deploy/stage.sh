# Sourced by scripts/test: the `deploy` and `deploy_all` stages (issue 38, docs/static.md
# "Deployed to NPU toolchains"). The models the static stage makes fully static, judged by two
# NPU toolchains that run on x86_64 Linux, each in cached venvs of its own:
#   .venv-deploy-qnn     Python 3.11: onnxruntime-qnn 2.7.0 (QNN SDK 2.51, onnxruntime 1.32.0),
#                        the HTP backend's emulator; it also runs the stage's pytest
#   .venv-deploy-onnx2tf Python 3.12: onnx2tf 2.6.9 with TensorFlow (the ONNX -> LiteRT converter,
#                        both its flatbuffer_direct and tf_converter backends; ~2.7 GB, ~4 min)
#   .venv-deploy-litert  Python 3.12: ai-edge-litert 2.3.0, which runs the .tflite files
#   .venv-deploy-rknn    Python 3.12: rknn-toolkit2 2.5.0 (Rockchip's converter and simulator;
#                        torch 2.4, ~5.6 GB): the `deploy_rknn` stage's alone
# The Pythons come from pyenv (3.11 and 3.12; the wheels need them): missing, the stage fails
# saying which. Conversions are cached by the model's bytes, as IREE's compiles are, in
# NONZERO_DEPLOY_CACHE (~/.cache/nonzero/deploy-tflite/: outside the checkout, for CI's clones).
# `deploy` runs the small exports and hand-made models in the default form and each toolchain's
# own (CI); `deploy_all` (NONZERO_DEPLOY_ALL=1) every form on both, every soc_model, 200
# generated chains, and the models left out of CI; `deploy_rknn` (NONZERO_DEPLOY_RKNN=1) builds
# every one, generic and `--target rknn`, for rk3588 and runs it in RKNN's simulator.

deploy_python() { # deploy_python 3.12 -> an interpreter of that minor version (pyenv's, or PATH's)
  local minor=$1 found
  for found in "$(pyenv root 2>/dev/null)"/versions/"$minor".*/bin/python3 "$(command -v "python$minor" || true)"; do
    if [ -x "$found" ]; then
      echo "$found"
      return
    fi
  done
  echo "deploy: no Python $minor (pyenv versions, or python$minor on PATH): onnxruntime-qnn needs 3.11," \
    "onnx2tf 2.6.9 and ai-edge-litert 2.3.0 need 3.12; install it (pyenv install $minor)" >&2
  return 1
}

deploy_venvs() {
  local py311 py312
  py311=$(deploy_python 3.11)
  py312=$(deploy_python 3.12)
  VENV_PYTHON=$py311 venv .venv-deploy-qnn requirements/deploy-qnn.txt
  VENV_PYTHON=$py312 venv .venv-deploy-onnx2tf requirements/deploy-onnx2tf.txt
  VENV_PYTHON=$py312 venv .venv-deploy-litert requirements/deploy-litert.txt
}

deploy_run() { # deploy_run PYTEST-ARGS...: the venvs, the CLI, then tests/deploy
  . scripts/env.sh
  step "deploy: .venv-deploy-qnn, .venv-deploy-onnx2tf, .venv-deploy-litert (requirements/deploy-*.txt)"
  deploy_venvs
  mkdir -p build/deploy
  if [ -z "${NONZERO_CLI:-}" ]; then
    step "deploy: the nonzero CLI (cargo build --release --workspace, as scripts/setup)"
    cargo build --release --workspace
  fi
  step "deploy: tests/deploy (QNN HTP, onnx2tf -> LiteRT) on every model --static makes static"
  .venv-deploy-qnn/bin/python -m pytest -q -rxXs tests/deploy "$@"
  echo "What each toolchain took (build/deploy/report.md):"
  cat build/deploy/report.md
}

stage_deploy() {
  deploy_run
}

stage_deploy_rknn() { # tests/deploy/test_rknn.py alone -> build/deploy/report-rknn.md
  . scripts/env.sh
  step "deploy_rknn: .venv-deploy-qnn (runs pytest, ONNX Runtime CPU's reference), .venv-deploy-rknn"
  VENV_PYTHON=$(deploy_python 3.11) venv .venv-deploy-qnn requirements/deploy-qnn.txt
  VENV_PYTHON=$(deploy_python 3.12) venv .venv-deploy-rknn requirements/deploy-rknn.txt
  mkdir -p build/deploy
  if [ -z "${NONZERO_CLI:-}" ]; then
    step "deploy_rknn: the nonzero CLI (cargo build --release --workspace, as scripts/setup)"
    cargo build --release --workspace
  fi
  step "deploy_rknn: tests/deploy/test_rknn.py (rknn-toolkit2 -> rk3588, its simulator)"
  NONZERO_DEPLOY_RKNN=1 .venv-deploy-qnn/bin/python -m pytest -q -rxXs tests/deploy/test_rknn.py "$@"
  echo "What RKNN took (build/deploy/report-rknn.md):"
  cat build/deploy/report-rknn.md
}

stage_deploy_all() {
  NONZERO_DEPLOY_ALL=1 deploy_run
}
