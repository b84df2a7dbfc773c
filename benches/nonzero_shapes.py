"""NonZero alone, the library against ONNX Runtime's built-in kernel, on bool masks of one
element count (1M) in different shapes, at 1% and 50% density: where the library's speed depends
on the shape. One process, 2 threads, spinning off, medians of 15 after 3 warm-up runs.

    .venv/bin/python benches/nonzero_shapes.py
prints a Markdown table (docs/performance.md, "Short innermost rows and small slices")."""

import os
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto as T, helper

import ortbench

SHAPES = [(1 << 20,), (1 << 10, 1 << 10), (4, 1 << 18), (1 << 16, 16), (1 << 18, 4), (1 << 19, 2)]


def model(shape, path):
    g = helper.make_graph([helper.make_node("NonZero", ["m"], ["y"])], "nonzero",
                          [helper.make_tensor_value_info("m", T.BOOL, list(shape))],
                          [helper.make_tensor_value_info("y", T.INT64, None)])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), path)


def median_ms(session, feeds, repeats=15):
    for _ in range(3):
        session.run(None, feeds)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def main():
    rng = np.random.default_rng(0)
    lines = ["| shape | density | built-in ms | library ms | built-in / library |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as work:
        for shape in SHAPES:
            path = os.path.join(work, "nonzero.onnx")
            model(shape, path)
            sessions = {lib: ortbench.session(path, 2, lib, False) for lib in (False, True)}
            for density in (0.01, 0.5):
                feeds = {"m": rng.random(shape) < density}
                want = sessions[False].run(None, feeds)[0]
                assert np.array_equal(sessions[True].run(None, feeds)[0], want)
                builtin, library = (median_ms(sessions[lib], feeds) for lib in (False, True))
                lines.append(f"| {list(shape)} | {density:.0%} | {builtin:.3f} | {library:.3f} | {builtin / library:.2f}x |")
                print(lines[-1], flush=True)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
