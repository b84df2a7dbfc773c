"""Issue 38: under `--static --target litert`, a Clip of integers is written as Max with its lower
bound, then Min with its upper one (crates/emit-static/src/litert.rs): onnx2tf's
flatbuffer_direct writes an int64 Clip (Longformer's own `Clip(attention_mask * (global + 1), 0,
1)`) as a RELU_0_TO_1 of int32 input and int64 output, which LiteRT refuses to prepare. The form
must equal ONNX Runtime's Clip exactly (dtype, shape, values) for both bounds, one, or none; a
float Clip and the other targets keep the Clip."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import assert_exact
from static_cases import static_model

TYPES = {np.int64: TensorProto.INT64, np.int32: TensorProto.INT32, np.float32: TensorProto.FLOAT}
BOUNDS = {"both": (-2, 3), "low": (-2, None), "high": (None, 3), "none": (None, None)}


def clip_model(dtype, bounds):
    low, high = BOUNDS[bounds]
    inits = [numpy_helper.from_array(np.array(v, dtype), name) for name, v in (("low", low), ("high", high))
             if v is not None]
    inputs = ["x", "low" if low is not None else "", "high" if high is not None else ""]
    while inputs[-1] == "":
        inputs.pop()
    graph = helper.make_graph(
        [helper.make_node("Clip", inputs, ["y"])], "clip",
        [helper.make_tensor_value_info("x", TYPES[dtype], [3, 4])],
        [helper.make_tensor_value_info("y", TYPES[dtype], None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


@pytest.mark.parametrize("target", ["litert", "generic"])
@pytest.mark.parametrize("bounds", sorted(BOUNDS))
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float32], ids=lambda t: t.__name__)
def test_an_integer_clip_for_litert_is_a_max_and_a_min(dtype, bounds, target):
    model = clip_model(dtype, bounds)
    static, _ = static_model(model, *([] if target == "generic" else ["--target", target]))
    ops = [n.op_type for n in static.graph.node]
    low, high = BOUNDS[bounds]
    if target == "litert" and dtype != np.float32 and (low, high) != (None, None):
        want_ops = [op for op, b in (("Max", low), ("Min", high)) if b is not None]
        assert ops == want_ops, ops
    else:
        assert ops == ["Clip"], ops
    x = np.arange(-6, 6, dtype=dtype).reshape(3, 4)
    (want,) = session(model, library=False).run(None, {"x": x})
    (got,) = session(static, library=False).run(None, {"x": x})
    assert_exact(got, want, f"{dtype.__name__} {bounds} {target}")
