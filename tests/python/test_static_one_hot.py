"""Issue 38: under `--static --target qnn`, a model's own OneHot is written in standard ops
(crates/emit-static/src/qnn/one_hot.rs), because QNN HTP takes no OneHot (Mixtral's router went to
the CPU EP). The form must equal ONNX Runtime's OneHot exactly (dtype, shape, values) for every
index: in range, negative (counted from depth), outside [-depth, depth) (all off), and float
indices (truncated); at every axis. The other targets keep the OneHot."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import assert_exact
from static_cases import make_static

DEPTH = 5
# (indices dtype, values dtype, depth dtype): kernels ONNX Runtime registers for OneHot.
KINDS = [(np.int64, np.int64, np.int64), (np.float32, np.int64, np.int64), (np.int64, np.float32, np.int64),
         (np.int32, np.float32, np.int32), (np.int64, np.int32, np.float32)]
INDICES = [[-6, -5, -1, 0], [2, 4, 5, 6], [3, -3, 1, -2]]
# -0.99999994 (the float32 next to -1) plus 5 rounds to 4.0 in float32: class 4 on ONNX Runtime.
FLOAT_INDICES = [[-5.5, -4.9, -0.7, 0.2], [2.9, 4.99, 5.0, -6.0], [3.5, -0.99999994, 1.0, -1.9]]
VALUES = {np.int64: [-7, 9], np.int32: [3, -4], np.float32: [-1.5, 2.25]}
TYPES = {np.int64: TensorProto.INT64, np.int32: TensorProto.INT32, np.float32: TensorProto.FLOAT}


def one_hot_model(kind, axis):
    index_type, value_type, depth_type = kind
    node = helper.make_node("OneHot", ["indices", "depth", "values"], ["y"], axis=axis)
    graph = helper.make_graph(
        [node], "one_hot",
        [helper.make_tensor_value_info("indices", TYPES[index_type], [3, 4])],
        [helper.make_tensor_value_info("y", TYPES[value_type], None)],
        initializer=[numpy_helper.from_array(np.array(DEPTH, depth_type), "depth"),
                     numpy_helper.from_array(np.array(VALUES[value_type], value_type), "values")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def indices(index_type):
    return np.array(FLOAT_INDICES if index_type == np.float32 else INDICES, index_type)


@pytest.mark.parametrize("axis", [-1, 0, 1, 2, -3])
@pytest.mark.parametrize("kind", KINDS, ids=lambda k: "-".join(np.dtype(t).name for t in k))
def test_one_hot_in_standard_ops_is_exact(tmp_path, kind, axis):
    original = tmp_path / "one_hot.onnx"
    onnx.save(one_hot_model(kind, axis), str(original))
    rc, out, static, _ = make_static(original, {"indices": [3, 4]}, target="qnn")
    assert rc == 0, out
    ops = [n.op_type for n in onnx.load(str(static)).graph.node]
    # A float depth is not an integer constant: that OneHot stays (ONNX Runtime casts it).
    assert ("OneHot" in ops) == (kind[2] == np.float32), ops
    feeds = {"indices": indices(kind[0])}
    want = session(original, library=False).run(None, feeds)[0]
    got = session(static, library=False).run(None, feeds)[0]
    assert_exact(got, want, f"OneHot axis {axis}")
    # The cases hold every kind of index: on, and rows all off.
    assert (want == VALUES[kind[1]][1]).any() and (want == VALUES[kind[1]][0]).all(axis=axis).any()
    if kind[0] == np.float32:
        assert np.moveaxis(want, axis, -1)[2, 1, 4] == VALUES[kind[1]][1], "-0.99999994 is class 4"


@pytest.mark.parametrize("target", [None, "litert", "rknn"])
def test_other_targets_keep_one_hot(tmp_path, target):
    original = tmp_path / "one_hot.onnx"
    onnx.save(one_hot_model(KINDS[0], -1), str(original))
    rc, out, static, _ = make_static(original, {"indices": [3, 4]}, target=target)
    assert rc == 0, out
    assert [n.op_type for n in onnx.load(str(static)).graph.node] == ["OneHot"]
