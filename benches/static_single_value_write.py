"""`x[mask] = v` of a single value, made static (issue 38; crates/emit-static/src/writes.rs): the
form since 2026-12-07, `Where(mask, Reshape(v, [1]), x)`, against the one it replaced (v
gathered at `(CumSum(mask) - 1) mod 1`, written here as the emitter wrote it) and against the
dynamic original (NonZero, ScatterND) on ONNX Runtime's built-in kernels. Hand-made
`mask_assign` models (tests/static/handmade.py), half the mask true, one process, the three
interleaved, 1 thread; the median per form and its ratio to the new form, with
`session.intra_op.allow_spinning` on and off. Every form's output is checked against the
original's first, exactly.

    .venv/bin/python benches/static_single_value_write.py [target/release/nonzero] [--runs N]
"""

import argparse
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "static"))
import handmade  # noqa: E402

SHAPES = [(8, 320), (256, 256), (1024, 1024)]


def gathered_form(shape):
    """The form before 2026-12-07: the running count, then v gathered at (count - 1) mod 1."""
    const = {"numel": np.array([int(np.prod(shape))], np.int64), "zero": np.array(0, np.int32),
             "one_dims": np.array([1], np.int64), "one": np.array(1, np.int32), "dims": np.array(shape, np.int64)}
    nodes = [helper.make_node("Reshape", ["mask", "numel"], ["flat"]),
             helper.make_node("Cast", ["flat"], ["ones"], to=TensorProto.INT32),
             helper.make_node("CumSum", ["ones", "zero"], ["rank"]),
             helper.make_node("Expand", ["v", "one_dims"], ["pattern"]),
             helper.make_node("Sub", ["rank", "one"], ["before"]),
             helper.make_node("Mod", ["before", "one"], ["at"]),
             helper.make_node("Gather", ["pattern", "at"], ["values"]),
             helper.make_node("Reshape", ["values", "dims"], ["spread"]),
             helper.make_node("Where", ["mask", "spread", "x"], ["y"])]
    graph = helper.make_graph(
        nodes, "gathered",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape)),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, list(shape)),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
        initializer=[numpy_helper.from_array(a, n) for n, a in const.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def session(model, spinning):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.add_session_config_entry("session.intra_op.allow_spinning", spinning)
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cli", nargs="?", default=str(ROOT / "target" / "release" / "nonzero"))
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    print("| Shape | Spinning | original (NonZero, ScatterND) | gathered (before) | Where (now) | original / now | before / now |")
    print("|---|---|---|---|---|---|---|")
    for shape in SHAPES:
        original = handmade.mask_assign(shape)
        with tempfile.TemporaryDirectory() as work:
            src, out = pathlib.Path(work) / "in.onnx", pathlib.Path(work) / "out.onnx"
            onnx.save(original, str(src))
            subprocess.run([args.cli, "optimize", "--static", "--input-shape", f"x={shape[0]},{shape[1]}",
                            "--input-shape", f"mask={shape[0]},{shape[1]}", "--input-shape", "v=", str(src), str(out)],
                           check=True, capture_output=True)
            now = onnx.load(str(out))
        assert sorted({n.op_type for n in now.graph.node}) == ["Reshape", "Where"], "the CLI wrote another form"
        rng = np.random.default_rng(0)
        feeds = {"x": rng.standard_normal(shape).astype(np.float32), "mask": rng.random(shape) < 0.5,
                 "v": np.array(2.5, np.float32)}
        for spinning in ("1", "0"):
            forms = {"original": session(original, spinning), "before": session(gathered_form(shape), spinning),
                     "now": session(now, spinning)}
            want = forms["original"].run(None, feeds)[0]
            for name, sess in forms.items():
                assert np.array_equal(sess.run(None, feeds)[0], want), name
            repeats = max(1, int(2e6 // np.prod(shape)))
            times = {name: [] for name in forms}
            for _ in range(args.runs):
                for name, sess in forms.items():
                    start = time.perf_counter()
                    for _ in range(repeats):
                        sess.run(None, feeds)
                    times[name].append((time.perf_counter() - start) / repeats)
            med = {name: float(np.median(t)) for name, t in times.items()}
            print(f"| {shape[0]}x{shape[1]} | {'on' if spinning == '1' else 'off'} | {med['original'] * 1e6:.1f} us | "
                  f"{med['before'] * 1e6:.1f} us | {med['now'] * 1e6:.1f} us | {med['original'] / med['now']:.2f} | "
                  f"{med['before'] / med['now']:.2f} |")


if __name__ == "__main__":
    main()
