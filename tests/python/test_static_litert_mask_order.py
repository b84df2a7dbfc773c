"""Issue 38: under `--static --target litert`, a mask is flattened before its zero test
(crates/emit-static/src/mask.rs): onnx2tf 2.6.9's tf_converter with `-kat` flattens an elementwise
op's result on a rank-3 input in NWC order, so argwhere of a [6, 6, 6] tensor came out in another
order, while a Reshape of the input itself keeps ONNX's. The other targets test first. Every
form must equal NonZero (numpy's) exactly (coordinates, shape, dtype), for float masks with NaN and -0.0,
int8 and bool masks, random, empty and full."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import static_cases as sc
from conftest import session

SHAPE = [3, 4, 5]
TYPES = {np.float32: TensorProto.FLOAT, np.int8: TensorProto.INT8, np.bool_: TensorProto.BOOL}


def nonzero_model(dtype):
    graph = helper.make_graph([helper.make_node("NonZero", ["x"], ["y"])], "nonzero",
                              [helper.make_tensor_value_info("x", TYPES[dtype], SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def masks(dtype, rng):
    numel = int(np.prod(SHAPE))
    values = {np.float32: rng.choice(np.array([0.0, -0.0, np.nan, 1.5, -2.0], np.float32), numel),
              np.int8: rng.integers(-2, 3, numel).astype(np.int8),
              np.bool_: rng.random(numel) < 0.5}[dtype].reshape(SHAPE)
    return {"random": values, "empty": np.zeros(SHAPE, dtype), "full": np.ones(SHAPE, dtype)}


@pytest.mark.parametrize("target", ["litert", "generic", "qnn"])
@pytest.mark.parametrize("dtype", list(TYPES), ids=lambda t: t.__name__)
def test_litert_flattens_a_mask_before_its_zero_test(dtype, target):
    model = nonzero_model(dtype)
    static, report = sc.static_model(model, "--input-shape", "x=" + ",".join(map(str, SHAPE)),
                                     *([] if target == "generic" else ["--target", target]))
    ops = [n.op_type for n in static.graph.node]
    reads_input = [n.op_type for n in static.graph.node if "x" in n.input]
    first = {"litert": ["Reshape"], "generic": None, "qnn": None}[target]
    if first is not None:
        assert reads_input == first, ops
    else:
        assert reads_input == {np.float32: ["Equal"], np.int8: ["Cast"], np.bool_: ["Reshape"]}[dtype], ops
    names = [o.name for o in static.graph.output]
    for case, x in masks(dtype, np.random.default_rng(3)).items():
        want = np.array(np.nonzero(x), dtype=np.int64)  # NaN selected, -0.0 not: NonZero's test
        got = sc.trimmed(session(static, library=False).run(None, {"x": x}), names,
                         report["static"]["count_outputs"])["y"]
        assert (got.dtype, got.shape) == (want.dtype, want.shape), f"{case}: {got.dtype}{got.shape}"
        assert np.array_equal(got, want), f"{target} {case}: coordinates differ"
