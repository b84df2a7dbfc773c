"""No growth per session (issue 39): 10,000 SessionOptions, each registering the library by path
with one session running one NonZero model, then freed, in one fresh process per ONNX Runtime
(1.31.1 from .venv, 1.17.3 from .venv-ort1.17; load_unload.py is the loop).

The library pins itself at its first registration (docs/architecture.md, "The ONNX Runtime
boundary"), so ONNX Runtime's unload after each cycle leaves it mapped: it must be mapped exactly
once throughout (the same mapping after every cycle, none before the first), and VmRSS after the
last cycle must be within 2 MB of VmRSS after the 100th. NONZERO_LOAD_UNLOAD_CYCLES overrides the
count (for measuring; CI runs 10,000), and caps the GPU loop's 1,000."""

import json
import os
import re
import pathlib
import subprocess

import pytest

from common import LIB

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CYCLES = int(os.environ.get("NONZERO_LOAD_UNLOAD_CYCLES", "10000"))
GPU_CYCLES = 1000
RSS_AT = 100
RSS_TOLERANCE_KIB = 2_000_000 // 1024  # 2 MB
VENVS = {".venv": "requirements/ort-1.31.txt", ".venv-ort1.17": "requirements/ort-1.17.txt"}


def pinned_version(requirements):
    lines = (ROOT / requirements).read_text().splitlines()
    return next(line.split("==")[1] for line in lines if line.startswith("onnxruntime=="))


def load_unload(venv, cycles, *args, env=None):
    python = ROOT / venv / "bin/python"
    assert python.exists(), f"{python} is missing: run scripts/setup"
    assert LIB.exists(), f"{LIB} is missing: run scripts/setup"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NONZERO_ORT_")}, **(env or {})}
    # ONNX Runtime 1.31.1's telemetry grows VmRSS by itself, per session and by the clock
    # (load_unload.py); 1.17.3 has none on Linux.
    env["ORT_DISABLE_TELEMETRY"] = "1"
    proc = subprocess.run([str(python), str(HERE / "load_unload.py"), str(LIB), str(cycles), *args],
                          env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def ran_on(log):
    """(device, adapter) of each "NonZero node 'nz' ran on ..." line of the library's device log
    (NONZERO_ORT_LOG_DEVICE=1); the adapter is empty on the CPU."""
    return re.findall(r"NonZero node 'nz' ran on (\w+)(?: \((.*)\))?\x1b?", log)


def check(r, cycles):
    rss = {int(k): v for k, v in r["rss_kib"].items()}
    growth = rss[cycles] - rss[min(RSS_AT, cycles)]
    print(f"\nload-unload, ONNX Runtime {r['onnxruntime']}, device {r['device'] or 'default'}: "
          f"{cycles} cycles in {r['seconds']} s; VmRSS after cycle 100 {rss[min(RSS_AT, cycles)]} KiB, "
          f"after the last {rss[cycles]} KiB ({growth:+d}); samples {rss}; library mapped once in "
          f"{r['segments']} segments, the same at {r['maps_reads']} reads of /proc/self/maps")
    assert r["cycles"] == cycles
    assert not r["loaded_before_first"] and r["mapped_before_first"] == 0, r
    # Loaded after every cycle, always the same load; mapped at every read, always alike.
    assert r["cycles_ending_unloaded"] == 0 and r["distinct_handles"] == 1, r
    assert r["maps_reads"] == 2 + (cycles - 1) // 100, r
    assert r["maps_reads_unmapped"] == 0 and r["distinct_mappings"] == 1, r
    assert abs(growth) <= RSS_TOLERANCE_KIB, r


@pytest.mark.parametrize("venv", VENVS)
def test_sessions_registering_by_path_do_not_grow_memory(venv):
    r, log = load_unload(venv, CYCLES, env={"NONZERO_ORT_LOG_DEVICE": "1"})
    assert r["onnxruntime"] == pinned_version(VENVS[venv]), r
    assert ran_on(log) == [("cpu", "")] * CYCLES, log[-2000:]  # the library's kernel, every cycle
    check(r, CYCLES)


@pytest.mark.parametrize("venv", VENVS)
def test_sessions_on_the_gpu_path_do_not_grow_memory(venv):
    """The same loop, GPU_CYCLES times, with NonZero on the GPU (lavapipe in CI: the reliability
    stage installs it). ONNX Runtime 1.31.1 takes the device from the session config entry; 1.17.3
    cannot show it to a kernel, so NONZERO_ORT_DEVICE=gpu. The library's device log proves that
    every cycle ran on the GPU; the wgpu device is made once, by the first cycle."""
    cycles = min(CYCLES, GPU_CYCLES)
    old_host = venv == ".venv-ort1.17"
    r, log = load_unload(venv, cycles, *([] if old_host else ["--device", "gpu"]),
                         env={"NONZERO_ORT_LOG_DEVICE": "1", **({"NONZERO_ORT_DEVICE": "gpu"} if old_host else {})})
    devices = ran_on(log)
    assert len(devices) == cycles and {device for device, _ in devices} == {"gpu"}, log[-2000:]
    print(f"\nGPU adapter: {devices[0][1]}")
    check(r, cycles)
