"""The library's two registrations (issue 19): by default NonZero replaces ONNX Runtime's own in
the ONNX domain; with the session config entry nonzero.onnx_domain = 0 (set before the library is
registered) only the `nonzero` domain is registered, NonZero there included. Both in one process,
interleaved: the library keeps one set of op tables per registration. The host's released-opset
check and backend suite in that mode: test_host_unchanged.py."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from conftest import LIB, assert_exact, session


def nonzero_model(domain, elem, shape):
    node = helper.make_node("NonZero", ["x"], ["y"], domain=domain, name="nz")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", elem, shape)],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )
    imports = [helper.make_opsetid("", 17)] + ([helper.make_opsetid("nonzero", 1)] if domain else [])
    return helper.make_model(graph, opset_imports=imports, ir_version=8)


def run(domain, x, elem, onnx_domain):
    (y,) = session(nonzero_model(domain, elem, list(x.shape)), onnx_domain=onnx_domain).run(None, {"x": x})
    return y


CASES = [
    (np.array([[0.0, 1.5], [-0.0, np.nan]]), TensorProto.DOUBLE),
    (np.array([[0, 3, 0], [7, 0, 0]], np.int8), TensorProto.INT8),
    (np.array(["", "a", "", "\0"], dtype=object), TensorProto.STRING),
    (np.array([True, False, True]), TensorProto.BOOL),
    (np.array(2.5, np.float32), TensorProto.FLOAT),  # a scalar: [0, nnz], as the ONNX text says
]


@pytest.mark.parametrize("onnx_domain", [True, False], ids=["onnx-domain", "nonzero-domain-only"])
@pytest.mark.parametrize("x,elem", CASES, ids=[str(c[0].dtype) + str(c[0].shape) for c in CASES])
def test_nonzero_domain_nonzero_is_onnx_nonzero_in_both_registrations(x, elem, onnx_domain):
    nnz = np.count_nonzero(x != "") if x.dtype == object else np.count_nonzero(x)
    # numpy refuses 0-d input; ONNX's scalar answer is [0, nnz] with no coordinates.
    want = np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1) if x.ndim else np.zeros((0, nnz), np.int64)
    assert_exact(run("nonzero", x, elem, onnx_domain), want, "nonzero.NonZero")


def test_both_registrations_in_one_process_run_on_their_own_kernels():
    scalar = np.array(2.5, np.float32)
    double = np.array([0.0, 3.0, 0.0, -1.0])
    for _ in range(2):  # interleaved: each registration keeps its own op tables
        # Default: the ONNX-domain NonZero is the library's: [0, nnz] for a scalar, and double runs.
        y = run("", scalar, TensorProto.FLOAT, onnx_domain=True)
        assert y.dtype == np.int64 and y.shape == (0, 1), y
        assert_exact(run("", double, TensorProto.DOUBLE, True), np.array([[1, 3]], np.int64), "double")
        # Domain only: ONNX Runtime's own kernel takes the ONNX-domain node, with its behaviour:
        # numpy's [1, nnz] for a scalar, and NOT_IMPLEMENTED for double.
        y = run("", scalar, TensorProto.FLOAT, onnx_domain=False)
        assert y.dtype == np.int64 and y.tolist() == [[0]], y
        with pytest.raises(Exception, match="NOT_IMPLEMENTED|Could not find an implementation"):
            run("", double, TensorProto.DOUBLE, False)
        # ... while nonzero.NonZero in the same session kind runs on the library.
        assert_exact(run("nonzero", double, TensorProto.DOUBLE, False), np.array([[1, 3]], np.int64), "double")


@pytest.mark.parametrize("value", ["", "false", "2"])
def test_a_bad_onnx_domain_entry_fails_registration_naming_the_entry(value):
    so = ort.SessionOptions()
    so.add_session_config_entry("nonzero.onnx_domain", value)
    with pytest.raises(Exception) as e:
        so.register_custom_ops_library(str(LIB))
    assert f'session config entry nonzero.onnx_domain = "{value}" is not valid: use "1"' in str(e.value)
