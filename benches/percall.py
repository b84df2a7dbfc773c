"""Fixed cost of one NonZero call, from ONNX Runtime's own profiler: the per-node `dur` of the
NonZero node's kernel_time events (microseconds), median over --runs runs, built-in kernel vs
libnonzero_ort.so, on small inputs (the adapter's per-call overhead dominates there).

    .venv/bin/python benches/percall.py [--lib PATH] [--runs 500] [--threads 2] [--json OUT]
"""

import argparse
import json
import os
import statistics
import tempfile

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.environ.get("NONZERO_ORT_LIB", os.path.join(ROOT, "target/release/libnonzero_ort.so"))
ELEM = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL}

# (label, dtype, shape, density of non-zeros)
CASES = [
    ("int64 [1, 13]", np.int64, (1, 13), 0.5),
    ("float32 [1024]", np.float32, (1024,), 0.5),
]


def model(dtype, shape):
    x = helper.make_tensor_value_info("x", ELEM[dtype], list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    node = helper.make_node("NonZero", ["x"], ["y"], name="nz")
    graph = helper.make_graph([node], "percall", [x], [y])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def kernel_times(m, x, threads, runs, library):
    """The NonZero node's kernel_time durations (us), one per run after 20 warm-up runs.
    `library`: the path of libnonzero_ort.so, or None for the built-in kernel."""
    with tempfile.TemporaryDirectory() as tmp:
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.log_severity_level = 3
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(tmp, "percall")
        if library:
            so.register_custom_ops_library(library)
        sess = ort.InferenceSession(m, so, providers=["CPUExecutionProvider"])
        want = np.array(np.nonzero(x), dtype=np.int64)
        for _ in range(20 + runs):
            (got,) = sess.run(None, {"x": x})
        assert np.array_equal(got, want), "wrong result"
        with open(sess.end_profiling()) as f:
            events = json.load(f)
    durs = [e["dur"] for e in events if e.get("cat") == "Node" and e.get("name") == "nz_kernel_time"]
    assert len(durs) == 20 + runs, f"expected {20 + runs} kernel_time events, got {len(durs)}"
    return durs[20:]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--lib", default=LIB)
    p.add_argument("--runs", type=int, default=500)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    rows = []
    print(f"onnxruntime {ort.__version__}, {args.threads} threads, median of {args.runs} runs, kernel_time us")
    print(f"{'input':<18} {'built-in':>9} {'library':>9}")
    for label, dtype, shape, density in CASES:
        x = (rng.random(shape) < density).astype(dtype)
        m = model(dtype, shape)
        builtin = statistics.median(kernel_times(m, x, args.threads, args.runs, None))
        library = statistics.median(kernel_times(m, x, args.threads, args.runs, args.lib))
        rows.append({"input": label, "builtin_us": builtin, "library_us": library})
        print(f"{label:<18} {builtin:>9.1f} {library:>9.1f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"onnxruntime": ort.__version__, "threads": args.threads, "runs": args.runs, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
