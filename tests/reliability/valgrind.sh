#!/usr/bin/env bash
# valgrind memcheck over a small NonZero workload through ONNX Runtime's Python API with
# libnonzero_ort loaded (tests/reliability/valgrind_child.py), then a summary of the errors that
# have a frame in our code (tests/reliability/valgrind_report.py). Not run by scripts/test
# (~30 s, and the Python/ORT noise needs reading); figures in docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p build/reliability
log=build/reliability/valgrind.log
# PYTHONMALLOC=malloc: let memcheck see every Python allocation instead of pymalloc's arenas.
PYTHONPATH=tests/reliability PYTHONMALLOC=malloc valgrind --tool=memcheck --leak-check=full \
  --show-leak-kinds=all --errors-for-leak-kinds=definite,indirect --num-callers=40 \
  --log-file="$log" .venv/bin/python tests/reliability/valgrind_child.py
.venv/bin/python tests/reliability/valgrind_report.py "$log"
