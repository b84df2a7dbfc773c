"""Helpers shared by the benchmark stages (percall.py, piper.py, patterns.py): sessions built-in vs
library, ONNX Runtime's profiler, interleaved timing, and writing results under build/bench/."""

import json
import os
import platform
import shutil
import subprocess
import tempfile
import time

import numpy as np
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.environ.get("NONZERO_ORT_LIB", os.path.join(ROOT, "target/release/libnonzero_ort.so"))
CLI = os.environ.get("NONZERO_CLI", os.path.join(ROOT, "target/release/nonzero"))
BUILD = os.path.join(ROOT, "build", "bench")


_session_count = [0]


def session(model, threads=2, library=False, spinning=None, profile_dir=None, optimize=True):
    """An ONNX Runtime CPU session; `library` registers libnonzero_ort.so, `spinning` sets
    session.intra_op.allow_spinning ("1"/"0"), `profile_dir` turns ORT's profiler on."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.log_severity_level = 3
    if not optimize:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if spinning is not None:
        so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    if profile_dir is not None:
        so.enable_profiling = True
        # ORT names the file PREFIX_<date-time to the millisecond>.json: a prefix per session
        # keeps two sessions created in the same millisecond from sharing one file.
        _session_count[0] += 1
        so.profile_file_prefix = os.path.join(profile_dir, f"session{_session_count[0]}")
    if library:
        so.register_custom_ops_library(LIB)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def profile_events(sess):
    """Stops the session's profiler and returns its events (the JSON file is removed)."""
    path = sess.end_profiling()
    with open(path) as f:
        events = json.load(f)
    os.remove(path)
    return events


def kernel_times(events, op_type=None, node_name=None):
    """Per-node kernel times (microseconds, the profiler's resolution), in execution order."""
    out = []
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        if op_type is not None and e["args"].get("op_name") != op_type:
            continue
        if node_name is not None and e["name"] != node_name + "_kernel_time":
            continue
        out.append(e)
    return out


def per_run_totals(events, op_type):
    """Sum of `op_type` kernel times per session run, and the number of such nodes per run:
    events are grouped by the model_run event whose interval holds them."""
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "Session" and e["name"] == "model_run")
    nodes = sorted((e["ts"], e["dur"]) for e in kernel_times(events, op_type=op_type))
    totals, counts, i = [], [], 0
    for start, end in runs:
        total = count = 0
        while i < len(nodes) and nodes[i][0] < start:
            i += 1
        while i < len(nodes) and nodes[i][0] <= end:
            total += nodes[i][1]
            count += 1
            i += 1
        totals.append(total)
        counts.append(count)
    return totals, counts


def interleaved(runners, repeats, warmup=3):
    """Wall-clock seconds per call of each runner, the runners called in turn `repeats` times after
    `warmup` untimed rounds, so that drift on a shared machine hits every contender alike."""
    for _ in range(warmup):
        for fn in runners.values():
            fn()
    times = {k: [] for k in runners}
    for _ in range(repeats):
        for name, fn in runners.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


def median(values):
    return float(np.median(values)) if len(values) else float("nan")


def iqm(values):
    """Interquartile mean: the mean of the middle half. The profiler counts whole microseconds, so
    medians of small kernels are coarse; this keeps sub-microsecond resolution without the outliers
    of a busy machine."""
    v = np.sort(np.asarray(values, dtype=float))
    if not len(v):
        return float("nan")
    q = len(v) // 4
    return float(v[q:len(v) - q].mean())


def machine():
    cpu = platform.processor() or platform.platform()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{platform.machine()}, {os.cpu_count()} cores, {cpu}"


def header(extra):
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"onnxruntime {ort.__version__}; {extra}; machine: {machine()}; load average at start {load:.2f}"


def write_outputs(name, markdown, data, out_dir=BUILD):
    """Writes NAME.md and NAME.json under out_dir and prints the markdown."""
    os.makedirs(out_dir, exist_ok=True)
    md_path, json_path = os.path.join(out_dir, name + ".md"), os.path.join(out_dir, name + ".json")
    with open(md_path, "w") as f:
        f.write(markdown)
    with open(json_path, "w") as f:
        json.dump(data, f, indent=1)
    print(markdown)
    print(f"wrote {md_path} and {json_path}")


def profile_dir():
    return tempfile.mkdtemp(prefix="nonzero-prof-")


def remove_dir(path):
    shutil.rmtree(path, ignore_errors=True)


def optimize_available():
    """Whether this build's `nonzero` command has the `optimize` subcommand."""
    if not os.path.exists(CLI):
        return False
    res = subprocess.run([CLI, "optimize", "--help"], capture_output=True, text=True)
    return res.returncode == 0


def optimize(src, dst):
    """Runs `nonzero optimize SRC DST`; returns its stdout (raises on failure)."""
    res = subprocess.run([CLI, "optimize", src, dst], capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(f"nonzero optimize {src} failed ({res.returncode}): {res.stderr.strip()}")
    return res.stdout
