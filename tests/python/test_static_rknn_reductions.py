"""`--target rknn` makes an empty selection's float sum or mean +0 without a Where
(crates/emit-static/src/portable.rs, `zero_if_empty`): rknn-toolkit2 2.5.0's native build dies
(SIGSEGV) on a Where at a whole reduction's one element (tf2onnx's masked_count_mean). It adds
`(1 - 2 * nonempty) * 0` instead: +0 when empty, -0.0 otherwise. The rknn form must equal the
generic form bit for bit (signed zeros and NaN included), and the original on ONNX Runtime: +0
for an empty selection, NaN where a selected value is NaN, and up to rounding otherwise."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import session
from static_cases import make_static

SHAPE = (4, 5)


def reductions_model(dtype):
    """x[mask] (NonZero, Transpose, GatherND), then its sum and its mean."""
    nodes = [helper.make_node("NonZero", ["mask"], ["coords"]),
             helper.make_node("Transpose", ["coords"], ["rows"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "rows"], ["picked"]),
             helper.make_node("ReduceSum", ["picked", "axes"], ["total"], keepdims=0),
             helper.make_node("ReduceMean", ["picked"], ["mean"], axes=[0], keepdims=0)]
    graph = helper.make_graph(
        nodes, "reductions",
        [helper.make_tensor_value_info("x", dtype, list(SHAPE)),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, list(SHAPE))],
        [helper.make_tensor_value_info(n, dtype, None) for n in ("total", "mean")],
        initializer=[helper.make_tensor("axes", TensorProto.INT64, [1], [0])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def cases(rng, dtype):
    x = rng.standard_normal(SHAPE).astype(dtype)
    some = rng.random(SHAPE) < 0.5
    negative_zeros = np.full(SHAPE, -0.0, dtype)
    with_nan = x.copy()
    with_nan[some] = np.nan
    return {"random": (x, some), "none": (x, np.zeros(SHAPE, bool)), "all": (x, np.ones(SHAPE, bool)),
            "negative zeros": (negative_zeros, some), "nan": (with_nan, some)}


def bits(value):
    return np.asarray(value).view(np.uint16 if value.dtype == np.float16 else np.uint64 if value.dtype == np.float64
                                  else np.uint32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
def test_rknn_empty_sum_without_where_is_exact(tmp_path, dtype):
    onnx_type = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE, np.float16: TensorProto.FLOAT16}[dtype]
    original = tmp_path / "reductions.onnx"
    onnx.save(reductions_model(onnx_type), str(original))
    shapes = {"x": list(SHAPE), "mask": list(SHAPE)}
    forms = {}
    for target in (None, "rknn"):
        rc, out, static, _ = make_static(original, shapes, target=target)
        assert rc == 0, out
        graph = onnx.load(str(static)).graph
        writers = {o: n.op_type for n in graph.node for o in n.output}
        forms[target] = static
        # The generic form ends each reduction with a Where; the rknn form with an Add.
        assert [writers[o] for o in ("total", "mean")] == (["Where"] * 2 if target is None else ["Add"] * 2)
    rng = np.random.default_rng(7)
    for case, (x, mask) in cases(rng, dtype).items():
        feeds = {"x": x, "mask": mask}
        want = session(original, library=False).run(None, feeds)
        generic = session(forms[None], library=False).run(None, feeds)
        rknn = session(forms["rknn"], library=False).run(None, feeds)
        for name, w, g, r in zip(("total", "mean"), want, generic, rknn):
            assert r.dtype == w.dtype and r.shape == w.shape, (case, name)
            assert np.array_equal(bits(r), bits(g)), f"{case} {name}: rknn {r!r} generic {g!r}"
            if case in ("none", "nan"):
                assert np.array_equal(bits(r), bits(w)) or (np.isnan(r) and np.isnan(w)), f"{case} {name}: {r!r} {w!r}"
            else:  # a sum of -0.0s is a zero of either sign: the static forms sum in another order
                np.testing.assert_allclose(r, w, rtol=1e-3 if dtype == np.float16 else 1e-6)
    assert not np.signbit(session(forms["rknn"], library=False).run(None, {"x": x, "mask": np.zeros(SHAPE, bool)})[0])
