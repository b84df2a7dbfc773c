"""Issue 38: under `--static --target rknn`, the Gathers (and GatherNDs) that read one tensor
become one gather at their indices put end to end, then a Split
(crates/emit-static/src/rknn/parallel_gathers.rs): rknn-toolkit2 2.5.0 merges gathers of the same data
without comparing their indices, and an MoE's experts all read the last expert's tokens. The
form must equal the original on ONNX Runtime exactly, with one gather per data tensor, along
any axis and whatever the nodes between the gathers; the other targets keep the gathers."""

import collections

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import assert_exact
from static_cases import make_static

SHAPES = {"x": [5, 6, 3], "i": [4], "j": [2], "q": [3], "k": [3, 2], "m": [4, 2], "p": [4, 2]}
INDICES = "ijqkmp"


def gathers_model():
    """Of x: two Gathers along axis 1 (the second at indices computed from the first's rows, so
    they cannot be one), two along axis 2 (-1 and 2), two along axis 0, and two GatherNDs; and a
    Gather of another tensor."""
    node = helper.make_node
    nodes = [
        node("Gather", ["x", "i"], ["a"], axis=1),
        node("ReduceSum", ["a", "axes"], ["a_sum"], keepdims=0),
        node("Cast", ["a_sum"], ["a_int"], to=TensorProto.INT64),
        node("Abs", ["a_int"], ["a_abs"]),
        node("Mod", ["a_abs", "six"], ["later"]),
        node("Gather", ["x", "later"], ["b"], axis=1),
        node("Gather", ["x", "j"], ["c"], axis=-1),
        node("Gather", ["x", "q"], ["d"], axis=2),
        node("Gather", ["x", "k"], ["e"], axis=0),
        node("Gather", ["x", "m"], ["f"], axis=0),
        node("GatherND", ["x", "p"], ["g"]),
        node("Neg", ["p"], ["p_neg"]),
        node("Add", ["p_neg", "four"], ["p_rev"]),
        node("GatherND", ["x", "p_rev"], ["h"]),
        node("Gather", ["y", "i"], ["z"], axis=0),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPES["x"]),
              helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 2])]
    inputs += [helper.make_tensor_value_info(n, TensorProto.INT64, SHAPES[n]) for n in INDICES]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in OUTPUTS]
    inits = [numpy_helper.from_array(np.array(6, np.int64), "six"), numpy_helper.from_array(np.array([0, 2]), "axes"),
             numpy_helper.from_array(np.array(4, np.int64), "four")]
    graph = helper.make_graph(nodes, "gathers", inputs, outputs, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


OUTPUTS = "abcdefghz"


def feeds(rng):
    return {"x": rng.standard_normal(SHAPES["x"]).astype(np.float32),
            "y": rng.standard_normal((6, 2)).astype(np.float32),
            "i": rng.integers(-6, 6, 4), "j": rng.integers(-3, 3, 2), "q": rng.integers(0, 3, 3),
            "k": rng.integers(0, 5, (3, 2)), "m": rng.integers(-5, 5, (4, 2)),
            "p": np.stack([rng.integers(0, 5, 4), rng.integers(0, 6, 4)], axis=1)}


def shapes():
    return {n: SHAPES[n] for n in INDICES}


def gathers_of(path):
    counted = collections.Counter()
    for n in onnx.load(str(path)).graph.node:
        if n.op_type in ("Gather", "GatherND"):
            counted[n.op_type, n.input[0]] += 1
    return counted


@pytest.mark.parametrize("seed", range(5))
def test_rknn_form_has_one_gather_per_data_and_is_exact(tmp_path, seed):
    original = tmp_path / "gathers.onnx"
    onnx.save(gathers_model(), str(original))
    rc, out, static, _ = make_static(original, shapes(), target="rknn")
    assert rc == 0, out
    onnx.checker.check_model(onnx.load(str(static)), full_check=True)
    # Axis 1 stays two; axis 2 and axis 0 become one each; the GatherNDs one; y's alone.
    assert gathers_of(static) == {("Gather", "x"): 4, ("GatherND", "x"): 1, ("Gather", "y"): 1}
    rng = np.random.default_rng(seed)
    fed = feeds(rng)
    want = session(original, library=False).run(None, fed)
    got = session(static, library=False).run(None, fed)
    for name, w, g in zip(OUTPUTS, want, got):
        assert_exact(g, w, name)


@pytest.mark.parametrize("target", [None, "qnn", "litert"])
def test_other_targets_keep_the_gathers(tmp_path, target):
    original = tmp_path / "gathers.onnx"
    onnx.save(gathers_model(), str(original))
    rc, out, static, _ = make_static(original, shapes(), target=target)
    assert rc == 0, out
    assert gathers_of(static) == gathers_of(original)
