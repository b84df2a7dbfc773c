"""Issue 37: Mask R-CNN's `mask_probs[arange(N), labels]` on padded detections (emit-static's
padding/picks.rs, index_gather.rs), as TorchScript writes it.

Each model selects rows with `m` [n] (NonZero, Gather): maps `x[m]` [N, K, 3, 3] and labels
`lab[m]` [N]. The maps are flattened to [N * K, 9] (padding/spatial.rs: the count times K) and
gathered at `labels + arange(N) * K`, `N` read from the maps' Shape (a Range made from it: the
capacity's, padded alike); the picked maps are reshaped to [-1, 3, 3], cut to `len(labels)`
(a Slice whose end is read from another tensor of the selection) and padded by one pixel.
Labels may be negative (read from the end, as the original does: the static form counts them
from the data's count, not the capacity). The static model must equal the original exactly:
`y` cut to `y_count`, and +0 past it."""

import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import CLI, assert_exact, unread_nodes

N, K = 7, 4


def picks_model():
    ints = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    inits = [ints("one", [1]), ints("zero", 0), ints("start", 0), ints("step", 1), ints("k", K),
             ints("map", [-1, 3, 3]), ints("from", [0]), ints("axis0", [0]), ints("pads", [0, 0, 1, 1, 0, 0, 1, 1])]
    nodes = [
        helper.make_node("NonZero", ["m"], ["coords"]),
        helper.make_node("Transpose", ["coords"], ["column"], perm=[1, 0]),
        helper.make_node("Squeeze", ["column", "one"], ["index"]),
        helper.make_node("Gather", ["x", "index"], ["maps"], axis=0),
        helper.make_node("Gather", ["lab", "index"], ["labels"], axis=0),
        helper.make_node("Flatten", ["maps"], ["flat"], axis=2),
        helper.make_node("Shape", ["maps"], ["maps_shape"]),
        helper.make_node("Gather", ["maps_shape", "zero"], ["n"], axis=0),
        helper.make_node("Range", ["start", "n", "step"], ["rows"]),
        helper.make_node("Mul", ["rows", "k"], ["base"]),
        helper.make_node("Add", ["labels", "base"], ["at"]),
        helper.make_node("Gather", ["flat", "at"], ["picked"], axis=0),
        helper.make_node("Reshape", ["picked", "map"], ["picked_maps"]),
        helper.make_node("Unsqueeze", ["picked_maps", "one"], ["one_channel"]),
        helper.make_node("Shape", ["labels"], ["labels_shape"]),
        helper.make_node("Gather", ["labels_shape", "zero"], ["len"], axis=0),
        helper.make_node("Unsqueeze", ["len", "axis0"], ["end"]),
        helper.make_node("Slice", ["one_channel", "from", "end", "axis0"], ["cut"]),
        helper.make_node("Pad", ["cut", "pads"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "row_picks",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, K, 3, 3]),
         helper.make_tensor_value_info("lab", TensorProto.INT64, [N]),
         helper.make_tensor_value_info("m", TensorProto.BOOL, [N])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def make_static(model):
    with tempfile.TemporaryDirectory(prefix="nz-static-picks-") as work:
        src, out, rep = (os.path.join(work, name) for name in ("in.onnx", "out.onnx", "report.json"))
        onnx.save(model, src)
        done = subprocess.run([str(CLI), "optimize", "--static", "--report-json", rep, src, out],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with open(rep) as f:
            return onnx.load(out), json.load(f)


@pytest.mark.parametrize("labels", ["in_range", "negative"])
def test_maps_picked_at_their_labels_equal_the_originals(labels):
    model = picks_model()
    static, report = make_static(model)
    assert report["left_nodes"] == [], report["left_nodes"]
    assert not any(n.op_type == "NonZero" for n in static.graph.node) and not unread_nodes(static)
    assert [o.name for o in static.graph.output] == ["y", "y_count"]
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(3 if labels == "negative" else 4)
    masks = [np.zeros(N, bool), np.ones(N, bool)] + [rng.random(N) < 0.5 for _ in range(16)]
    for mask in masks:
        low = -K if labels == "negative" else 0
        feeds = {"x": rng.standard_normal((N, K, 3, 3)).astype(np.float32),
                 "lab": rng.integers(low, K, N).astype(np.int64), "m": mask}
        # -K reads the last map of the row before (row 0: the last of the selected rows'):
        # the original reads from its own count, and so must the static form.
        expected = original.run(None, feeds)[0]
        for _ in range(2):
            y, count = made.run(None, feeds)
            assert int(count) == mask.sum() == len(expected)
            assert_exact(y[:count], expected, f"mask {mask.astype(int)}, labels {feeds['lab']}")
            assert (y[count:] == 0).all() and not np.signbit(y[count:]).any()
