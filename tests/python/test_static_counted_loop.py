"""Issue 37: a detector head's per-detection work made static up to the Loop that runs once per
detection (Keypoint R-CNN's heatmaps to keypoints; emit-static's padding/spatial.rs and
counted_loops.rs).

Each model selects rows of `x` [n, 2, 4, 4] with `m` [n] (NonZero, Gather): the selected maps go
through Conv, Relu, MaxPool and a Resize by [1, 1, 2, 2] (each map on its own: padded rows stay
rows). A Loop then runs `len(maps)` times (its trip count read from the maps' Shape), takes map i
from the enclosing graph and appends its per-channel maximum to a list: the original's
`for i in range(len(heatmaps))`. The static model runs that Loop with the count as its trip
count, on the maps cut to the count, and equals the original exactly: the selected rows (padded,
with `rows_count`) and the Loop's list (the original's own data-dependent length)."""

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

N = 6


def loop_model(trips="count"):
    """The Loop's trip count: `len(maps)`; "plus_one", `len(maps) + 1`; or "input", a graph
    input `trips` (both not once per row)."""
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32) * 0.5, "w"),
             numpy_helper.from_array(np.array([0.1, -0.2, 0.3], np.float32), "b"),
             numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales"),
             numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array(1, np.int64), "one_more"),
             numpy_helper.from_array(np.array([1], np.int64), "one"),
             numpy_helper.from_array(np.zeros((0, 3), np.float32), "empty")]
    nodes = [
        helper.make_node("NonZero", ["m"], ["coords"]),
        helper.make_node("Transpose", ["coords"], ["column"], perm=[1, 0]),
        helper.make_node("Squeeze", ["column", "one"], ["index"]),
        helper.make_node("Gather", ["x", "index"], ["rows"], axis=0),
        helper.make_node("Conv", ["rows", "w", "b"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"]),
        helper.make_node("MaxPool", ["relu"], ["pooled"], kernel_shape=[2, 2], strides=[1, 1], pads=[0, 0, 1, 1]),
        helper.make_node("Resize", ["pooled", "", "scales"], ["maps"], mode="linear"),
        helper.make_node("Shape", ["maps"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["count"], axis=0),
        helper.make_node("Loop", ["count" if trips == "count" else "trips", "", "empty"], ["peaks"],
                         body=loop_body()),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [N, 2, 4, 4]),
              helper.make_tensor_value_info("m", TensorProto.BOOL, [N])]
    if trips == "plus_one":
        nodes.insert(-1, helper.make_node("Add", ["count", "one_more"], ["trips"]))
    if trips == "input":
        inputs.append(helper.make_tensor_value_info("trips", TensorProto.INT64, []))
        nodes = [n for n in nodes if "shape" not in list(n.input) + list(n.output)]
    graph = helper.make_graph(
        nodes, "counted_loop", inputs,
        [helper.make_tensor_value_info("rows", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("peaks", TensorProto.FLOAT, None)],
        inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def loop_body():
    """Map i of the enclosing graph's `maps`, its maximum per channel appended to the list."""
    nodes = [
        helper.make_node("Gather", ["maps", "i"], ["map"], axis=0),
        helper.make_node("ReduceMax", ["map"], ["peak"], axes=[1, 2], keepdims=0),
        helper.make_node("Unsqueeze", ["peak", "axes0"], ["row"]),
        helper.make_node("Concat", ["list_in", "row"], ["list_out"], axis=0),
        helper.make_node("Identity", ["cond_in"], ["cond_out"]),
    ]
    return helper.make_graph(
        nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("list_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("list_out", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array([0], np.int64), "axes0")])


def make_static(model):
    with tempfile.TemporaryDirectory(prefix="nz-static-loop-") as work:
        src, out, rep = (os.path.join(work, name) for name in ("in.onnx", "out.onnx", "report.json"))
        onnx.save(model, src)
        done = subprocess.run([str(CLI), "optimize", "--static", "--allow-dynamic", "--report-json", rep,
                               src, out], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with open(rep) as f:
            return onnx.load(out), json.load(f)


def test_the_loop_over_the_selected_maps_equals_the_originals():
    model = loop_model()
    static, report = make_static(model)
    kinds = [r["kind"] for r in report["static"]["rewrites"]]
    assert "counted-loop" in kinds and "fixed-capacity" in kinds, kinds
    assert not any(n.op_type == "NonZero" for n in static.graph.node)
    assert not unread_nodes(static)
    # What stays dynamic: the maps cut to the count for the Loop's body, and so the Loop.
    left = {(n["op"], n["reason"]) for n in report["left_nodes"]}
    assert left <= {("Slice", "value-dependent-shape"), ("Loop", "value-dependent-shape")}, left
    assert [o.name for o in static.graph.output] == ["rows", "peaks", "rows_count"]
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(1)
    masks = [np.zeros(N, bool), np.ones(N, bool), np.eye(1, N, 2, dtype=bool)[0]]
    masks += [rng.random(N) < 0.5 for _ in range(12)]
    for mask in masks:
        feeds = {"x": rng.standard_normal((N, 2, 4, 4)).astype(np.float32), "m": mask}
        rows, peaks = original.run(None, feeds)
        for _ in range(2):  # a session's later runs too
            got_rows, got_peaks, count = made.run(None, feeds)
            assert count.dtype == np.int64 and int(count) == len(rows) == mask.sum()
            assert_exact(got_rows[:count], rows, "rows")
            assert (got_rows[count:] == 0).all()
            assert_exact(got_peaks, peaks, f"peaks, mask {mask.astype(int)}")


@pytest.mark.parametrize("trips,why", [
    ("plus_one", "Shape <Shape -> shape> reads the padded maps"),
    ("input", "the body of Loop -> peaks reads the padded maps, and its trip count is not this selection's count"),
])
def test_a_loop_not_once_per_row_stays_dynamic_named(trips, why):
    _, report = make_static(loop_model(trips))
    left = [n for n in report["left_nodes"] if n["op"] == "NonZero"]
    assert len(left) == 1 and left[0]["reason"] == "padding-unsafe", report["left_nodes"]
    assert why in left[0]["detail"], left[0]
