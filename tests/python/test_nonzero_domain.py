"""The `nonzero`-domain ops (opset 1) through real ONNX Runtime: ArgWhere, BooleanMask and
NonZeroCoordinates, each against numpy, exact (values, shape, dtype), with their shape inference
and their errors. Semantics: docs/ops.md."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import assert_exact, session

NP = {
    TensorProto.FLOAT: np.float32, TensorProto.INT64: np.int64, TensorProto.BOOL: np.bool_,
    TensorProto.UINT8: np.uint8, TensorProto.DOUBLE: np.float64, TensorProto.INT8: np.int8,
    TensorProto.FLOAT16: np.float16, TensorProto.STRING: object,
}


def model(op, inputs, outputs, **attrs):
    """One `op` node of domain `nonzero`; inputs/outputs: (name, ONNX type, shape or None)."""
    node = helper.make_node(op, [n for n, _, _ in inputs], [n for n, _, _ in outputs], domain="nonzero", name="n", **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("nonzero", 1)])
    m.ir_version = 8
    return m


def sample(elem, shape, rng, density=0.4):
    mask = rng.random(shape) < density
    if elem == TensorProto.STRING:
        return np.where(mask, "a\0b", "").astype(object).reshape(shape)
    x = (mask * rng.integers(1, 100, shape)).astype(NP[elem])
    if elem == TensorProto.FLOAT:
        x[~mask] = -0.0  # -0.0 is zero
    return x


# ---- ArgWhere ----

@pytest.mark.parametrize("elem", [TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.STRING, TensorProto.FLOAT16])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4), (2, 1, 3, 1, 2), (0, 3), (400, 400)])
def test_argwhere_is_numpy_argwhere(elem, shape):
    x = sample(elem, shape, np.random.default_rng(len(shape) * 31 + elem))
    s = session(model("ArgWhere", [("x", elem, list(shape))], [("y", TensorProto.INT64, None)]))
    (y,) = s.run(None, {"x": x})
    assert_exact(y, np.argwhere(x != "" if elem == TensorProto.STRING else x).astype(np.int64))
    nnz, rank = s.get_outputs()[0].shape
    assert rank == len(shape) and isinstance(nnz, str), s.get_outputs()[0].shape


def test_argwhere_of_a_scalar_is_nnz_by_zero():
    s = session(model("ArgWhere", [("x", TensorProto.FLOAT, [])], [("y", TensorProto.INT64, None)]))
    assert_exact(s.run(None, {"x": np.array(2.5, np.float32)})[0], np.zeros((1, 0), np.int64))
    assert_exact(s.run(None, {"x": np.array(0.0, np.float32)})[0], np.zeros((0, 0), np.int64))


@pytest.mark.parametrize("op", ["NonZero", "ArgWhere"])
@pytest.mark.parametrize("shape", [(1, 1, 110), (1, 13), (256,), (257,), (1, 0), (110, 1), (2, 3)])
@pytest.mark.parametrize("density", [0.0, 0.4, 1.0])
def test_token_masks_none_some_or_all_set(op, shape, density):
    """The shapes of op-core's one-pass path (at most 256 elements, one dimension wider than 1)
    and their neighbours, with no, some and only non-zeros: an empty output must come out right
    whichever dimension is the wide one."""
    x = np.random.default_rng(int(density * 10) + len(shape)).random(shape) < density
    domain = "nonzero" if op == "ArgWhere" else ""
    node = helper.make_node(op, ["x"], ["y"], domain=domain, name="n")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.BOOL, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("nonzero", 1)])
    m.ir_version = 8
    (y,) = session(m).run(None, {"x": x})
    expected = np.argwhere(x) if op == "ArgWhere" else np.array(np.nonzero(x))
    assert_exact(y, expected.astype(np.int64).reshape((-1, len(shape)) if op == "ArgWhere" else (len(shape), -1)))


# ---- BooleanMask ----

@pytest.mark.parametrize("elem", [TensorProto.FLOAT, TensorProto.INT64, TensorProto.UINT8, TensorProto.DOUBLE, TensorProto.STRING])
@pytest.mark.parametrize("x_shape, k", [((10,), 1), ((4, 5, 6), 2), ((6, 4), 1), ((3, 4, 5), 3), ((300, 500), 2), ((0, 4), 1)])
def test_boolean_mask_is_numpy_indexing(elem, x_shape, k):
    rng = np.random.default_rng(sum(x_shape) + k)
    x = sample(elem, x_shape, rng, density=0.9)
    m = rng.random(x_shape[:k]) < 0.5
    s = session(model("BooleanMask", [("x", elem, list(x_shape)), ("m", TensorProto.BOOL, list(x_shape[:k]))], [("y", elem, None)]))
    (y,) = s.run(None, {"x": x, "m": m})
    want = x[m]
    assert y.dtype == want.dtype and y.shape == want.shape and np.array_equal(y, want)
    out = s.get_outputs()[0].shape
    assert isinstance(out[0], str) and out[1:] == list(x_shape[k:]), out


def test_boolean_mask_with_symbolic_dims_and_all_false_or_true_masks():
    s = session(model("BooleanMask", [("x", TensorProto.FLOAT, ["n", 4]), ("m", TensorProto.BOOL, ["n"])], [("y", TensorProto.FLOAT, None)]))
    x = np.arange(20, dtype=np.float32).reshape(5, 4)
    for m in (np.zeros(5, bool), np.ones(5, bool), np.array([1, 0, 0, 1, 1], bool)):
        assert_exact(s.run(None, {"x": x, "m": m})[0], x[m])


def test_boolean_mask_refuses_a_mask_of_the_wrong_shape_naming_both_shapes():
    # ONNX Runtime only logs shape-inference errors, so the call is what fails, known shapes or not.
    rule = r"BooleanMask node 'n': mask shape \[4, 6\] must equal the leading dimensions of X's shape \[4, 5, 6\]"
    for x_shape, m_shape in (([4, 5, 6], [4, 6]), (["a", "b", "c"], ["d", "e"]), (None, None)):
        s = session(model("BooleanMask", [("x", TensorProto.FLOAT, x_shape), ("m", TensorProto.BOOL, m_shape)], [("y", TensorProto.FLOAT, None)]))
        with pytest.raises(Exception, match=rule):
            s.run(None, {"x": np.ones((4, 5, 6), np.float32), "m": np.ones((4, 6), bool)})
    s = session(model("BooleanMask", [("x", TensorProto.FLOAT, None), ("m", TensorProto.BOOL, None)], [("y", TensorProto.FLOAT, None)]))
    with pytest.raises(Exception, match="BooleanMask node 'n': BooleanMask's mask must have rank 1 or more"):
        s.run(None, {"x": np.ones((4, 2), np.float32), "m": np.array(True)})


def test_boolean_mask_refuses_a_mask_that_is_not_bool():
    # The schema declares the mask bool, so ONNX Runtime refuses the model when it loads.
    with pytest.raises(Exception, match=r"Type 'tensor\(float\)' of input parameter \(m\) of operator \(BooleanMask\) in node \(n\) is invalid"):
        session(model("BooleanMask", [("x", TensorProto.FLOAT, [3]), ("m", TensorProto.FLOAT, [3])], [("y", TensorProto.FLOAT, None)]))


def test_boolean_mask_refuses_bool_bytes_other_than_0_and_1_naming_the_first():
    # A bool byte of 2 would be undefined behaviour as a Rust bool: refused, with its position,
    # wherever it lies (the check works on 4 KiB chunks, then finds the byte).
    s = session(model("BooleanMask", [("x", TensorProto.FLOAT, ["n"]), ("m", TensorProto.BOOL, ["n"])], [("y", TensorProto.FLOAT, None)]))
    x = np.ones(10000, np.float32)
    for at in (0, 4095, 4096, 5000, 9999):
        raw = np.zeros(10000, np.uint8)
        raw[::3] = 1
        raw[at + 7:at + 8] = 255  # a later bad byte, where there is room: the first is named
        raw[at] = 2
        with pytest.raises(Exception, match=rf"bool element {at} holds byte 2, not 0 or 1"):
            s.run(None, {"x": x, "m": raw.view(bool)})
    ok = np.zeros(10000, bool)
    ok[::3] = True
    assert_exact(s.run(None, {"x": x, "m": ok})[0], x[ok])


# ---- NonZeroCoordinates ----

def coordinates(x, columns=None):
    """numpy oracle: Count [1] and [numel, N] right-aligned coordinates, zero past Count."""
    n = x.ndim if columns is None else columns
    idx = np.argwhere(x).astype(np.uint32)
    coords = np.zeros((x.size, n), np.uint32)
    coords[: len(idx)] = idx[:, x.ndim - n:] if n else idx[:, :0]
    return np.array([len(idx)], np.uint32), coords


@pytest.mark.parametrize("elem", [TensorProto.FLOAT, TensorProto.INT8, TensorProto.BOOL, TensorProto.STRING])
@pytest.mark.parametrize("shape, columns", [((6,), None), ((3, 4), None), ((2, 3, 4), None), ((1, 1, 3, 4), 2), ((1, 3, 4), 3), ((200, 300), None)])
def test_coordinates_are_right_aligned_and_zero_filled(elem, shape, columns):
    x = sample(elem, shape, np.random.default_rng(len(shape) + (columns or 0)))
    attrs = {} if columns is None else {"columns": columns}
    s = session(model("NonZeroCoordinates", [("x", elem, list(shape))], [("count", TensorProto.UINT32, None), ("coords", TensorProto.UINT32, None)], **attrs))
    count, coords = s.run(None, {"x": x})
    want_count, want_coords = coordinates(x != "" if elem == TensorProto.STRING else x, columns)
    assert_exact(count, want_count)
    assert_exact(coords, want_coords)
    # Both shapes are static, known from X's shape alone.
    assert s.get_outputs()[0].shape == [1]
    assert s.get_outputs()[1].shape == [int(np.prod(shape)), columns or len(shape)]


def test_coordinates_columns_outside_the_rule_is_an_error_naming_it():
    rule = r"NonZeroCoordinates node 'n': NonZeroCoordinates' columns \(1\) must be at least the effective rank of X \(2"
    for shape in ([1, 3, 4], None):
        s = session(model("NonZeroCoordinates", [("x", TensorProto.FLOAT, shape)], [("c", TensorProto.UINT32, None), ("y", TensorProto.UINT32, None)], columns=1))
        with pytest.raises(Exception, match=rule):
            s.run(None, {"x": np.ones((1, 3, 4), np.float32)})


def test_nonzero_and_the_new_ops_in_one_model_agree():
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 6])
    nodes = [
        helper.make_node("NonZero", ["x"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
        helper.make_node("ArgWhere", ["x"], ["aw"], domain="nonzero"),
    ]
    outs = [helper.make_tensor_value_info(n, TensorProto.INT64, None) for n in ("t", "aw")]
    m = helper.make_model(helper.make_graph(nodes, "g", [x_info], outs),
                          opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("nonzero", 1)])
    m.ir_version = 8
    x = sample(TensorProto.FLOAT, (5, 6), np.random.default_rng(3))
    t, aw = session(m).run(None, {"x": x})
    assert_exact(aw, t)
