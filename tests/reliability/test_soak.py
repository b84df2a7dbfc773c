"""Soak: many runs of a small model (float + string inputs) in one fresh process per op (NonZero,
ArgWhere, BooleanMask, NonZeroCoordinates); resident memory, open file descriptors and threads must
stay flat after warm-up.

Tolerance: RSS may grow by at most 5 MiB after a 2,000-run warm-up (allocator noise is a few
hundred KiB); fds and threads must not change at all. NONZERO_SOAK_RUNS sets the number of runs
(CI: 10,000; docs/reliability.md records 100,000)."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

from common import OPS

HERE = pathlib.Path(__file__).resolve().parent
RUNS = int(os.environ.get("NONZERO_SOAK_RUNS", "10000"))
RSS_TOLERANCE_KIB = 5 * 1024


@pytest.mark.parametrize("op", OPS)
def test_soak_keeps_memory_fds_and_threads_flat(op):
    env = dict(os.environ, PYTHONPATH=str(HERE))
    env.pop("NONZERO_ORT_INJECT_PANIC", None)
    proc = subprocess.run([sys.executable, str(HERE / "soak.py"), str(RUNS), "2000", op],
                          env=env, capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    growth = r["rss_kib_after"] - r["rss_kib_before"]
    print(f"\nsoak {op}: {r['runs']} runs in {r['seconds']} s; RSS {r['rss_kib_before']} -> "
          f"{r['rss_kib_after']} KiB ({growth:+d}); fds {r['fds_before']} -> {r['fds_after']}; "
          f"threads {r['threads_before']} -> {r['threads_after']}; samples {r['rss_kib_samples']}")
    assert growth < RSS_TOLERANCE_KIB, r
    assert r["fds_after"] == r["fds_before"], r
    assert r["threads_after"] == r["threads_before"], r
