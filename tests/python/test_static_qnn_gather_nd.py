"""Issue 38: under `--static --target qnn`, a GatherND at constant indices is a Gather of the data
flattened over the axes the tuples name, at each tuple's row (crates/emit-static/src/qnn/
gather_nd.rs): QNN HTP sends a GatherND to the CPU EP (BART dynamo18's attention mask). The form
must equal ONNX Runtime's GatherND exactly (dtype, shape, values) for tuples of every width,
negative indices and index arrays of any rank; a GatherND with batch_dims, at computed
indices, or naming an element outside the data stays, and so does every other target's."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import assert_exact
from static_cases import run_static, static_model

TYPES = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64}
# name: (data dims, index tuples). Each case has an index counted from the end.
CASES = {
    "elements": ((2, 12), [[[[0, 3], [1, -1], [-2, 11]]], [[[1, 0], [0, 0], [1, 5]]]]),
    "rows": ((4, 3, 2), [[-1], [0], [2], [2]]),
    "pairs": ((4, 3, 2), [[[0, -1], [3, 2]], [[1, 1], [-4, 0]]]),
    "one_tuple": ((5, 3), [-5, 2]),
}


def gather_nd_model(dims, tuples, dtype=np.float32, batch_dims=None, constant=True):
    tuples = np.array(tuples, np.int64)
    attrs = {} if batch_dims is None else {"batch_dims": batch_dims}
    inputs = [helper.make_tensor_value_info("data", TYPES[dtype], list(dims))]
    inits = []
    if constant:
        inits.append(numpy_helper.from_array(tuples, "indices"))
    else:
        inputs.append(helper.make_tensor_value_info("indices", TensorProto.INT64, list(tuples.shape)))
    graph = helper.make_graph([helper.make_node("GatherND", ["data", "indices"], ["y"], **attrs)], "gather_nd",
                              inputs, [helper.make_tensor_value_info("y", TYPES[dtype], None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7), tuples


def data_feed(dims, dtype):
    return {"data": np.random.default_rng(38).integers(-99, 100, dims).astype(dtype)}


@pytest.mark.parametrize("dtype", [np.float32, np.int64], ids=lambda t: t.__name__)
@pytest.mark.parametrize("case", CASES)
def test_a_constant_gather_nd_for_qnn_is_a_gather(case, dtype):
    dims, tuples = CASES[case]
    model, _ = gather_nd_model(dims, tuples, dtype)
    static, _ = static_model(model, "--target", "qnn")
    ops = [n.op_type for n in static.graph.node]
    assert "GatherND" not in ops and ops.count("Gather") == 1, ops
    x = data_feed(dims, dtype)
    (want,) = session(model, library=False).run(None, x)
    (got,) = session(static, library=False).run(None, x)
    assert_exact(got, want, f"{case} {dtype.__name__}")


@pytest.mark.parametrize("kept", ["batch_dims", "computed", "out_of_range"])
def test_a_gather_nd_the_gather_cannot_replace_is_kept(kept):
    dims = CASES["pairs"][0]
    model, values = {
        # one tuple of width 1 per batch row
        "batch_dims": lambda: gather_nd_model(dims, [[1], [-1], [0], [2]], batch_dims=1),
        "computed": lambda: gather_nd_model(dims, CASES["pairs"][1], constant=False),
        # axis 1 has 3 rows: 3 is outside
        "out_of_range": lambda: gather_nd_model(dims, [[[0, 3], [3, 2]], [[1, 1], [-4, 0]]]),
    }[kept]()
    returncode, text, static, _ = run_static(model, "--target", "qnn", "--allow-dynamic")
    assert returncode == 0, text
    assert [n.op_type for n in static.graph.node] == ["GatherND"]
    x = data_feed(dims, np.float32)
    if kept == "computed":
        x["indices"] = values
    if kept == "out_of_range":  # both refuse to run, as the model's own GatherND does
        for m in (model, static):
            with pytest.raises(Exception, match="(?i)out of bounds|invalid"):
                session(m, library=False).run(None, x)
        return
    (want,) = session(model, library=False).run(None, x)
    (got,) = session(static, library=False).run(None, x)
    assert_exact(got, want, kept)


@pytest.mark.parametrize("target", ["generic", "litert", "rknn"])
def test_other_targets_keep_the_gather_nd(target):
    model, _ = gather_nd_model(*CASES["pairs"])
    static, _ = static_model(model, "--target", target)
    assert [n.op_type for n in static.graph.node] == ["GatherND"]
