"""Writes at a full index grid (TorchScript's `x[:, j] = v`: ScatterND at a Range over the rows
beside a constant column; rewrite-match's writes/grid.rs) as `Where` with a constant mask, run
on ONNX Runtime against the original: on a fixed tensor (a plain write, and `+=` as ScatterND's
reduction "add" of a row of values), and on a selection's padded rows written back
(fuzz/seeds/optimize/grid_write_rows_written_back: `rows = x[m]; rows[:, 0] = -5;
out = zeros; out[m] = rows`), for masks of every density. Outputs equal exactly, the padding
included (the fill past each count)."""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import judge
from judge import ROOT, compare_static, report_axes

SEED = ROOT / "fuzz" / "seeds" / "optimize" / "grid_write_rows_written_back"


def _run(path, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def _static(path, out, shapes):
    report = judge.static_model(path, out, shapes)
    assert report["returncode"] == 0, report["stderr"]
    assert not report["left_nodes"], report["left_nodes"]
    return report


def test_padded_rows_written_back_after_a_column_write(tmp_path):
    out = tmp_path / "static.onnx"
    report = _static(SEED, out, {"x": [6, 3], "m": [6]})
    ops = {n.op_type for n in onnx.load(str(out)).graph.node}
    assert not ops & {"NonZero", "ScatterND"}, ops
    rng = np.random.default_rng(5)
    for density in (0.0, 0.3, 0.5, 0.8, 1.0):
        x = rng.standard_normal((6, 3)).astype(np.float32)
        feeds = {"x": x, "m": rng.random(6) < density}
        compare_static(_run(SEED, feeds), _run(out, feeds), axes=report_axes(report),
                       pads={"knotted": 0.0})


def _accumulated_column(path):
    """`x[:, -1] += v` (v `[4, 1]`) on a fixed x `[4, 3]`, as ScatterND with reduction "add" at
    the grid `Concat(Range(0, 4) as [4, 1], -1 expanded)`."""
    inits = [nh.from_array(np.array(0, np.int64), "zero"), nh.from_array(np.array(1, np.int64), "one"),
             nh.from_array(np.array([-1, 1], np.int64), "column"), nh.from_array(np.array([-1], np.int64), "last")]
    nodes = [
        h.make_node("Shape", ["x"], ["shape"]),
        h.make_node("Gather", ["shape", "zero"], ["n"], axis=0),
        h.make_node("Range", ["zero", "n", "one"], ["rows"]),
        h.make_node("Reshape", ["rows", "column"], ["grid"]),
        h.make_node("Shape", ["grid"], ["grid_shape"]),
        h.make_node("Expand", ["last", "grid_shape"], ["col"]),
        h.make_node("Unsqueeze", ["grid", "last"], ["i0"]),
        h.make_node("Unsqueeze", ["col", "last"], ["i1"]),
        h.make_node("Concat", ["i0", "i1"], ["idx"], axis=-1),
        h.make_node("ScatterND", ["x", "idx", "v"], ["y"], reduction="add"),
    ]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [4, 3]),
                                      h.make_tensor_value_info("v", T.FLOAT, [4, 1])],
                         [h.make_tensor_value_info("y", T.FLOAT, [4, 3])], initializer=inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_an_accumulated_column_is_where_of_the_sum(tmp_path):
    original, out = tmp_path / "original.onnx", tmp_path / "static.onnx"
    _accumulated_column(original)
    _static(original, out, {})
    ops = [n.op_type for n in onnx.load(str(out)).graph.node]
    assert "ScatterND" not in ops and "Where" in ops, ops
    rng = np.random.default_rng(6)
    feeds = {"x": rng.standard_normal((4, 3)).astype(np.float32),
             "v": rng.standard_normal((4, 1)).astype(np.float32)}
    want = feeds["x"].copy()
    want[:, -1] += feeds["v"][:, 0]
    got = _run(out, feeds)["y"]
    np.testing.assert_array_equal(_run(original, feeds)["y"], want)
    np.testing.assert_array_equal(got, want)
