"""For each op (NonZero and the `nonzero`-domain ops), a panic inside the library's compute
(injected by NONZERO_ORT_INJECT_PANIC, read when the kernel is created, in a library built with the
`fault-injection` cargo feature: see conftest.py) reaches the host as an ORT error status and the
process keeps working. Runs in a subprocess so the variable never touches this test process."""

import os
import pathlib
import subprocess
import sys

import pytest

from common import OPS

HERE = pathlib.Path(__file__).resolve().parent


@pytest.mark.parametrize("op", OPS)
def test_injected_panic_is_an_ort_error_and_the_process_survives(fault_injection_lib, op):
    env = dict(os.environ, NONZERO_ORT_INJECT_PANIC="nz_boom", PYTHONPATH=str(HERE),
               NONZERO_ORT_LIB=str(fault_injection_lib))
    proc = subprocess.run(
        [sys.executable, str(HERE / "panic_child.py"), op],
        env=env, capture_output=True, text=True, timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"child exited with {proc.returncode}:\n{out}"
    assert "PANIC-CHILD-OK" in proc.stdout, out
    assert proc.stdout.count("error as expected") == 2, out


NO_PANIC_RUN = (
    "import sys, numpy as np; from onnx import TensorProto; from common import *; op = sys.argv[1];"
    "s = session(op_model(op, [('boom', TensorProto.FLOAT)]));"
    "f = op_feeds(np.random.default_rng(0), op, 'boom', np.array([0, 1, 0, 2], np.float32));"
    "got, want = s.run(output_names(op, 'boom'), f), expected_outputs(op, f, 'boom');"
    "assert all(same(g, w) for g, w in zip(got, want)), (got, want); print('OK')"
)


def run_unbroken(env, op):
    proc = subprocess.run([sys.executable, "-c", NO_PANIC_RUN, op], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("op", OPS)
def test_variable_unset_means_no_panic(fault_injection_lib, op):
    env = {k: v for k, v in os.environ.items() if k != "NONZERO_ORT_INJECT_PANIC"}
    run_unbroken(dict(env, PYTHONPATH=str(HERE), NONZERO_ORT_LIB=str(fault_injection_lib)), op)


@pytest.mark.parametrize("op", OPS)
def test_the_shipped_library_ignores_the_variable(op):
    # Built without the `fault-injection` feature: the hook does not exist there.
    run_unbroken(dict(os.environ, PYTHONPATH=str(HERE), NONZERO_ORT_INJECT_PANIC="nz_boom"), op)
