# Sourced by scripts/test: the `static` stage. The judges of `nonzero optimize --static` (issue 26,
# docs/static.md "How it is judged"): OpenVINO 2026.4.1 (CPU) and IREE 3.13.0 (llvm-cpu) beside
# ONNX Runtime 1.31.1, in .venv-static (requirements/static.txt, remade when that file changes).
# tests/static proves the judge on hand-made models, then judges the committed exports as they
# are and after `nonzero optimize --static` (target/release/nonzero, built here as scripts/setup
# builds it, a no-op when current; $NONZERO_CLI names another), and the seeds of the fuzz target
# optimize_static made static (test_fuzz_sample.py), compares the shapes the analysis folds with
# OpenVINO's (test_folded_shapes.py), and writes build/static/report.md.
# IREE's compiled modules are cached in build/static/iree/ (a link into scripts/cache.sh's cache).
static_venv() {
  venv .venv-static requirements/static.txt
}

stage_static() {
  . scripts/env.sh
  step "static: .venv-static (requirements/static.txt: OpenVINO, IREE, ONNX Runtime 1.31.1)"
  static_venv
  mkdir -p build/static
  cache_link build/static/iree
  if [ -z "${NONZERO_CLI:-}" ]; then
    step "static: the nonzero CLI (cargo build --release --workspace, as scripts/setup)"
    cargo build --release --workspace
  fi
  step "static: what the analysis proves per tensor (crates/rewrite-analysis/examples/shapes.rs)"
  cargo build --release -p nonzero-rewrite-analysis --example shapes
  step "static: tests/static (the judge on hand-made models; the committed exports as they are and after --static)"
  .venv-static/bin/python -m pytest -q tests/static
  echo "OpenVINO's verdicts and IREE's compiles (build/static/report.md):"
  cat build/static/report.md
}
