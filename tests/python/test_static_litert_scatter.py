"""Issue 38: under `--static --target litert`, a ScatterND at computed indices is written as a
ScatterElements on axis 0 of the data flattened over the indexed axes
(crates/emit-static/src/litert/scatter_rows.rs): onnx2tf's tf_converter fails on any ScatterND
whose indices are not constant (Longformer's global keys, a MoE router's index_add_), and its
flatbuffer_direct writes one with reduction=add as a custom op LiteRT cannot run. The form must
equal ONNX Runtime's ScatterND exactly (dtype, shape, values): negative indices, index tuples of
every width, each reduction, repeated indices where the reduction allows them. A ScatterND at
constant indices, and every other target, keep the ScatterND."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run_declared, session
from onnx_cases import assert_exact
from static_cases import static_model

TYPES = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64}
# name: (data dims, index tuples (may repeat only where the reduction is not none), the
# reductions that case runs under). Every tuple has an index that counts from the end.
CASES = {
    "rows": ((5, 3), [[-1], [0], [2], [-4]], ("none", "add", "mul")),
    "rows_repeated": ((5, 3), [[1], [1], [-4], [0], [-5]], ("add", "mul")),
    "pairs": ((3, 4, 2), [[[0, -1], [2, 1]], [[-3, 0], [1, 3]]], ("none", "add")),
    "elements": ((3, 4), [[0, 0], [2, -1], [-2, 1], [1, 2], [0, 3]], ("none", "add")),
    "elements_repeated": ((3, 4), [[0, 0], [-3, 0], [2, -1], [2, 3]], ("add", "mul")),
    "one_tuple": ((3, 4), [1, -2], ("none", "add")),
}


def scatter_model(case, dtype, reduction, constant_indices=False):
    dims, tuples, _ = CASES[case]
    tuples = np.array(tuples, np.int64)
    updates = tuples.shape[:-1] + dims[tuples.shape[-1]:]
    attrs = {} if reduction == "none" else {"reduction": reduction}
    nodes = [helper.make_node("ScatterND", ["data", "indices", "updates"], ["y"], **attrs)]
    inputs = [helper.make_tensor_value_info("data", TYPES[dtype], list(dims)),
              helper.make_tensor_value_info("updates", TYPES[dtype], list(updates))]
    inits = []
    if constant_indices:
        inits.append(numpy_helper.from_array(tuples, "indices"))
    else:  # computed: the tuples arrive as an input, as the exporters' coordinates do
        inputs.append(helper.make_tensor_value_info("indices", TensorProto.INT64, list(tuples.shape)))
    graph = helper.make_graph(nodes, "scatter", inputs, [helper.make_tensor_value_info("y", TYPES[dtype], None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)], ir_version=8), tuples


def feeds(model_tuples, dtype, with_indices):
    model, tuples = model_tuples
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    rng = np.random.default_rng(38)
    # Small integers (in float32 too): every order of a reduction gives the same value, and a
    # misplaced element shows.
    out = {"data": rng.integers(-9, 10, shapes["data"]).astype(dtype),
           "updates": rng.integers(-9, 10, shapes["updates"]).astype(dtype)}
    if with_indices:
        out["indices"] = tuples
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda t: t.__name__)
@pytest.mark.parametrize("case,reduction", [(c, r) for c, (_, _, rs) in CASES.items() for r in rs])
def test_a_computed_scatter_nd_for_litert_is_a_scatter_elements(case, reduction, dtype):
    model, tuples = scatter_model(case, dtype, reduction)
    static, _ = static_model(model, "--target", "litert")
    ops = [n.op_type for n in static.graph.node]
    assert "ScatterND" not in ops and ops.count("ScatterElements") == 1, ops
    x = feeds((model, tuples), dtype, True)
    (want,) = session(model, library=False).run(None, x)
    (got,) = run_declared(session(static, library=False), x)
    assert_exact(got, want, f"{case} {reduction} {dtype.__name__}")


@pytest.mark.parametrize("target", ["generic", "qnn", "rknn"])
def test_other_targets_keep_the_scatter_nd(target):
    model, tuples = scatter_model("pairs", np.float32, "add")
    static, _ = static_model(model, "--target", target)
    assert [n.op_type for n in static.graph.node] == ["ScatterND"]


def test_a_scatter_nd_at_constant_indices_stays_for_litert():
    model, tuples = scatter_model("rows", np.float32, "add", constant_indices=True)
    static, _ = static_model(model, "--target", "litert")
    assert [n.op_type for n in static.graph.node] == ["ScatterND"]
    x = feeds((model, tuples), np.float32, False)
    assert_exact(session(static, library=False).run(None, x)[0], session(model, library=False).run(None, x)[0])
