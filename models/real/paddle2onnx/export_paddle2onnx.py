"""Exports Paddle masking patterns with paddle2onnx (issue 25, item 4), exactly as paddle2onnx
writes them through `paddle.onnx.export` (no shape inference, no clean-up of ours; paddle2onnx's
own default optimisation runs, as for any user): paddle.masked_select, paddle.nonzero read by
paddle.gather and paddle.gather_nd, and x[mask]. Dynamic dims are InputSpec's None, which
paddle2onnx names each apart (DynamicDimension.N). CI never runs this: the .onnx files are committed.

    python3 -m venv /tmp/venv-paddle && /tmp/venv-paddle/bin/pip install -r models/real/paddle2onnx/requirements.txt
    /tmp/venv-paddle/bin/python models/real/paddle2onnx/export_paddle2onnx.py [NAME...]

Pinned (requirements.txt): paddlepaddle 3.3.1, paddle2onnx 2.1.0 (with onnx 1.17.0, onnxoptimizer
0.3.13, polygraphy 0.53.6, which paddle2onnx folds constants with, onnxruntime 1.32.0, protobuf
7.36.2, numpy 2.4.6 as pip resolved them, and packaging, which paddle2onnx imports without
declaring it). Opset 11 (`paddle.onnx.export` defaults to 9; its docs call 9-11 stable).
Writes `<name>_paddle2onnx.onnx` and manifest.json (see models/real/patternlib.py).
"""

import os
import shutil
import sys
import tempfile

import paddle
import paddle2onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import patternlib  # noqa: E402

OPSET = 11


class Fn1(paddle.nn.Layer):
    """A function of one tensor as a Layer (to_static wants named arguments, not *args)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, c):
        return self.fn(c)


class Fn2(Fn1):
    def forward(self, x, m):
        return self.fn(x, m)


def nonzero_gather(x, m):
    return paddle.gather(x, paddle.nonzero(m).flatten(), axis=0)


def nonzero_gather_nd(x, m):
    return paddle.gather_nd(x, paddle.nonzero(m))


F32, BOOL = "float32", "bool"

# name: (function, description, inputs as (name, shape, dtype, values), sizes)
MODELS = {
    "masked_select": (
        paddle.masked_select,
        "paddle.masked_select(x, m): x [n, k], m [n, k], 1-D result",
        [("x", ["n", "k"], F32, "normal"), ("m", ["n", "k"], BOOL, "mask")],
        [{"n": 4, "k": 5}, {"n": 6, "k": 3}]),
    "nonzero_gather": (
        nonzero_gather,
        "paddle.gather(x, paddle.nonzero(m).flatten(), axis=0): rows of x [n, 3] where m [n]",
        [("x", ["n", 3], F32, "normal"), ("m", ["n"], BOOL, "mask")],
        [{"n": 7}, {"n": 12}]),
    "nonzero_gather_nd": (
        nonzero_gather_nd,
        "paddle.gather_nd(x, paddle.nonzero(m)): x [n, k, 3], m [n, k]",
        [("x", ["n", "k", 3], F32, "normal"), ("m", ["n", "k"], BOOL, "mask")],
        [{"n": 4, "k": 5}, {"n": 6, "k": 3}]),
    "x_mask": (
        lambda x, m: x[m],
        "x[m]: rows of x [n, 3] where m [n]",
        [("x", ["n", 3], F32, "normal"), ("m", ["n"], BOOL, "mask")],
        [{"n": 7}, {"n": 12}]),
    "x_mask_2d": (
        lambda x, m: x[m],
        "x[m] with a 2-D mask: x [n, k, 3], m [n, k]",
        [("x", ["n", "k", 3], F32, "normal"), ("m", ["n", "k"], BOOL, "mask")],
        [{"n": 4, "k": 5}, {"n": 6, "k": 3}]),
    "nonzero": (
        paddle.nonzero,
        "paddle.nonzero(c): the coordinates themselves, [nnz, 2] int64",
        [("c", ["n", "k"], BOOL, "mask")],
        [{"n": 4, "k": 5}, {"n": 6, "k": 3}]),
}


def main():
    names = sys.argv[1:] or list(MODELS)
    versions = {"paddlepaddle": paddle.__version__, "paddle2onnx": paddle2onnx.__version__}
    entries = []
    for name in names:
        fn, text, inputs, sizes = MODELS[name]
        specs = [paddle.static.InputSpec([s if isinstance(s, int) else None for s in shape], dtype, n)
                 for n, shape, dtype, _ in inputs]
        manifest_inputs = [{"name": n, "shape": shape, "dtype": dtype, "values": values}
                           for n, shape, dtype, values in inputs]

        def export(path, fn=fn, specs=specs):
            with tempfile.TemporaryDirectory() as tmp:
                layer = (Fn1 if len(specs) == 1 else Fn2)(fn)
                paddle.onnx.export(layer, os.path.join(tmp, "model"), input_spec=specs, opset_version=OPSET)
                shutil.copyfile(os.path.join(tmp, "model.onnx"), path)

        entries.append(patternlib.record(HERE, name, "paddle2onnx", versions, {"pattern": text},
                                         manifest_inputs, sizes, export))
    patternlib.write_manifest(HERE, entries)


if __name__ == "__main__":
    main()
