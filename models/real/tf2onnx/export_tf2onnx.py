"""Exports TensorFlow masking patterns with tf2onnx (issue 25, item 4), exactly as tf2onnx writes
them (no shape inference, no clean-up): tf.boolean_mask along axis 0 and 1, tf.where(cond)
coordinates read by tf.gather_nd, and reductions of masked values. Every dynamic dim is left
to tf2onnx, which names each one apart (unk__N). CI never runs this: the .onnx files are committed.

    python3 -m venv /tmp/venv-tf && /tmp/venv-tf/bin/pip install -r models/real/tf2onnx/requirements.txt
    /tmp/venv-tf/bin/python models/real/tf2onnx/export_tf2onnx.py [NAME...]

Pinned (requirements.txt): tensorflow-cpu 2.21.0, tf2onnx 1.17.0 (with keras 3.15.1, onnx 1.23.2,
protobuf 7.36.2, numpy 2.4.6 as pip resolved them). tf2onnx's default opset. Writes
`<name>_tf2onnx.onnx` and manifest.json (see models/real/patternlib.py).
"""

import os
import sys

import tensorflow as tf
import tf2onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import patternlib  # noqa: E402


def spec(name, shape, dtype):
    return tf.TensorSpec([s if isinstance(s, int) else None for s in shape], dtype, name=name)


def inp(name, shape, dtype, values):
    return {"name": name, "shape": shape, "dtype": dtype, "values": values}


F32, BOOL = ("float32", tf.float32), ("bool", tf.bool)

# name: (function, description, inputs as (name, shape, (dtype), values), sizes)
MODELS = {
    "boolean_mask": (
        lambda x, m: tf.boolean_mask(x, m),
        "tf.boolean_mask(x, m): rows of x [n, 3] where m [n]",
        [("x", ["n", 3], F32, "normal"), ("m", ["n"], BOOL, "mask")],
        [{"n": 7}, {"n": 12}]),
    "boolean_mask_2d": (
        lambda x, m: tf.boolean_mask(x, m),
        "tf.boolean_mask(x, m) with a 2-D mask: x [n, k, 3], m [n, k]",
        [("x", ["n", "k", 3], F32, "normal"), ("m", ["n", "k"], BOOL, "mask")],
        [{"n": 4, "k": 5}, {"n": 6, "k": 3}]),
    "boolean_mask_axis1": (
        lambda x, m: tf.boolean_mask(x, m, axis=1),
        "tf.boolean_mask(x, m, axis=1): x [b, n, 3], m [n]",
        [("x", ["b", "n", 3], F32, "normal"), ("m", ["n"], BOOL, "mask")],
        [{"b": 2, "n": 7}, {"b": 3, "n": 10}]),
    "where_gather_nd": (
        lambda x, c: tf.gather_nd(x, tf.where(c)),
        "tf.gather_nd(x, tf.where(c)): coordinates of c [n, k] read from x [n, k, 3]",
        [("x", ["n", "k", 3], F32, "normal"), ("c", ["n", "k"], BOOL, "mask")],
        [{"n": 4, "k": 5}, {"n": 6, "k": 3}]),
    "where_coordinates": (
        lambda c: tf.where(c),
        "tf.where(c): the coordinates themselves, [nnz, 2] int64",
        [("c", ["n", "k"], BOOL, "mask")],
        [{"n": 4, "k": 5}, {"n": 6, "k": 3}]),
    "masked_reduce_sum": (
        lambda x, m: tf.reduce_sum(tf.boolean_mask(x, m), axis=0),
        "tf.reduce_sum(tf.boolean_mask(x, m), axis=0): sum of the selected rows of x [n, 3]",
        [("x", ["n", 3], F32, "normal"), ("m", ["n"], BOOL, "mask")],
        [{"n": 7}, {"n": 12}]),
    "masked_count_mean": (
        lambda x, m: (tf.reduce_mean(tf.boolean_mask(x, m)), tf.shape(tf.where(m))[0]),
        "tf.reduce_mean of the selected values of x [n, k] and the count of tf.where(m)",
        [("x", ["n", "k"], F32, "normal"), ("m", ["n", "k"], BOOL, "mask")],
        [{"n": 4, "k": 5}, {"n": 6, "k": 3}]),
}


def main():
    names = sys.argv[1:] or list(MODELS)
    versions = {"tensorflow": tf.__version__, "tf2onnx": tf2onnx.__version__}
    entries = []
    for name in names:
        fn, text, inputs, sizes = MODELS[name]
        signature = [spec(n, shape, dtype[1]) for n, shape, dtype, _ in inputs]
        manifest_inputs = [inp(n, shape, dtype[0], values) for n, shape, dtype, values in inputs]

        def export(path, fn=fn, signature=signature):
            tf2onnx.convert.from_function(tf.function(fn, input_signature=signature),
                                          input_signature=signature, output_path=path)

        entries.append(patternlib.record(HERE, name, "tf2onnx", versions, {"pattern": text},
                                         manifest_inputs, sizes, export))
    patternlib.write_manifest(HERE, entries)


if __name__ == "__main__":
    main()
