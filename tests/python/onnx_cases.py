"""Reading and running cases in ONNX's test-case layout (model.onnx +
test_data_set_0/{input,output}_N.pb), shared by the end-to-end suite (tests/python) and by the
installed-package check (tests/python-package, which also runs this file's functions inside a
fresh virtual environment). It imports no pytest and no library, and imports onnxruntime only
when a session is run, so the package tests' driver can use it without loading onnxruntime."""

import os
import pathlib
import subprocess

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLI = pathlib.Path(os.environ.get("NONZERO_CLI", ROOT / "target/release/nonzero"))
PACK = pathlib.Path(os.environ.get("NONZERO_PACK", ROOT / "build/conformance")).resolve()


def ensure_pack() -> pathlib.Path:
    """The conformance pack, written by `nonzero conformance` if it is not there yet."""
    if not (PACK / "manifest.json").exists():
        if not CLI.exists():
            raise RuntimeError(f"{CLI} is missing: run scripts/setup first")
        subprocess.run([str(CLI), "conformance", "--out", str(PACK)], check=True)
    return PACK


def case_dirs(root: pathlib.Path):
    return sorted(p.parent for p in root.glob("*/model.onnx"))


def tensor_to_numpy(t: TensorProto) -> np.ndarray:
    """Like numpy_helper.to_array, but bfloat16 comes back as its uint16 bit patterns and strings
    as Python str read from the raw bytes (numpy_helper drops a string's "\0")."""
    if t.data_type == TensorProto.BFLOAT16:
        if t.raw_data:
            a = np.frombuffer(t.raw_data, dtype="<u2").copy()
        else:
            a = np.array(t.int32_data, dtype=np.uint16)
        return a.reshape(tuple(t.dims))
    if t.data_type == TensorProto.STRING:
        a = np.empty(len(t.string_data), dtype=object)
        a[:] = [s.decode("utf-8") for s in t.string_data]
        return a.reshape(tuple(t.dims))
    return numpy_helper.to_array(t)


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
    import onnxruntime as ort

    names = [i.name for i in sess.get_inputs()]
    if any(t.data_type == TensorProto.BFLOAT16 for t, _ in inputs):
        feeds = {
            n: ort.OrtValue.ortvalue_from_numpy_with_onnx_type(a, t.data_type)
            if t.data_type == TensorProto.BFLOAT16
            else ort.OrtValue.ortvalue_from_numpy(a)
            for n, (t, a) in zip(names, inputs)
        }
        return [v.numpy() for v in sess.run_with_ort_values(None, feeds)]
    return sess.run(None, {n: a for n, (_, a) in zip(names, inputs)})


def assert_exact(got: np.ndarray, expected: np.ndarray, what=""):
    assert got.dtype == expected.dtype, f"{what}: dtype {got.dtype} != {expected.dtype}"
    assert got.shape == expected.shape, f"{what}: shape {got.shape} != {expected.shape}"
    assert np.array_equal(got, expected), f"{what}: values differ"


def nodes_that_ran(session):
    """(node name, op type) of every node ONNX Runtime's profiler saw run in `session` (created
    with SessionOptions.enable_profiling); ends the profile and removes its file. A node of the
    library keeps its model name; the nodes of an inlined function body get new ones."""
    import json

    path = session.end_profiling()
    try:
        with open(path) as f:
            events = json.load(f)
    finally:
        os.unlink(path)
    return {(e["name"].removesuffix("_kernel_time"), e["args"]["op_name"])
            for e in events if e.get("cat") == "Node" and "op_name" in e.get("args", {})}


def unread_nodes(model):
    """The main graph's nodes none of whose outputs anything reads (a node, a body or a graph
    output): `--static` leaves none (crates/emit-static/src/dead.rs). ONNX Runtime 1.17.3 and
    1.18.1 gave such tensors buffers that overlapped live ones from a session's second run on."""
    def read_in(graph):
        names = {o.name for o in graph.output}
        for node in graph.node:
            names.update(node.input)
            for a in node.attribute:
                for body in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                    names |= read_in(body)
        return names

    read = read_in(model.graph)
    return [(n.op_type, n.output[0]) for n in model.graph.node if n.output and not read.intersection(n.output)]
