"""Load-unload loop: CYCLES times, new SessionOptions register the library BY PATH
(register_custom_ops_library, as servers and `nonzero_ort.register` do; nothing else in the
process loads the file), one session on them runs one NonZero model, and both are freed, which
makes ONNX Runtime release the library. One fresh process (run by test_load_unload.py with each
ONNX Runtime's venv, or by hand). Needs onnxruntime, onnx and numpy.

After every cycle it asks the dynamic loader whether the library is still loaded, and which load
it is (dlopen(RTLD_NOLOAD) finds it without loading it, and dlclose gives the reference back at
once, so the check pins nothing); every 100 cycles, and after the first and the last, it reads
/proc/self/maps for the library's mapping (address ranges, permissions, offsets). Reading
/proc/self/maps costs ~1 ms, as much as a whole cycle. It samples VmRSS after cycle 100 and
every 1,000 cycles. Prints one JSON line; the test asserts on it.

Run it with ORT_DISABLE_TELEMETRY=1 (the test does): ONNX Runtime 1.31.1's telemetry queues an
event per session (~60 B each, +0.6 MB over 10,000 cycles without this library) and its uploader
starts threads every few seconds (DNS lookups, a new malloc arena each), which step VmRSS by
~1 MB at ~9 s and ~15 s of the process's life, with or without this library, even idle.

Usage: python load_unload.py LIBRARY CYCLES [--device gpu] [--no-library]
  --device gpu  the session config entry custom_op.NonZero.device = gpu (ONNX Runtime 1.24+;
                older hosts take NONZERO_ORT_DEVICE=gpu from the environment instead)
  --no-library  the same loop without registering the library (the host's own NonZero): the
                control for measuring what the library adds."""

import ctypes
import json
import os
import sys
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

lib = os.path.realpath(sys.argv[1])
cycles = int(sys.argv[2])
device = sys.argv[sys.argv.index("--device") + 1] if "--device" in sys.argv else None
with_library = "--no-library" not in sys.argv
RSS_AT = 100


def tiny_nonzero_model():
    """ONNX NonZero-13 (node nz) over a float [n] input x; output y, int64 [1, k]."""
    vi = helper.make_tensor_value_info
    graph = helper.make_graph([helper.make_node("NonZero", ["x"], ["y"], name="nz")], "g",
                              [vi("x", TensorProto.FLOAT, ["n"])], [vi("y", TensorProto.INT64, [1, "k"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


MODEL = tiny_nonzero_model()
X = np.array([0.0, 1.5, 0.0, -2.0, 0.0, 3.0, -0.0, 7.0], dtype=np.float32)
WANT = np.array([[1, 3, 5, 7]], dtype=np.int64)


DL = ctypes.CDLL(None)
DL.dlopen.restype = ctypes.c_void_p
DL.dlopen.argtypes = [ctypes.c_char_p, ctypes.c_int]
DL.dlclose.argtypes = [ctypes.c_void_p]
RTLD_LAZY, RTLD_NOLOAD = 0x1, 0x4  # glibc's values (dlfcn.h)


def loaded():
    """The loader's handle of the library if it is loaded (the same value while it is the same
    load), else None. The reference dlopen takes is given back at once."""
    handle = DL.dlopen(lib.encode(), RTLD_LAZY | RTLD_NOLOAD)
    if handle:
        DL.dlclose(handle)
    return handle


def mappings():
    """The library's lines of /proc/self/maps (address range, permissions, offset), in order."""
    with open("/proc/self/maps") as f:
        return tuple(" ".join(line.split()[:3]) for line in f if line.rstrip().endswith(lib))


def rss_kib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def cycle():
    so = ort.SessionOptions()
    # WARNING shows the library's device log lines (NONZERO_ORT_LOG_DEVICE=1), one per compute.
    so.log_severity_level = 2 if os.environ.get("NONZERO_ORT_LOG_DEVICE") == "1" else 3
    so.intra_op_num_threads = 1  # no pool threads to start and join per session
    so.inter_op_num_threads = 1
    if with_library:
        if device:
            so.add_session_config_entry("custom_op.NonZero.device", device)
        so.register_custom_ops_library(lib)
    sess = ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])
    (y,) = sess.run(["y"], {"x": X})
    if y.dtype != WANT.dtype or y.shape != WANT.shape or not np.array_equal(y, WANT):
        raise AssertionError(f"NonZero gave {y!r}, want {WANT!r}")
    del sess, so


before = (loaded(), mappings())
handles, maps_seen = set(), set()
unloaded = unmapped = maps_reads = 0
rss_samples = {}
start = time.time()
for i in range(1, cycles + 1):
    cycle()
    handle = loaded()
    if handle:
        handles.add(handle)
    else:
        unloaded += 1
    if i == 1 or i % 100 == 0 or i == cycles:
        maps = mappings()
        maps_reads += 1
        if maps:
            maps_seen.add(maps)
        else:
            unmapped += 1
    if i == RSS_AT or i % 1000 == 0 or i == cycles:
        rss_samples[i] = rss_kib()
print(json.dumps({
    "onnxruntime": ort.__version__, "library": lib if with_library else None,
    "device": device or os.environ.get("NONZERO_ORT_DEVICE"),
    "cycles": cycles, "seconds": round(time.time() - start, 2),
    "loaded_before_first": bool(before[0]), "mapped_before_first": len(before[1]),
    "cycles_ending_unloaded": unloaded, "distinct_handles": len(handles),
    "maps_reads": maps_reads, "maps_reads_unmapped": unmapped, "distinct_mappings": len(maps_seen),
    "segments": len(next(iter(maps_seen))) if maps_seen else 0,
    "rss_kib": rss_samples,
}))
