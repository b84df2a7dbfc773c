"""Run inside the fresh environment: every case directory given on the command line (ONNX's
test-case layout: model.onnx + test_data_set_0/{input,output}_N.pb) through onnxruntime with
the *installed* nonzero_ort (registered with nonzero_ort.register), compared exactly with the
stored outputs. Prints one JSON line: {"library": ..., "compared": [case names]}. Any mismatch or
error raises (non-zero exit). A mirror of tests/python/conftest.py's load_case/run/assert_exact,
kept standalone because that conftest loads the workspace's library, not the package's."""

import json
import pathlib
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, numpy_helper

import nonzero_ort


def tensor_to_numpy(t: TensorProto) -> np.ndarray:
    # bfloat16 as its uint16 bit patterns, strings as str read from the raw bytes.
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
    data = case / "test_data_set_0"
    n_in = len(list(data.glob("input_*.pb")))
    n_out = len(list(data.glob("output_*.pb")))
    inputs = [onnx.load_tensor(str(data / f"input_{i}.pb")) for i in range(n_in)]
    outputs = [tensor_to_numpy(onnx.load_tensor(str(data / f"output_{i}.pb"))) for i in range(n_out)]
    return case / "model.onnx", [(t, tensor_to_numpy(t)) for t in inputs], outputs


def run_case(case: pathlib.Path):
    model, inputs, expected = load_case(case)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    assert nonzero_ort.register(so) is so
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    if any(t.data_type == TensorProto.BFLOAT16 for t, _ in inputs):
        feeds = {
            n: ort.OrtValue.ortvalue_from_numpy_with_onnx_type(a, t.data_type)
            if t.data_type == TensorProto.BFLOAT16
            else ort.OrtValue.ortvalue_from_numpy(a)
            for n, (t, a) in zip(names, inputs)
        }
        got = [v.numpy() for v in sess.run_with_ort_values(None, feeds)]
    else:
        got = sess.run(None, {n: a for n, (_, a) in zip(names, inputs)})
    assert len(got) == len(expected), f"{case.name}: {len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        what = f"{case.name} output {i}"
        assert g.dtype == e.dtype, f"{what}: dtype {g.dtype} != {e.dtype}"
        assert g.shape == e.shape, f"{what}: shape {g.shape} != {e.shape}"
        assert np.array_equal(g, e), f"{what}: values differ"


def main(cases):
    assert cases, "no cases given"
    compared = []
    for case in map(pathlib.Path, cases):
        run_case(case)
        compared.append(case.name)
    print(json.dumps({"library": nonzero_ort.get_library_path(), "ort": ort.__version__, "compared": compared}))


if __name__ == "__main__":
    main(sys.argv[1:])
