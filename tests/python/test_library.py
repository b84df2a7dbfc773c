"""What loading the library changes in ONNX Runtime: our kernel runs (types the built-in lacks
now work), models that ran before still run, malformed NonZero nodes are rejected cleanly, the
output shape is inferred, and the thread count does not change results."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from conftest import ORT_VERSION, assert_exact, session

NP_TYPES = {
    TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16,
    TensorProto.BOOL: np.bool_, TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8,
    TensorProto.INT16: np.int16, TensorProto.UINT16: np.uint16, TensorProto.INT32: np.int32,
    TensorProto.UINT32: np.uint32, TensorProto.INT64: np.int64, TensorProto.UINT64: np.uint64,
}


def nonzero_model(elem, shape, opset=13, inputs=("x",), output_type=TensorProto.INT64):
    ins = [helper.make_tensor_value_info(n, elem, shape) for n in inputs]
    out = helper.make_tensor_value_info("y", output_type, None)
    node = helper.make_node("NonZero", list(inputs), ["y"], name="nz")
    graph = helper.make_graph([node], "g", ins, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("elem", [TensorProto.INT8, TensorProto.DOUBLE, TensorProto.UINT16, TensorProto.STRING])
def test_types_the_builtin_lacks_run_only_with_the_library(elem):
    if elem == TensorProto.STRING:
        x = np.array([["", "a"], ["b", ""], ["", " "]], dtype=object)
    else:
        x = np.array([[0, 1], [2, 0], [0, 3]], dtype=NP_TYPES[elem])
    model = nonzero_model(elem, [3, 2])
    with pytest.raises(Exception, match="NOT_IMPLEMENTED|Could not find an implementation"):
        session(model, library=False).run(None, {"x": x})
    (got,) = session(model).run(None, {"x": x})
    assert_exact(got, np.array([[0, 1, 2], [1, 0, 1]], dtype=np.int64))


@pytest.mark.parametrize("elem", [TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT32, TensorProto.INT64, TensorProto.UINT8])
@pytest.mark.parametrize(
    "opset",
    [9, 11, 13, 17, pytest.param(21, marks=pytest.mark.skipif(ORT_VERSION < (1, 20), reason="opset 21 needs ONNX Runtime 1.20+"))],
)
def test_models_the_builtin_ran_still_run_and_agree(elem, opset):
    rng = np.random.default_rng(elem * 100 + opset)
    x = (rng.random((4, 5, 6)) < 0.4).astype(NP_TYPES[elem])
    model = nonzero_model(elem, [4, 5, 6], opset=opset)
    (builtin,) = session(model, library=False).run(None, {"x": x})
    (ours,) = session(model).run(None, {"x": x})
    assert_exact(ours, builtin, f"opset {opset}")
    assert_exact(ours, np.array(np.nonzero(x), dtype=np.int64))


def test_scalar_follows_the_onnx_text_not_the_builtin():
    model = nonzero_model(TensorProto.FLOAT, [])
    (ours,) = session(model).run(None, {"x": np.array(2.5, np.float32)})
    assert_exact(ours, np.zeros((0, 1), np.int64))
    (builtin,) = session(model, library=False).run(None, {"x": np.array(2.5, np.float32)})
    assert builtin.shape == (1, 1)  # ONNX Runtime's own kernel follows numpy here


def test_output_shape_is_inferred_as_rank_by_symbol():
    sess = session(nonzero_model(TensorProto.FLOAT, [2, "n", 3]))
    rank, nnz = sess.get_outputs()[0].shape
    assert rank == 3 and isinstance(nnz, str) and nnz.startswith("nonzero_nnz_")
    other = session(nonzero_model(TensorProto.FLOAT, [2, 3]))
    assert other.get_outputs()[0].shape[1] != nnz, "two NonZero outputs must not share a length symbol"


@pytest.mark.parametrize(
    "model, error",
    [
        (nonzero_model(TensorProto.FLOAT, [2], inputs=("x", "x2")), "INVALID_GRAPH|input|arity|Input"),
        (nonzero_model(TensorProto.FLOAT, [2], inputs=()), "INVALID_GRAPH|input|Input"),
        (nonzero_model(TensorProto.FLOAT, [2], output_type=TensorProto.FLOAT), "INVALID_GRAPH|Type|type"),
    ],
    ids=["two-inputs", "no-input", "float-output"],
)
def test_malformed_nonzero_nodes_fail_to_load_cleanly(model, error):
    with pytest.raises(Exception, match=error):
        session(model)
    # The process is intact and the library still works afterwards.
    (got,) = session(nonzero_model(TensorProto.FLOAT, [3])).run(None, {"x": np.array([0, 1, 2], np.float32)})
    assert_exact(got, np.array([[1, 2]], np.int64))


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_thread_counts_give_identical_results(threads):
    rng = np.random.default_rng(7)
    x = (rng.random((512, 1024, 3)) < 0.3).astype(np.float32)  # 1.5M elements: parallel path
    x[x == 0] = -0.0
    x[::97, ::13, 1] = np.nan
    (got,) = session(nonzero_model(TensorProto.FLOAT, list(x.shape)), threads=threads).run(None, {"x": x})
    assert_exact(got, np.array(np.nonzero(x), dtype=np.int64))


def test_float16_bit_patterns():
    bits = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x7C00, 0x7E00, 0xFC00, 0x3C00], dtype=np.uint16)
    x = bits.view(np.float16)
    (got,) = session(nonzero_model(TensorProto.FLOAT16, [8])).run(None, {"x": x})
    assert_exact(got, np.array([[2, 3, 4, 5, 6, 7]], np.int64))


def test_library_loads_into_many_sessions():
    model = nonzero_model(TensorProto.INT32, [4]).SerializeToString()
    sessions = [session(model) for _ in range(20)]
    for s in sessions:
        (got,) = s.run(None, {"x": np.array([0, 5, 0, 7], np.int32)})
        assert_exact(got, np.array([[1, 3]], np.int64))
