"""NonZero on a real GPU, in one process: the library's wgpu path through ONNX Runtime against
PyTorch's and CuPy's CUDA kernels, ONNX Runtime's own CPU kernel, the library's CPU kernel and
numpy. For a machine with an NVIDIA GPU, a Vulkan driver and torch with CUDA; CI has none.

Two comparisons, each timed interleaved in this process, medians of --repeats:
- host in, host out (what an ONNX Runtime user gets): ORT builtin, ours on the CPU, ours on the
  GPU (`custom_op.NonZero.device = gpu`: upload, kernel, read-back), torch
  (`.cuda()`, `nonzero().T`, `.cpu()`), numpy;
- on the device: torch.nonzero and cupy.nonzero on a resident tensor, against a device-to-device
  copy of the same bytes (the floor). The wgpu kernel's own device figure is
  crates/gpu-kernel/benches/gpu.rs, against its own copy: compare the two ratios.
Every result is checked equal to numpy's before anything is timed.

    python3 benches/gpu_compare.py --lib target/release/libnonzero_ort.so [--out DIR] [--shapes 1048576,4096x4096] [--quick]
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ELEM = {"float32": TensorProto.FLOAT, "bool": TensorProto.BOOL, "int64": TensorProto.INT64}


def model(dtype, shape):
    x = helper.make_tensor_value_info("x", ELEM[dtype], list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    graph = helper.make_graph([helper.make_node("NonZero", ["x"], ["y"], name="nz")], "g", [x], [y])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def session(m, lib, device, spinning):
    so = ort.SessionOptions()
    so.log_severity_level = 2  # the library's device log lines are warnings
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    if lib:
        so.register_custom_ops_library(lib)
        so.add_session_config_entry("custom_op.NonZero.device", device)
    return ort.InferenceSession(m, so, providers=["CPUExecutionProvider"])


def stderr_of(fn):
    """Runs fn with file descriptor 2 sent to a file; returns (fn's result, what it wrote)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try:
            result = fn()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        return result, f.read().decode(errors="replace")


def make_input(dtype, shape, density, rng):
    mask = rng.random(shape, dtype=np.float32) < density
    if dtype == "bool":
        return mask
    x = mask.astype(dtype)
    if dtype == "float32":
        x[~mask] = -0.0  # negative zero is zero
    return x


def median_ms(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def interleaved(timers, repeats):
    """Each timer once per round, rounds repeated: drift hits all of them alike."""
    samples = {name: [] for name in timers}
    for _ in range(repeats):
        for name, fn in timers.items():
            start = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(v) * 1e3 for name, v in samples.items()}


def cases(shapes):
    for shape in shapes:
        for dtype in ("float32", "bool"):
            for density in (0.5, 0.01):
                yield dtype, shape, density


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(ROOT, "target/release/libnonzero_ort.so"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--shapes", default="1048576,4096x4096,8192x8192",
                    help="comma-separated shapes, dimensions joined by x (--quick: 65536,256x256)")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()

    import torch

    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    try:
        import cupy
    except ImportError:
        cupy = None
    env = {
        "onnxruntime": ort.__version__,
        "torch": torch.__version__,
        "torch device": torch.cuda.get_device_name(0) if cuda else "cpu (no CUDA: a dry run)",
        "cupy": cupy.__version__ if cupy is not None and cuda else None,
        "cpu threads": os.cpu_count(),
    }
    print(json.dumps(env))
    os.environ["NONZERO_ORT_LOG_DEVICE"] = "1"
    rng = np.random.default_rng(0)
    rows = []
    spec = "65536,256x256" if args.quick else args.shapes
    shapes = [tuple(int(d) for d in s.split("x")) for s in spec.split(",")]
    for dtype, shape, density in cases(shapes):
        x = make_input(dtype, shape, density, rng)
        want = np.array(np.nonzero(x), dtype=np.int64)
        m = model(dtype, shape)
        sessions = {
            "ort_builtin": session(m, None, "cpu", True),
            "ort_builtin_nospin": session(m, None, "cpu", False),
            "ours_cpu": session(m, args.lib, "cpu", True),
            "ours_gpu": session(m, args.lib, "gpu", True),
        }
        (got,), log = stderr_of(lambda: sessions["ours_gpu"].run(None, {"x": x}))
        if "ran on gpu (" not in log:
            sys.exit(f"the GPU session did not run on the GPU; its log:\n{log}")
        adapter = log.split("ran on gpu (", 1)[1].split(")", 1)[0]
        assert got.dtype == np.int64 and np.array_equal(got, want), "ours_gpu differs from numpy"
        for name in ("ort_builtin", "ort_builtin_nospin", "ours_cpu"):
            (got,) = sessions[name].run(None, {"x": x})
            assert np.array_equal(got, want), f"{name} differs from numpy"

        def torch_host():
            return torch.from_numpy(x).to(dev).nonzero().T.contiguous().cpu().numpy()

        assert np.array_equal(torch_host(), want), "torch differs from numpy"
        resident = torch.from_numpy(x).to(dev)
        copy_dst = torch.empty_like(resident)
        sync = torch.cuda.synchronize if cuda else (lambda: None)

        def torch_device():
            resident.nonzero()
            sync()

        def torch_copy():
            copy_dst.copy_(resident)
            sync()

        host = {name: (lambda s=s: s.run(None, {"x": x})) for name, s in sessions.items()}
        host["torch_host"] = torch_host
        host["numpy"] = lambda: np.nonzero(x)
        device = {"torch_device": torch_device, "device_copy": torch_copy}
        if cupy is not None and cuda:
            cx = cupy.asarray(x)
            got = cupy.asnumpy(cupy.stack(cupy.nonzero(cx))).astype(np.int64)
            assert np.array_equal(got, want), "cupy differs from numpy"

            def cupy_device():
                cupy.nonzero(cx)
                cupy.cuda.runtime.deviceSynchronize()

            device["cupy_device"] = cupy_device
        for fn in list(host.values()) + list(device.values()):
            fn()  # warm-up
        t = interleaved(host, args.repeats)
        t.update(interleaved(device, args.repeats * 3))
        row = {"dtype": dtype, "shape": list(shape), "density": density, "nnz": int(want.shape[1]),
               "adapter": adapter, "ms": t}
        rows.append(row)
        print(json.dumps(row), flush=True)

    lines = [
        f"ONNX Runtime {env['onnxruntime']}, torch {env['torch']} on {env['torch device']}, "
        f"cupy {env['cupy']}, {env['cpu threads']} CPU threads; our GPU path on {rows[0]['adapter']}. "
        f"Medians of {args.repeats} interleaved rounds (device-resident timers: {args.repeats * 3}).",
        "",
        "| input | density | ORT builtin ms (spin on / off) | ours CPU ms | ours GPU ms | torch CUDA host-to-host ms "
        "| numpy ms | ours GPU / ORT builtin | ours GPU / torch host | torch.nonzero on device / copy |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        t = r["ms"]
        lines.append(
            f"| {r['dtype']} {'x'.join(map(str, r['shape']))} | {r['density']} "
            f"| {t['ort_builtin']:.2f} / {t['ort_builtin_nospin']:.2f} | {t['ours_cpu']:.2f} "
            f"| {t['ours_gpu']:.2f} | {t['torch_host']:.2f} | {t['numpy']:.2f} "
            f"| {t['ours_gpu'] / t['ort_builtin']:.2f}x | {t['ours_gpu'] / t['torch_host']:.2f}x "
            f"| {t['torch_device'] / t['device_copy']:.1f}x |"
        )
    table = "\n".join(lines)
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "gpu_compare.json"), "w") as f:
            json.dump({"env": env, "rows": rows}, f, indent=1)
        with open(os.path.join(args.out, "gpu_compare.md"), "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
