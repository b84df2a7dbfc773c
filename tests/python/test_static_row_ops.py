"""Issue 37, item 2: row-wise work on padded rows that VITS's spline writes (emit-static's
padding/steps.rs, picks.rs, spatial.rs): a float Div by padded rows (the divisor's padding read
as 1, so that no padded row divides by zero), GatherElements of rows and indices padded alike
along another axis (the indices' padding read as 0), and a Pad of another axis.

Each model selects rows with `m` [n] (NonZero, Transpose, GatherND) from `x`, `y` [n, 3] and
the int64 `bins` [n, 3] (in [-3, 3): negative bins count from the end, as in the original):
`x[m] / y[m]`, `gather(x[m], 1, bins[m])` and `pad(x[m], (1, 0))` are the outputs. The static
model must equal the original exactly, cut to the counts, with +0 past them; `y` has zeros,
selected or not."""

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


def row_ops_model(opset):
    inits = [numpy_helper.from_array(np.array([0, 1, 0, 0], np.int64), "pads")]
    nodes = [
        helper.make_node("NonZero", ["m"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "t"], ["xs"]),
        helper.make_node("GatherND", ["y", "t"], ["ys"]),
        helper.make_node("GatherND", ["bins", "t"], ["bs"]),
        helper.make_node("Div", ["xs", "ys"], ["ratio"]),
        helper.make_node("GatherElements", ["xs", "bs"], ["picked"], axis=1),
        helper.make_node("Pad", ["xs", "pads"], ["padded"]),
    ]
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [N, 3]) for name in ("x", "y")]
    inputs += [helper.make_tensor_value_info("bins", TensorProto.INT64, [N, 3]),
               helper.make_tensor_value_info("m", TensorProto.BOOL, [N])]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("ratio", "picked", "padded")]
    graph = helper.make_graph(nodes, "row_ops", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def make_static(model):
    with tempfile.TemporaryDirectory(prefix="nz-static-rowops-") as work:
        src, out, rep = (os.path.join(work, name) for name in ("in.onnx", "out.onnx", "report.json"))
        onnx.save(model, src)
        done = subprocess.run([str(CLI), "optimize", "--static", "--report-json", rep, src, out],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with open(rep) as f:
            return onnx.load(out), json.load(f)


@pytest.mark.parametrize("opset", [13, 17])
def test_division_gather_elements_and_pad_of_padded_rows_equal_the_originals(opset):
    model = row_ops_model(opset)
    static, report = make_static(model)
    assert report["left_nodes"] == [] and not unread_nodes(static)
    names = [o.name for o in static.graph.output]
    assert names[:3] == ["ratio", "picked", "padded"], names
    assert sorted(names[3:]) == ["padded_count", "picked_count", "ratio_count"], names
    # The divisor's padding is read as 1: a Where before the Div.
    div = next(n for n in static.graph.node if n.op_type == "Div" and n.output[0].startswith("ratio"))
    assert any(n.op_type == "Where" and n.output[0] == div.input[1] for n in static.graph.node)
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(opset)
    masks = [np.zeros(N, bool), np.ones(N, bool)] + [rng.random(N) < 0.5 for _ in range(12)]
    for mask in masks:
        y = rng.standard_normal((N, 3)).astype(np.float32)
        y[rng.random((N, 3)) < 0.3] = 0.0  # zeros, selected rows' and padding's alike
        feeds = {"x": rng.standard_normal((N, 3)).astype(np.float32), "y": y,
                 "bins": rng.integers(-3, 3, (N, 3)).astype(np.int64), "m": mask}
        expected = original.run(None, feeds)
        for _ in range(2):
            got = dict(zip(names, made.run(None, feeds)))
            for name, want in zip(("ratio", "picked", "padded"), expected):
                count = int(got[f"{name}_count"])
                assert count == mask.sum()
                assert_exact(got[name][:count], want, f"{name}, mask {mask.astype(int)}")
                rest = got[name][count:]
                assert (rest == 0).all() and not np.signbit(rest).any(), (name, rest)
