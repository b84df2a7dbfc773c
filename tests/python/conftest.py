"""Shared set-up for the end-to-end tests: a real ONNX Runtime (from PyPI) with the real
libnonzero_ort.so, and the conformance pack written by `nonzero conformance`."""

import functools
import os
import pathlib

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto

from onnx_cases import ROOT, assert_exact, case_dirs, ensure_pack, load_case, run  # noqa: F401 (re-exported to the tests)

LIB = pathlib.Path(os.environ.get("NONZERO_ORT_LIB", ROOT / "target/release/libnonzero_ort.so"))
ORT_VERSION = tuple(int(p) for p in ort.__version__.split(".")[:2])
# Feeding bfloat16 from numpy needs OrtValue.ortvalue_from_numpy_with_onnx_type (ORT >= 1.18);
# older hosts get their bfloat16 input from a Cast node instead (see bf16_via_cast).
CAN_FEED_BF16 = hasattr(ort.OrtValue, "ortvalue_from_numpy_with_onnx_type")
COMPLEX = (TensorProto.COMPLEX64, TensorProto.COMPLEX128)


def pytest_report_header(config):
    return f"onnxruntime {ort.__version__}, library {LIB}"


def run_declared(sess, feeds):
    """`sess.run(None, feeds)`, a scalar feed for an input the model declares `[1]` given as `[1]`:
    the rknn and litert forms declare rank-0 inputs so (crates/emit-static/src/scalar_inputs.rs)."""
    declared = {i.name: i.shape for i in sess.get_inputs()}
    return sess.run(None, {k: v.reshape(1) if np.ndim(v) == 0 and declared.get(k) == [1] else v
                           for k, v in feeds.items()})


def session(model, library=True, threads=None, onnx_domain=True):
    """An InferenceSession on the CPU provider, with or without our library; onnx_domain=False
    registers the library's `nonzero` domain only (session config entry nonzero.onnx_domain = 0)."""
    so = ort.SessionOptions()
    so.log_severity_level = 3
    if threads is not None:
        so.intra_op_num_threads = threads
    if library and not onnx_domain:
        so.add_session_config_entry("nonzero.onnx_domain", "0")
    if library:
        if not LIB.exists():
            raise RuntimeError(f"{LIB} is missing: run scripts/setup first")
        so.register_custom_ops_library(str(LIB))
    if isinstance(model, onnx.ModelProto):
        model = model.SerializeToString()
    elif isinstance(model, pathlib.Path):
        model = str(model)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def bf16_via_cast(model_path: pathlib.Path, inputs):
    """For hosts that cannot take bfloat16 from numpy: feed float32 whose upper half is the
    bfloat16 bit pattern and let a Cast node (exact for such values) make the bfloat16 input."""
    model = onnx.load(str(model_path))
    graph = model.graph
    feeds = {}
    for vi, (t, a) in zip(list(graph.input), inputs):
        if t.data_type == TensorProto.BFLOAT16:
            wide = vi.name + "_as_float32"
            graph.node.insert(0, onnx.helper.make_node("Cast", [wide], [vi.name], to=TensorProto.BFLOAT16))
            vi.name = wide
            vi.type.tensor_type.elem_type = TensorProto.FLOAT
            feeds[wide] = (np.asarray(a, dtype=np.uint32).reshape(-1) << np.uint32(16)).astype(np.uint32).view(np.float32).reshape(a.shape)
        else:
            feeds[vi.name] = a
    return model, feeds


def run_case_model(model_path: pathlib.Path, inputs, **session_args):
    """Runs a case's model on its inputs (bfloat16 included, whatever the host version)."""
    if any(t.data_type == TensorProto.BFLOAT16 for t, _ in inputs) and not CAN_FEED_BF16:
        model, feeds = bf16_via_cast(model_path, inputs)
        return session(model, **session_args).run(None, feeds)
    return run(session(model_path, **session_args), inputs)


def numpy_nonzero(t: TensorProto, a: np.ndarray) -> np.ndarray:
    """numpy.nonzero as an ONNX output: [rank, nnz] int64, except a scalar gives [0, nnz]."""
    if t.data_type == TensorProto.BFLOAT16:
        mask = (a & 0x7FFF) != 0
    elif t.data_type in COMPLEX:
        mask = (a.real != 0) | (a.imag != 0)
    elif t.data_type == TensorProto.STRING:
        mask = np.vectorize(lambda s: len(s) != 0, otypes=[bool])(a) if a.size else np.zeros(a.shape, bool)
    else:
        mask = a != 0
    if mask.ndim == 0:
        return np.zeros((0, int(bool(mask))), dtype=np.int64)
    return np.array(np.nonzero(mask), dtype=np.int64).reshape(mask.ndim, -1)


@functools.cache
def backend_node_cases():
    """Every case of ONNX's backend node suite, collected once per process: onnx's
    collect_testcases imports its case modules only on the first call and keeps that call's op
    filter, so two calls with different filters in one pytest run would see one list."""
    from onnx.backend.test.case.node import collect_testcases

    return tuple(collect_testcases(None))  # None: every op (onnx < 1.17 has no default)
