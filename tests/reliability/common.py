"""Helpers of the reliability tests: models of NonZero and the `nonzero`-domain ops, random inputs
of every tested type, the numpy oracles, and /proc figures. Shares tests/python/conftest.py's session() (loaded under another name,
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


# The ops the suite drives: ONNX NonZero and the `nonzero`-domain ops (opset 1, docs/ops.md).
OPS = ("NonZero", "ArgWhere", "BooleanMask", "NonZeroCoordinates")


def output_names(op, name):
    """The outputs of the node over input `name`: NonZeroCoordinates has Count then Coordinates."""
    return ["c_" + name, "y_" + name] if op == "NonZeroCoordinates" else ["y_" + name]


def op_model(op, inputs, opset=13):
    """One `op` node per (input name, ONNX type), named nz_<input>, outputs output_names(); every
    input has unknown rank and shape. A BooleanMask node also takes the bool input m_<input>."""
    vi = helper.make_tensor_value_info
    ins, outs, nodes = [], [], []
    for name, elem in inputs:
        ins.append(vi(name, elem, None))
        node_inputs = [name]
        if op == "BooleanMask":
            ins.append(vi("m_" + name, TensorProto.BOOL, None))
            node_inputs.append("m_" + name)
        if op == "NonZeroCoordinates":
            outs += [vi("c_" + name, TensorProto.UINT32, [1]), vi("y_" + name, TensorProto.UINT32, [None, None])]
        else:
            out_elem = elem if op == "BooleanMask" else TensorProto.INT64
            outs.append(vi("y_" + name, out_elem, None if op == "BooleanMask" else [None, None]))
        domain = "" if op == "NonZero" else "nonzero"
        nodes.append(helper.make_node(op, node_inputs, output_names(op, name), name="nz_" + name, domain=domain))
    graph = helper.make_graph(nodes, "g", ins, outs)
    opsets = [helper.make_opsetid("", opset)] + ([] if op == "NonZero" else [helper.make_opsetid("nonzero", 1)])
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    return model


def nonzero_model(inputs, opset=13):
    """op_model for ONNX NonZero."""
    return op_model("NonZero", inputs, opset)


def op_feeds(rng, op, name, x):
    """The feeds of the `op` node over input `name` holding x. BooleanMask gets a random mask over
    x's leading k >= 1 dimensions (k and the density drawn from rng; a scalar x becomes [1])."""
    if op != "BooleanMask":
        return {name: x}
    if x.ndim == 0:
        x = x.reshape(1)
    k = int(rng.integers(1, x.ndim + 1))
    density = rng.choice([0.0, 0.01, 0.3, 0.9, 1.0])
    return {name: x, "m_" + name: rng.random(x.shape[:k]) < density}


def expected_outputs(op, feeds, name):
    """numpy's answer for the `op` node over input `name`, one array per output_names() entry."""
    x = feeds[name]
    if op == "NonZero":
        return [expected_nonzero(x)]
    if op == "BooleanMask":
        return [x[feeds["m_" + name]]]
    rows = expected_nonzero(x).T  # [nnz, rank]; a scalar gives [nnz, 0]
    if op == "ArgWhere":
        return [np.ascontiguousarray(rows)]
    # NonZeroCoordinates with the default columns (the rank): rows past Count are 0.
    coordinates = np.zeros((x.size, x.ndim), np.uint32)
    coordinates[: len(rows)] = rows
    return [np.array([len(rows)], np.uint32), coordinates]


def same(got, want):
    """Exact equality: dtype, shape and values, floats compared bit for bit (NaN, -0.0)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind == "f":
        bits = f"u{want.dtype.itemsize}"
        return np.array_equal(np.ascontiguousarray(got).view(bits), np.ascontiguousarray(want).view(bits))
    return np.array_equal(got, want)


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
