"""`nonzero.BooleanMaskAxis` through real ONNX Runtime, exact against numpy (values, shape,
dtype): `tf.boolean_mask(x, m, axis=a)` for a 1-D m, defined as the gather exporters write for it,
`Gather(X, positions of m's true entries, axis=a)`. The mask may be shorter or longer than the
axis; a true entry past its end is refused, as the gather refuses it. Semantics: docs/ops.md."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import assert_exact, session

NP = {
    TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64, TensorProto.BOOL: np.bool_,
    TensorProto.UINT8: np.uint8, TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16,
    TensorProto.STRING: object,
}


def axis_model(elem, axis, x_shape=None):
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node("BooleanMaskAxis", ["x", "m"], ["y"], domain="nonzero", name="n", **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", elem, x_shape), helper.make_tensor_value_info("m", TensorProto.BOOL, None)],
        [helper.make_tensor_value_info("y", elem, None)],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("nonzero", 1)])
    m.ir_version = 8
    return m


def values(elem, shape, rng):
    ints = np.asarray(rng.integers(0, 100, shape))
    if elem == TensorProto.STRING:
        return np.array([f"s{v}" for v in ints.flat], dtype=object).reshape(shape)
    return np.asarray(ints.astype(NP[elem]))


def gather(x, m, axis):
    return np.take(x, np.flatnonzero(m), axis=axis)


@pytest.mark.parametrize("elem", list(NP))
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (4, 0, 3), (300, 40, 12), (1, 100_000)])
def test_every_axis_and_mask_length_is_the_gather(elem, shape):
    rng = np.random.default_rng(len(shape) * 7 + elem)
    x = values(elem, shape, rng)
    for axis in range(-len(shape), len(shape)):
        s = session(axis_model(elem, axis))
        size = shape[axis]
        for length in {0, size // 2, size, size + 3}:
            m = np.zeros(length, bool)
            m[: min(length, size)] = rng.random(min(length, size)) < 0.4
            (y,) = s.run(None, {"x": x, "m": m})
            assert_exact(y, gather(x, m, axis).astype(x.dtype))


def test_axis_defaults_to_zero_and_shape_inference_keeps_the_other_sizes():
    s = session(axis_model(TensorProto.FLOAT, None, ["a", 4]))
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (y,) = s.run(None, {"x": x, "m": np.array([True, False, True])})
    assert_exact(y, x[[0, 2]])
    s = session(axis_model(TensorProto.FLOAT, 1, ["a", 4]))
    out = s.get_outputs()[0].shape
    assert out[0] == "a" and isinstance(out[1], str), out


def test_errors_name_the_rule():
    x = np.zeros((2, 3), np.float32)
    s = session(axis_model(TensorProto.FLOAT, 1))
    with pytest.raises(Exception) as e:
        s.run(None, {"x": x, "m": np.array([True, False, False, True])})
    assert "BooleanMaskAxis's mask selects position 3, past the end of X's axis 1 (size 3)" in str(e.value), str(e.value)
    with pytest.raises(Exception) as e:
        session(axis_model(TensorProto.FLOAT, 2)).run(None, {"x": x, "m": np.array([True])})
    assert "BooleanMaskAxis's axis 2 is not an axis of X's shape [2, 3]" in str(e.value), str(e.value)
    with pytest.raises(Exception) as e:
        s.run(None, {"x": x, "m": np.ones((2, 3), bool)})
    assert "BooleanMaskAxis's mask must be 1-D, its shape is [2, 3]" in str(e.value), str(e.value)


def one_node(op, inputs, **attrs):
    outputs = ["count", "y"] if op == "NonZeroCoordinates" else ["y"]
    node = helper.make_node(op, [n for n, _ in inputs], outputs, domain="nonzero", name="n", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, t, None) for n, t in inputs],
        [onnx.ValueInfoProto(name=o) for o in outputs],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("nonzero", 1)])
    m.ir_version = 8
    return m


X, M, V = ("x", TensorProto.FLOAT), ("m", TensorProto.BOOL), ("v", TensorProto.FLOAT)


@pytest.mark.parametrize("op,inputs,attr", [
    ("BooleanMask", [X, M], "axis"), ("ArgWhere", [X], "axis"), ("NonZero", [X], "columns"),
    ("MaskedFill", [X, M, V], "reduction"), ("MaskedScatter", [X, M, V], "axis"),
    ("BooleanMaskAxis", [X, M], "columns"), ("NonZeroCoordinates", [X], "axis"),
])
def test_an_attribute_of_another_op_is_refused_by_name(op, inputs, attr):
    """ONNX Runtime accepts any attribute on a custom op and cannot list them to the kernel; each
    kernel asks for the library's attribute names it does not take, and refuses the node: a
    BooleanMask with `axis` written for other semantics is refused, never run along axis 0."""
    with pytest.raises(Exception) as e:
        session(one_node(op, inputs, **{attr: 1}))
    assert f"{op} takes no attribute '{attr}'" in str(e.value), str(e.value)


def test_boolean_mask_with_axis_names_the_op_that_has_it():
    with pytest.raises(Exception) as e:
        session(one_node("BooleanMask", [X, M], axis=1, bogus="x"))
    assert "BooleanMask takes no attribute 'axis' (BooleanMaskAxis selects along an axis)" in str(e.value), str(e.value)
