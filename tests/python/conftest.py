"""Shared set-up for the end-to-end tests: a real ONNX Runtime (from PyPI) with the real
libnonzero_ort.so, and the conformance pack written by `nonzero conformance`."""

import os
import pathlib
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
LIB = pathlib.Path(os.environ.get("NONZERO_ORT_LIB", ROOT / "target/release/libnonzero_ort.so"))
CLI = ROOT / "target/release/nonzero"
PACK = pathlib.Path(os.environ.get("NONZERO_PACK", ROOT / "build/conformance"))
ORT_VERSION = tuple(int(p) for p in ort.__version__.split(".")[:2])
# Feeding bfloat16 from numpy needs OrtValue.ortvalue_from_numpy_with_onnx_type (ORT >= 1.18);
# older hosts get bf16 coverage from the Rust runner (`nonzero run`) instead.
CAN_FEED_BF16 = hasattr(ort.OrtValue, "ortvalue_from_numpy_with_onnx_type")


def pytest_report_header(config):
    return f"onnxruntime {ort.__version__}, library {LIB}"


def ensure_pack() -> pathlib.Path:
    if not (PACK / "manifest.json").exists():
        if not CLI.exists():
            raise RuntimeError(f"{CLI} is missing: run scripts/setup first")
        subprocess.run([str(CLI), "conformance", "--out", str(PACK)], check=True)
    return PACK


def case_dirs(root: pathlib.Path):
    return sorted(p.parent for p in root.glob("*/model.onnx"))


def session(model, library=True, threads=None):
    """An InferenceSession on the CPU provider, with or without our library."""
    so = ort.SessionOptions()
    so.log_severity_level = 3
    if threads is not None:
        so.intra_op_num_threads = threads
    if library:
        if not LIB.exists():
            raise RuntimeError(f"{LIB} is missing: run scripts/setup first")
        so.register_custom_ops_library(str(LIB))
    if isinstance(model, onnx.ModelProto):
        model = model.SerializeToString()
    elif isinstance(model, pathlib.Path):
        model = str(model)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def tensor_to_numpy(t: TensorProto) -> np.ndarray:
    """Like numpy_helper.to_array, but bfloat16 comes back as its uint16 bit patterns and
    strings as Python str (what onnxruntime takes)."""
    if t.data_type == TensorProto.BFLOAT16:
        if t.raw_data:
            a = np.frombuffer(t.raw_data, dtype="<u2").copy()
        else:
            a = np.array(t.int32_data, dtype=np.uint16)
        return a.reshape(tuple(t.dims))
    a = numpy_helper.to_array(t)
    if t.data_type == TensorProto.STRING:
        a = np.vectorize(lambda s: s.decode("utf-8") if isinstance(s, bytes) else s, otypes=[object])(a)
        a = a.astype(object).reshape(tuple(t.dims))
    return a


def load_case(case: pathlib.Path):
    """(model path, [(TensorProto, ndarray)] inputs, [ndarray] expected outputs)."""
    data = case / "test_data_set_0"
    inputs, outputs = [], []
    for i in range(len(list(data.glob("input_*.pb")))):
        t = onnx.load_tensor(str(data / f"input_{i}.pb"))
        inputs.append((t, tensor_to_numpy(t)))
    for i in range(len(list(data.glob("output_*.pb")))):
        outputs.append(tensor_to_numpy(onnx.load_tensor(str(data / f"output_{i}.pb"))))
    return case / "model.onnx", inputs, outputs


def run(sess, inputs):
    """Runs with numpy feeds, or OrtValues when an input is bfloat16."""
    names = [i.name for i in sess.get_inputs()]
    if any(t.data_type == TensorProto.BFLOAT16 for t, _ in inputs):
        if not CAN_FEED_BF16:
            pytest.skip(f"onnxruntime {ort.__version__} cannot feed bfloat16 from Python (covered by `nonzero run`)")
        feeds = {
            n: ort.OrtValue.ortvalue_from_numpy_with_onnx_type(a, t.data_type)
            if t.data_type == TensorProto.BFLOAT16
            else ort.OrtValue.ortvalue_from_numpy(a)
            for n, (t, a) in zip(names, inputs)
        }
        return [v.numpy() for v in sess.run_with_ort_values(None, feeds)]
    return sess.run(None, {n: a for n, (_, a) in zip(names, inputs)})


def numpy_nonzero(t: TensorProto, a: np.ndarray) -> np.ndarray:
    """numpy.nonzero as an ONNX output: [rank, nnz] int64, except a scalar gives [0, nnz]."""
    if t.data_type == TensorProto.BFLOAT16:
        mask = (a & 0x7FFF) != 0
    elif t.data_type == TensorProto.STRING:
        mask = np.vectorize(lambda s: len(s) != 0, otypes=[bool])(a) if a.size else np.zeros(a.shape, bool)
    else:
        mask = a != 0
    if mask.ndim == 0:
        return np.zeros((0, int(bool(mask))), dtype=np.int64)
    return np.array(np.nonzero(mask), dtype=np.int64).reshape(mask.ndim, -1)


def assert_exact(got: np.ndarray, expected: np.ndarray, what=""):
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    assert np.array_equal(got, expected), f"{what}: values differ"
