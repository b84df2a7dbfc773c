"""Side-by-side benchmark: the same NonZero model and input, run by ONNX Runtime with its built-in
kernel and with libnonzero_ort.so, in one process, interleaved, medians. numpy.nonzero and the
bandwidth floor (copy the input into a preallocated buffer + write the output's bytes once) are
timed in the same loop. Absolute times drift on shared machines; the ratios are the result.

    scripts/bench [compare] [--threads N] [--quick]   # writes docs/performance-table.md, .json, .png
"""

import argparse
import json
import os
import platform
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.environ.get("NONZERO_ORT_LIB", os.path.join(ROOT, "target/release/libnonzero_ort.so"))
ELEM = {np.float32: TensorProto.FLOAT, np.bool_: TensorProto.BOOL, np.int64: TensorProto.INT64, np.uint8: TensorProto.UINT8}


def model(dtype, shape):
    x = helper.make_tensor_value_info("x", ELEM[dtype], list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    graph = helper.make_graph([helper.make_node("NonZero", ["x"], ["y"])], "nonzero", [x], [y])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def session(m, threads, library):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.log_severity_level = 3
    if library:
        so.register_custom_ops_library(LIB)
    return ort.InferenceSession(m, so, providers=["CPUExecutionProvider"])


def make_input(dtype, shape, density, rng):
    mask = rng.random(shape, dtype=np.float32) < density
    if dtype is np.bool_:
        return mask
    x = mask.astype(dtype)
    if dtype is np.float32:
        x[~mask] = -0.0  # negative zero is zero
    return x


def measure(case, threads, repeats, rng):
    dtype, shape, density = case["dtype"], case["shape"], case["density"]
    x = make_input(dtype, shape, density, rng)
    m = model(dtype, shape)
    builtin, ours = session(m, threads, False), session(m, threads, True)
    (y_ours,) = ours.run(None, {"x": x})
    (y_builtin,) = builtin.run(None, {"x": x})
    if x.ndim > 0:
        assert np.array_equal(y_ours, y_builtin), "results differ: the benchmark would be meaningless"
    copy = np.empty_like(x)
    out = np.empty(y_ours.shape, np.int64)

    def floor():
        np.copyto(copy, x)
        out.fill(1)

    runners = {
        "ours": lambda: ours.run(None, {"x": x}),
        "builtin": lambda: builtin.run(None, {"x": x}),
        "numpy": lambda: np.nonzero(x),
        "floor": floor,
    }
    times = {k: [] for k in runners}
    for _ in range(repeats):  # interleaved: drift hits every contender alike
        for name, fn in runners.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    med = {k: float(np.median(v)) for k, v in times.items()}
    return {
        "case": case["name"], "elements": int(x.size), "density": density, "nnz": int(y_ours.shape[1]),
        "input_bytes": int(x.nbytes), "ms": {k: v * 1e3 for k, v in med.items()},
        "speedup_vs_builtin": med["builtin"] / med["ours"], "speedup_vs_numpy": med["numpy"] / med["ours"],
        "ours_over_floor": med["ours"] / med["floor"],
    }


CASES = [
    dict(name="float32 16M 1%", dtype=np.float32, shape=(16 << 20,), density=0.01),
    dict(name="float32 16M 50%", dtype=np.float32, shape=(4096, 4096), density=0.5),
    dict(name="float32 16M 99%", dtype=np.float32, shape=(16 << 20,), density=0.99),
    dict(name="bool 64M 50%", dtype=np.bool_, shape=(8192, 8192), density=0.5),
    dict(name="int64 4M 50%", dtype=np.int64, shape=(4 << 20,), density=0.5),
    dict(name="float32 1K 50%", dtype=np.float32, shape=(1024,), density=0.5),
    dict(name="float32 64K 50%", dtype=np.float32, shape=(256, 256), density=0.5),
    dict(name="float32 4M rank 1", dtype=np.float32, shape=(4 << 20,), density=0.5),
    dict(name="float32 4M rank 2", dtype=np.float32, shape=(2048, 2048), density=0.5),
    dict(name="float32 4M rank 3", dtype=np.float32, shape=(128, 128, 256), density=0.5),
    dict(name="float32 4M rank 4", dtype=np.float32, shape=(16, 16, 128, 128), density=0.5),
    dict(name="float32 4M rank 5", dtype=np.float32, shape=(8, 8, 8, 64, 128), density=0.5),
]
SWEEP = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="fewer repeats, smaller sweep")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs"))
    args = ap.parse_args()
    repeats = 3 if args.quick else args.repeats
    rng = np.random.default_rng(0)
    rows = [measure(c, args.threads, repeats, rng) for c in CASES]
    sweep = [
        measure(dict(name=f"sweep {d:g}", dtype=np.float32, shape=(16 << 20,), density=d), args.threads, repeats, rng)
        for d in (SWEEP[::3] if args.quick else SWEEP)
    ]
    machine = f"{platform.machine()}, {os.cpu_count()} cores, {platform.processor() or platform.platform()}"
    header = (
        f"onnxruntime {ort.__version__}, intra_op_num_threads={args.threads}, {repeats} interleaved repeats, "
        f"medians; machine: {machine}\n\n"
        "| case | built-in ms | ours ms | numpy ms | floor ms | vs built-in | vs numpy | ours / floor |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = [
        f"| {r['case']} | {r['ms']['builtin']:.2f} | {r['ms']['ours']:.2f} | {r['ms']['numpy']:.2f} | "
        f"{r['ms']['floor']:.2f} | {r['speedup_vs_builtin']:.1f}x | {r['speedup_vs_numpy']:.1f}x | {r['ours_over_floor']:.2f} |"
        for r in rows
    ]
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "performance-table.md"), "w") as f:
        f.write(header + "\n".join(lines) + "\n")
    with open(os.path.join(args.out, "performance.json"), "w") as f:
        json.dump({"cases": rows, "sweep": sweep, "threads": args.threads, "onnxruntime": ort.__version__}, f, indent=1)
    print(header + "\n".join(lines))
    plot(sweep, os.path.join(args.out, "performance.png"), args.threads)


def plot(sweep, path, threads):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dens = [r["density"] * 100 for r in sweep]
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label, style in [("ours", "nonzero (this library)", "o-"), ("builtin", "ONNX Runtime built-in", "s-"),
                              ("numpy", "numpy.nonzero", "^--"), ("floor", "bandwidth floor", "k:")]:
        gbs = [r["input_bytes"] / (r["ms"][key] / 1e3) / 1e9 for r in sweep]
        ax.plot(dens, gbs, style, label=label)
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("non-zero elements (%)")
    ax.set_ylabel("input throughput (GB/s)")
    ax.set_title(f"NonZero, float32, 16M elements, {threads} threads, onnxruntime {ort.__version__}")
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
