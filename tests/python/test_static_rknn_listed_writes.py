"""`--target rknn` caps a masked write's running count at its update list's length
(crates/emit-static/src/writes.rs): rknn-toolkit2 2.5.0 folds constants by running the model on
random inputs of its own, and where those select more elements than the list holds the gather
reads past its end and the build fails. TorchScript's export of `x[m] = v` (a row mask, v one
row) is such a model: it lists v once, `Slice(v, 0, nnz)`, so the original runs only where the
mask selects one row or none.

Where the original runs, every form equals it bit for bit. Where it fails (two rows selected), the
generic form fails too, and the rknn form writes the list's last element past its end. Only the
rknn form has the cap, and only where the list is shorter than the mask."""

import pathlib

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from conftest import session
from static_cases import make_static

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXPORT = ROOT / "models" / "real" / "torch_patterns" / "mask_assign_ts17.onnx"
ROWS = 7
SHAPES = {"x": [ROWS, 3], "m": [ROWS], "v": [3]}


def static_form(target, path=EXPORT, shapes=SHAPES):
    rc, out, made, _ = make_static(path, shapes, target=target)
    assert rc == 0 and made is not None, out
    return onnx.load(str(made))


def caps(model):
    """The Min nodes of the form, each as (its constant's value, the op that reads it)."""
    constants = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    readers = {i: n.op_type for n in model.graph.node for i in n.input}
    return [(int(constants[n.input[1]]), readers[n.output[0]]) for n in model.graph.node if n.op_type == "Min"]


def feeds(rows_selected, rng):
    mask = np.zeros(ROWS, bool)
    mask[rng.choice(ROWS, rows_selected, replace=False)] = True
    return {"x": rng.standard_normal((ROWS, 3)).astype(np.float32), "m": mask,
            "v": rng.standard_normal(3).astype(np.float32)}


@pytest.mark.parametrize("target", [None, "qnn", "litert", "rknn"])
def test_equal_where_the_original_runs(target):
    made = static_form(target)
    # The mask spread over x's 21 elements, the list 3 long: the rknn form's gather index is capped
    # at 3, the others' not at all.
    assert caps(made) == ([(3, "Gather")] if target == "rknn" else [])
    original, static = session(onnx.load(str(EXPORT)), library=False), session(made, library=False)
    rng = np.random.default_rng(11)
    for rows_selected in (0, 1, 1, 1):
        f = feeds(rows_selected, rng)
        (want,), (got,) = original.run(None, f), static.run(None, f)
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape == (ROWS, 3)
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), rows_selected


def test_past_the_list_the_rknn_form_writes_its_last_element():
    f = feeds(2, np.random.default_rng(5))
    # ONNX Runtime's error classes differ between releases (1.31.1 Fail, 1.17.3 RuntimeException).
    errors = ort.capi.onnxruntime_pybind11_state
    refused = (errors.InvalidArgument, errors.Fail, errors.RuntimeException)
    with pytest.raises(refused, match="updates tensor should have shape"):
        session(onnx.load(str(EXPORT)), library=False).run(None, f)
    with pytest.raises(refused, match="Out of range value in index tensor"):
        session(static_form(None), library=False).run(None, f)
    (got,) = session(static_form("rknn"), library=False).run(None, f)
    first, second = np.flatnonzero(f["m"])
    want = f["x"].copy()
    want[first] = f["v"]
    want[second] = f["v"][2]
    assert np.array_equal(got, want)


def test_a_list_as_long_as_the_mask_is_not_capped(tmp_path):
    """`x[m] = u` with u listing one value per element of the mask: no selection outruns it."""
    shape = [4, 5]
    # As TorchScript's exporter writes it: the list flattened, cut to the count.
    nodes = [helper.make_node("NonZero", ["m"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["at"], perm=[1, 0]),
             helper.make_node("Reshape", ["u", "flat"], ["flat_u"]),
             helper.make_node("Shape", ["at"], ["at_shape"]),
             helper.make_node("Gather", ["at_shape", "zero_scalar"], ["count"], axis=0),
             helper.make_node("Unsqueeze", ["count", "zero"], ["end"]),
             helper.make_node("Slice", ["flat_u", "zero", "end", "zero"], ["listed"]),
             helper.make_node("ScatterND", ["x", "at", "listed"], ["y"])]
    graph = helper.make_graph(
        nodes, "listed_write",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
         helper.make_tensor_value_info("m", TensorProto.BOOL, shape),
         helper.make_tensor_value_info("u", TensorProto.FLOAT, [20])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        initializer=[helper.make_tensor("zero", TensorProto.INT64, [1], [0]),
                     helper.make_tensor("zero_scalar", TensorProto.INT64, [], [0]),
                     helper.make_tensor("flat", TensorProto.INT64, [1], [-1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    path = tmp_path / "listed.onnx"
    onnx.save(model, str(path))
    made = static_form("rknn", path, {"x": shape, "m": shape, "u": [20]})
    assert [n.op_type for n in made.graph.node if n.op_type in ("Min", "Gather")] == ["Gather"]
    rng = np.random.default_rng(3)
    f = {"x": rng.standard_normal(shape).astype(np.float32), "m": rng.random(shape) < 0.5,
         "u": rng.standard_normal(20).astype(np.float32)}
    (want,), (got,) = session(model, library=False).run(None, f), session(made, library=False).run(None, f)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
