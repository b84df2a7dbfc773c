"""Soak: N runs of a small NonZero model in this one process (a fresh interpreter, started by
test_soak.py or by hand), printing VmRSS, open fds and thread count after a warm-up and at the
end as one JSON line. Usage: python soak.py RUNS [WARMUP]"""

import json
import sys
import time

import numpy as np
from onnx import TensorProto

from common import expected_nonzero, nonzero_model, proc_figures, session

runs = int(sys.argv[1])
warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
sess = session(nonzero_model([("x", TensorProto.FLOAT), ("s", TensorProto.STRING)]), threads=2)
rng = np.random.default_rng(0)
inputs = [
    {"x": (rng.random((3, 5)) < 0.5).astype(np.float32) * rng.standard_normal((3, 5)).astype(np.float32),
     "s": np.array(["", "a", "bc"][i % 3: i % 3 + 2], dtype=object)}
    for i in range(16)
]
wants = [(expected_nonzero(f["x"]), expected_nonzero(f["s"])) for f in inputs]


def run(n):
    for i in range(n):
        k = i % len(inputs)
        y, ys = sess.run(None, inputs[k])
        if i % 97 == 0:  # check a sample; every run's output is still produced and freed
            assert np.array_equal(y, wants[k][0]) and np.array_equal(ys, wants[k][1])


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
    "runs": runs, "warmup": warmup, "seconds": round(elapsed, 2),
    "rss_kib_before": before[0], "rss_kib_after": after[0], "rss_kib_samples": samples,
    "fds_before": before[1], "fds_after": after[1],
    "threads_before": before[2], "threads_after": after[2],
}))
