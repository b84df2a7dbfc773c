"""Peak extra memory of one NonZero run, measured in a fresh process per contender: VmHWM (peak
resident set) after the run minus the resident set before it (the peak is reset through
/proc/self/clear_refs), with the input already allocated and the
session already created. The output alone is rank * nnz * 8 bytes; anything above that is
scratch. Prints a Markdown table.

    scripts/bench memory               (or: .venv-bench/bin/python benches/memory.py)
"""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.environ.get("NONZERO_ORT_LIB", os.path.join(ROOT, "target/release/libnonzero_ort.so"))

CHILD = r"""
import sys, numpy as np, onnxruntime as ort
from onnx import helper, TensorProto
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
library, n, density, threads = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
x = (np.random.default_rng(0).random(n, dtype=np.float32) < density).astype(np.float32)
xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])
yi = helper.make_tensor_value_info("y", TensorProto.INT64, None)
m = helper.make_model(helper.make_graph([helper.make_node("NonZero", ["x"], ["y"])], "g", [xi], [yi]),
                      opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 8
so = ort.SessionOptions(); so.intra_op_num_threads = threads; so.log_severity_level = 3
so.enable_cpu_mem_arena = False
if library != "builtin":
    so.register_custom_ops_library(library)
s = ort.InferenceSession(m.SerializeToString(), so)
small = np.zeros(n, np.float32); small[0] = 1
s.run(None, {"x": small})  # warm-up: thread pool and allocator set up, nothing large
open("/proc/self/clear_refs", "w").write("5")  # reset the peak to the current resident set
before = hwm()
(y,) = s.run(None, {"x": x})
print(hwm() - before, y.nbytes)
"""


def main():
    n, threads = 16 << 20, 2
    print(f"float32, {n >> 20}M elements, intra_op_num_threads={threads}, CPU memory arena off\n")
    print("| density | output MB | built-in peak extra MB | ours peak extra MB | ours above output MB |")
    print("|---:|---:|---:|---:|---:|")
    for density in (0.01, 0.5, 0.99):
        res = {}
        for who, lib in (("builtin", "builtin"), ("ours", LIB)):
            out = subprocess.run([sys.executable, "-c", CHILD, lib, str(n), str(density), str(threads)],
                                 check=True, capture_output=True, text=True).stdout.split()
            res[who] = (int(out[0]), int(out[1]))
        mb = 1 << 20
        print(f"| {density:.0%} | {res['ours'][1] / mb:.1f} | {res['builtin'][0] / mb:.1f} | {res['ours'][0] / mb:.1f} | "
              f"{(res['ours'][0] - res['ours'][1]) / mb:.1f} |")


if __name__ == "__main__":
    main()
