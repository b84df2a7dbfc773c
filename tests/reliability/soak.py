"""Soak: N runs of a small model of one op (NonZero by default, or ArgWhere, BooleanMask,
NonZeroCoordinates) in this one process (a fresh interpreter, started by test_soak.py or by hand),
printing VmRSS, open fds and thread count after a warm-up and at the end as one JSON line.
Usage: python soak.py RUNS [WARMUP] [OP]"""

import json
import sys
import time

import numpy as np
from onnx import TensorProto

from common import expected_outputs, op_feeds, op_model, output_names, proc_figures, same, session

runs = int(sys.argv[1])
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
op = sys.argv[3] if len(sys.argv) > 3 else "NonZero"
sess = session(op_model(op, [("x", TensorProto.FLOAT), ("s", TensorProto.STRING)]), threads=2)
names = output_names(op, "x") + output_names(op, "s")
rng = np.random.default_rng(0)
inputs = []
for i in range(16):
    x = (rng.random((3, 5)) < 0.5).astype(np.float32) * rng.standard_normal((3, 5)).astype(np.float32)
    s = np.array(["", "a", "bc"][i % 3: i % 3 + 2], dtype=object)
    inputs.append({**op_feeds(rng, op, "x", x), **op_feeds(rng, op, "s", s)})
wants = [expected_outputs(op, f, "x") + expected_outputs(op, f, "s") for f in inputs]


def run(n):
    for i in range(n):
        k = i % len(inputs)
        outs = sess.run(names, inputs[k])
        if i % 97 == 0:  # check a sample; every run's output is still produced and freed
            assert all(same(got, want) for got, want in zip(outs, wants[k])), (op, k)


run(warmup)
before = proc_figures()
samples = []
t = time.time()
step = max(1, runs // 10)
done = 0
while done < runs:
    n = min(step, runs - done)
    run(n)
    done += n
    samples.append(proc_figures()[0])
elapsed = time.time() - t
after = proc_figures()
print(json.dumps({
    "op": op, "runs": runs, "warmup": warmup, "seconds": round(elapsed, 2),
    "rss_kib_before": before[0], "rss_kib_after": after[0], "rss_kib_samples": samples,
    "fds_before": before[1], "fds_after": after[1],
    "threads_before": before[2], "threads_after": after[2],
}))
