"""Soak the static model (issue 39, item 4): NONZERO_STATIC_SOAK_MODEL (default
models/real/torch_patterns/mask_nms_ts17.onnx) made static by `nonzero optimize --static
--allow-dynamic` at tests/static/exports.py's fixed shapes, then run by static_soak.py in a fresh
process for NONZERO_STATIC_SOAK_SECONDS (CI: 120; the soak_static stage: 1200) on ONNX Runtime
with the library registered (mask_nms_ts17 is fully static: its NMS is the fixed-shape greedy
Loop), 4 sessions on 4 threads.

No error; every output equal to one single-threaded session's on the same input; VmRSS at the end
within 5% of VmRSS after the warm-up; open fds and threads unchanged. The pool of random inputs
includes empty selections (every mask all false)."""

import json
import os
import pathlib
import subprocess
import sys

from common import ROOT

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tests" / "static"))
import exports  # noqa: E402
import judge  # noqa: E402

DEFAULT_MODEL = "models/real/torch_patterns/mask_nms_ts17.onnx"
MODEL = ROOT / os.environ.get("NONZERO_STATIC_SOAK_MODEL", DEFAULT_MODEL)
SECONDS = float(os.environ.get("NONZERO_STATIC_SOAK_SECONDS", "120"))
THREADS = 4
RSS_TOLERANCE = 0.05


def test_static_model_soaks_on_4_threads_with_flat_memory_and_equal_outputs(tmp_path):
    export = next((e for e in exports.exports() if e.path.resolve() == MODEL.resolve()), None)
    assert export is not None, f"NONZERO_STATIC_SOAK_MODEL={MODEL} is not in tests/static/exports.py (the fixed shapes)"
    static = tmp_path / "static.onnx"
    made = judge.static_model(export.path, static, export.shapes, allow_dynamic=True)
    assert made["returncode"] == 0, made["stderr"]
    left = sorted(f"{n['op']} ({n['reason']})" for n in made["left_nodes"])
    proc = subprocess.run([sys.executable, str(HERE / "static_soak.py"), str(static), str(export.path),
                           str(SECONDS), str(THREADS)],
                          env=dict(os.environ, PYTHONPATH=str(HERE)), capture_output=True, text=True,
                          timeout=SECONDS * 3 + 600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    growth = (r["rss_kib_end"] - r["rss_kib_warm"]) / r["rss_kib_warm"]
    line = (f"static soak {r['export']} {r['shapes']} (--static --allow-dynamic; left dynamic: {left or 'none'}): "
            f"{r['threads']} threads x own session, {r['seconds']} s, runs {r['runs']} ({sum(r['runs'])} in all), "
            f"pool {r['pool']} inputs ({r['pool_empty_selections']} with empty selections, {r['pool_empty_outputs']} "
            f"with an empty output); errors {r['errors']}, mismatches {r['mismatches']}; VmRSS {r['rss_kib_warm']} KiB "
            f"after {r['warmup_seconds']:.0f} s -> {r['rss_kib_end']} KiB at the end ({growth:+.2%}); samples "
            f"{r['rss_kib_samples']}; fds {r['fds_warm']} -> {r['fds_end']}, threads {r['threads_warm']} -> {r['threads_end']}")
    print("\n" + line)
    out = ROOT / "build" / "reliability"
    out.mkdir(parents=True, exist_ok=True)
    (out / "static-soak.txt").write_text(line + "\n")
    assert r["errors"] == 0, r["first_errors"]
    assert r["mismatches"] == 0, r["first_mismatches"]
    assert all(n > 0 for n in r["runs"]), r["runs"]
    assert r["pool_empty_selections"] > 0
    assert growth <= RSS_TOLERANCE, line
    assert r["fds_end"] == r["fds_warm"] and r["threads_end"] == r["threads_warm"], line
