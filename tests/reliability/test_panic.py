"""A panic inside the library's compute (injected by NONZERO_ORT_INJECT_PANIC, read when the kernel
is created) reaches the host as an ORT error status and the process keeps working. Runs in a
subprocess so the variable never touches this test process."""

import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent


def test_injected_panic_is_an_ort_error_and_the_process_survives():
    env = dict(os.environ, NONZERO_ORT_INJECT_PANIC="nz_boom", PYTHONPATH=str(HERE))
    proc = subprocess.run(
        [sys.executable, str(HERE / "panic_child.py")],
        env=env, capture_output=True, text=True, timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"child exited with {proc.returncode}:\n{out}"
    assert "PANIC-CHILD-OK" in proc.stdout, out
    assert proc.stdout.count("error as expected") == 2, out


def test_variable_unset_means_no_panic():
    env = {k: v for k, v in os.environ.items() if k != "NONZERO_ORT_INJECT_PANIC"}
    env["PYTHONPATH"] = str(HERE)
    code = (
        "import numpy as np; from onnx import TensorProto; from common import *;"
        "s = session(nonzero_model([('boom', TensorProto.FLOAT)]));"
        "x = np.array([0, 1, 0, 2], np.float32);"
        "assert np.array_equal(s.run(None, {'boom': x})[0], expected_nonzero(x)); print('OK')"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr
