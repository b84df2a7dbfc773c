"""Run inside the fresh environment: every case directory given on the command line (ONNX's
test-case layout: model.onnx + test_data_set_0/{input,output}_N.pb) through onnxruntime with
the *installed* nonzero_ort (registered with nonzero_ort.register), compared exactly with the
stored outputs. Prints one JSON line: {"library": ..., "compared": [case names]}. Any mismatch or
error raises (non-zero exit). The first argument is tests/python, for the case IO it shares with
the end-to-end suite (onnx_cases.py, which imports no nonzero_ort, so the package under test is
still the installed one)."""

import json
import pathlib
import sys

import onnxruntime as ort

import nonzero_ort

sys.path.insert(0, sys.argv[1])
from onnx_cases import assert_exact, load_case, run  # noqa: E402
# Releases that cannot feed bfloat16 from Python (before 1.20) get it from a Cast node.
from conftest import CAN_FEED_BF16, bf16_via_cast  # noqa: E402
from onnx import TensorProto  # noqa: E402


def run_case(case: pathlib.Path):
    model, inputs, expected = load_case(case)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    assert nonzero_ort.register(so) is so
    if not CAN_FEED_BF16 and any(t.data_type == TensorProto.BFLOAT16 for t, _ in inputs):
        cast_model, feeds = bf16_via_cast(model, inputs)
        sess = ort.InferenceSession(cast_model.SerializeToString(), so, providers=["CPUExecutionProvider"])
        got = sess.run(None, feeds)
    else:
        sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
        got = run(sess, inputs)
    assert len(got) == len(expected), f"{case.name}: {len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        assert_exact(g, e, f"{case.name} output {i}")


def main(cases):
    assert cases, "no cases given"
    compared = []
    for case in map(pathlib.Path, cases):
        run_case(case)
        compared.append(case.name)
    print(json.dumps({"library": nonzero_ort.get_library_path(), "ort": ort.__version__, "compared": compared}))


if __name__ == "__main__":
    main(sys.argv[2:])
