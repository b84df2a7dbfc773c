"""The `nonzero` masked writes through real ONNX Runtime, exact against numpy (values, shape,
dtype): MaskedFill(X, M, V) = Where(M, V, X) with V broadcast to X's shape, and
MaskedScatter(X, M, S), torch's masked_scatter. Their errors name the rule. Semantics: docs/ops.md."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import assert_exact, session

NP = {
    TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64, TensorProto.BOOL: np.bool_,
    TensorProto.UINT8: np.uint8, TensorProto.DOUBLE: np.float64, TensorProto.INT8: np.int8,
    TensorProto.FLOAT16: np.float16, TensorProto.UINT16: np.uint16, TensorProto.STRING: object,
}
# Every type ONNX Runtime lets a custom op's "any type" input take (complex is not among them).
TYPES = list(NP)


def write_model(op, elem, x_shape, v_shape):
    node = helper.make_node(op, ["x", "m", "v"], ["y"], domain="nonzero", name="n")
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", elem, x_shape),
         helper.make_tensor_value_info("m", TensorProto.BOOL, x_shape),
         helper.make_tensor_value_info("v", elem, v_shape)],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("nonzero", 1)])
    m.ir_version = 8
    return m


def values(elem, shape, rng, offset=0):
    n = int(np.prod(shape))
    ints = np.asarray(rng.integers(1, 100, n) + offset).reshape(shape)
    if elem == TensorProto.STRING:
        return np.array([f"s{v}" for v in ints.flat], dtype=object).reshape(shape)
    if elem == TensorProto.BOOL:
        return np.asarray(ints % 2 == 0)
    if elem == TensorProto.COMPLEX64:
        return np.asarray(ints + 1j * ints).astype(np.complex64)
    return np.asarray(ints.astype(NP[elem]))


@pytest.mark.parametrize("elem", TYPES)
@pytest.mark.parametrize("x_shape,v_shape", [
    ((7,), ()), ((3, 4), (1,)), ((3, 4), (4,)), ((3, 4), (3, 1)), ((2, 3, 4), (3, 4)),
    ((2, 3, 4), (2, 3, 4)), ((0, 3), (3,)), ((600, 700), ()), ((600, 700), (700,)),
])
def test_masked_fill_is_where(elem, x_shape, v_shape):
    rng = np.random.default_rng(len(x_shape) * 131 + elem)
    x = values(elem, x_shape, rng)
    v = values(elem, v_shape, rng, offset=1000)
    s = session(write_model("MaskedFill", elem, list(x_shape), list(v_shape)))
    for density in (0.0, 0.3, 1.0):
        m = rng.random(x_shape) < density
        (y,) = s.run(None, {"x": x, "m": m, "v": v})
        assert_exact(y, np.where(m, v, x).astype(x.dtype))


def numpy_masked_scatter(x, m, src):
    y = x.copy()
    y[m] = src.reshape(-1)[: int(m.sum())]
    return y


@pytest.mark.parametrize("elem", TYPES)
@pytest.mark.parametrize("x_shape", [(7,), (3, 4), (2, 3, 4), (0, 3), (600, 700)])
def test_masked_scatter_is_torch_masked_scatter(elem, x_shape):
    rng = np.random.default_rng(len(x_shape) * 17 + elem)
    x = values(elem, x_shape, rng)
    # The source is longer than any selection (torch reads it from the start), and not flat.
    n = int(np.prod(x_shape))
    src = values(elem, (n + 2, 1), rng, offset=1000)
    s = session(write_model("MaskedScatter", elem, list(x_shape), [n + 2, 1]))
    for density in (0.0, 0.5, 1.0):
        m = rng.random(x_shape) < density
        (y,) = s.run(None, {"x": x, "m": m, "v": src})
        assert_exact(y, numpy_masked_scatter(x, m, src))


def test_the_output_has_x_type_and_shape_from_inference():
    s = session(write_model("MaskedFill", TensorProto.FLOAT, ["a", 4], [4]))
    out = s.get_outputs()[0]
    assert out.type == "tensor(float)" and out.shape == ["a", 4], (out.type, out.shape)


def run_error(op, x, m, v, elem=TensorProto.FLOAT):
    s = session(write_model(op, elem, None, None))
    with pytest.raises(Exception) as e:
        s.run(None, {"x": x, "m": m, "v": v})
    return str(e.value)


def test_errors_name_the_rule():
    x = np.zeros((3, 4), np.float32)
    msg = run_error("MaskedFill", x, np.ones((3,), bool), np.array(1, np.float32))
    assert "MaskedFill's mask shape [3] must equal X's shape [3, 4]" in msg, msg
    msg = run_error("MaskedFill", x, np.ones((3, 4), bool), np.ones((2,), np.float32))
    assert "MaskedFill's value of shape [2] must broadcast to X's shape [3, 4]" in msg, msg
    msg = run_error("MaskedScatter", x, np.ones((3, 4), bool), np.ones((11,), np.float32))
    assert "the mask selects 12, the source holds 11" in msg, msg


def test_values_of_another_type_are_refused():
    node = helper.make_node("MaskedFill", ["x", "m", "v"], ["y"], domain="nonzero")
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("m", TensorProto.BOOL, [2]),
         helper.make_tensor_value_info("v", TensorProto.DOUBLE, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("nonzero", 1)])
    model.ir_version = 8
    with pytest.raises(Exception) as e:
        session(model).run(None, {"x": np.zeros(2, np.float32), "m": np.ones(2, bool), "v": np.array(1, np.float64)})
    # ONNX Runtime 1.17 already refuses the model at load, from its own type inference of Y.
    refused = ("MaskedFill's values must have X's element type float, not double",
               "Type (tensor(float)) of output arg (y) of node () does not match expected type (tensor(double))")
    assert any(r in str(e.value) for r in refused), str(e.value)
