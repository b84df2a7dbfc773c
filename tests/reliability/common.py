"""Helpers of the reliability tests: NonZero models, random inputs of every tested type, the numpy
oracle, and /proc figures. Shares tests/python/conftest.py's session() (loaded under another name,
since this directory has its own conftest)."""

import importlib.util
import os
import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/python"))  # that conftest imports its sibling onnx_cases.py
_spec = importlib.util.spec_from_file_location("nonzero_py_conftest", ROOT / "tests/python/conftest.py")
py = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(py)
session = py.session
LIB = py.LIB

# The element types the concurrency test mixes: name -> (ONNX type, numpy dtype).
TYPES = {
    "float": (TensorProto.FLOAT, np.float32),
    "int8": (TensorProto.INT8, np.int8),
    "bool": (TensorProto.BOOL, np.bool_),
    "double": (TensorProto.DOUBLE, np.float64),
    "string": (TensorProto.STRING, object),
    "f16": (TensorProto.FLOAT16, np.float16),
}


def nonzero_model(inputs, opset=13):
    """One NonZero node per (input name, ONNX type), named nz_<input>, output y_<input>; every
    input has unknown rank and shape."""
    ins, outs, nodes = [], [], []
    for name, elem in inputs:
        ins.append(helper.make_tensor_value_info(name, elem, None))
        outs.append(helper.make_tensor_value_info("y_" + name, TensorProto.INT64, [None, None]))
        nodes.append(helper.make_node("NonZero", [name], ["y_" + name], name="nz_" + name))
    graph = helper.make_graph(nodes, "g", ins, outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def random_tensor(rng, kind, shape, density=None):
    """Random data of `kind` in `shape` with the awkward values: -0.0 and NaN for floats, "" and
    whitespace for strings."""
    density = rng.choice([0.0, 0.01, 0.3, 0.9, 1.0]) if density is None else density
    mask = rng.random(shape) < density
    if kind == "string":
        words = np.array(["a", " ", "\0", "nonzero", "é"], dtype=object)
        a = np.where(mask, words[rng.integers(0, len(words), shape)], "").astype(object)
        return np.asarray(a, dtype=object).reshape(shape)
    if kind == "bool":
        return np.asarray(mask, dtype=np.bool_)
    _, dtype = TYPES[kind]
    if kind == "int8":
        vals = rng.integers(-128, 128, shape).astype(np.int8)
        vals[vals == 0] = 1
    else:
        vals = rng.standard_normal(shape).astype(dtype)
        special = rng.random(shape)
        vals[special < 0.02] = np.nan
        vals[(special >= 0.02) & (special < 0.03)] = np.inf
    zeros = np.where(rng.random(shape) < 0.5, -0.0, 0.0).astype(dtype) if kind in ("float", "double", "f16") else np.zeros(shape, dtype)
    return np.asarray(np.where(mask, vals, zeros), dtype=dtype)


def expected_nonzero(a):
    """ONNX NonZero by numpy: [rank, nnz] int64; a scalar gives [0, nnz] (the ONNX text)."""
    if a.dtype == object:
        mask = np.array([len(s) != 0 for s in a.reshape(-1)], dtype=bool).reshape(a.shape)
    else:
        mask = a != 0  # NaN != 0, -0.0 == 0
    if mask.ndim == 0:
        return np.zeros((0, int(bool(mask))), dtype=np.int64)
    return np.array(np.nonzero(mask), dtype=np.int64).reshape(mask.ndim, -1)


def proc_figures():
    """(VmRSS KiB, open fds, threads) of this process, from /proc/self."""
    status = pathlib.Path("/proc/self/status").read_text().splitlines()
    field = lambda name: int(next(l for l in status if l.startswith(name + ":")).split()[1])
    return field("VmRSS"), len(os.listdir("/proc/self/fd")), field("Threads")
