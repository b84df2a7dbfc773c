"""Driver for instruction counts of one NonZero call under callgrind (see benches/percall.py):

    valgrind --tool=callgrind --toggle-collect='*registration*compute*' \
      .venv/bin/python benches/percall_callgrind.py --lib target/release/libnonzero_ort.so
    valgrind --tool=callgrind --toggle-collect='*NonZero*Compute*' \
      .venv/bin/python benches/percall_callgrind.py

Only the named functions (the library's compute trampoline, or the built-in kernel's Compute)
count; the total divided by --runs is the instructions of one call, framework overhead excluded.
"""

import argparse

import numpy as np
import onnxruntime as ort

from percall import CASES, model

p = argparse.ArgumentParser()
p.add_argument("--lib", help="libnonzero_ort.so; without it, the built-in kernel")
p.add_argument("--case", type=int, default=0, help="index into percall.CASES")
p.add_argument("--runs", type=int, default=100)
args = p.parse_args()
label, dtype, shape, density = CASES[args.case]
x = (np.random.default_rng(0).random(shape) < density).astype(dtype)
so = ort.SessionOptions()
so.intra_op_num_threads = 2
so.log_severity_level = 3
if args.lib:
    so.register_custom_ops_library(args.lib)
sess = ort.InferenceSession(model(dtype, shape), so, providers=["CPUExecutionProvider"])
for _ in range(args.runs):
    sess.run(None, {"x": x})
print(label, "runs", args.runs)
