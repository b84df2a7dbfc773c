"""Run in a fresh process by test_panic.py with NONZERO_ORT_INJECT_PANIC=nz_boom set before any
session exists. The node nz_boom panics on an ONNX Runtime pool thread; the run must fail with an
ORT error naming the panic and the node, and the same process must then run NonZero models
correctly, while the panicking session keeps failing cleanly (no hang, no abort). Prints
PANIC-CHILD-OK at the end."""

import sys

import numpy as np
from onnx import TensorProto

from common import expected_nonzero, nonzero_model, session

assert __import__("os").environ.get("NONZERO_ORT_INJECT_PANIC") == "nz_boom"

boom = session(nonzero_model([("boom", TensorProto.FLOAT)]), threads=4)
ok = session(nonzero_model([("x", TensorProto.FLOAT)]), threads=4)
rng = np.random.default_rng(5)

for size in (7, 1 << 18):  # below and above the kernel's parallel threshold
    x = (rng.random(size) < 0.5).astype(np.float32)
    try:
        boom.run(None, {"boom": x})
    except Exception as e:  # onnxruntime raises its own Fail/RuntimeException types
        message = str(e)
        assert "panic" in message and "nz_boom" in message and "RUNTIME_EXCEPTION" in message, message
        print(f"size {size}: error as expected: {type(e).__name__}: {message.strip()[:200]}")
    else:
        sys.exit(f"size {size}: the injected panic did not surface as an error")

    (got,) = ok.run(None, {"x": x})
    want = expected_nonzero(x)
    assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)

# Many more panics, then a fresh session: nothing leaked into later work.
for _ in range(50):
    try:
        boom.run(None, {"boom": np.ones(3, np.float32)})
        sys.exit("no error")
    except Exception as e:
        assert "panic" in str(e)
x = rng.random((64, 64)) < 0.3
(got,) = session(nonzero_model([("b", TensorProto.BOOL)])).run(None, {"b": x})
assert np.array_equal(got, expected_nonzero(x))
print("PANIC-CHILD-OK")
