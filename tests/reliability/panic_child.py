"""Run in a fresh process by test_panic.py with NONZERO_ORT_INJECT_PANIC=nz_boom set before any
session exists, for one op (argv[1]: NonZero, ArgWhere, BooleanMask or NonZeroCoordinates). The
node nz_boom panics on an ONNX Runtime pool thread; the run must fail with an ORT error naming the
panic and the node, and the same process must then run models of that op correctly, while the
panicking session keeps failing cleanly (no hang, no abort). Prints PANIC-CHILD-OK at the end."""

import sys

import numpy as np
from onnx import TensorProto

from common import expected_outputs, op_feeds, op_model, output_names, same, session

assert __import__("os").environ.get("NONZERO_ORT_INJECT_PANIC") == "nz_boom"

op = sys.argv[1] if len(sys.argv) > 1 else "NonZero"
boom = session(op_model(op, [("boom", TensorProto.FLOAT)]), threads=4)
ok = session(op_model(op, [("x", TensorProto.FLOAT)]), threads=4)
rng = np.random.default_rng(5)


def check(sess, name, x):
    feeds = op_feeds(rng, op, name, x)
    got = sess.run(output_names(op, name), feeds)
    want = expected_outputs(op, feeds, name)
    assert all(same(g, w) for g, w in zip(got, want)), (op, x.shape)


for size in (7, 1 << 18):  # below and above the kernel's parallel threshold
    x = (rng.random(size) < 0.5).astype(np.float32)
    try:
        boom.run(None, op_feeds(rng, op, "boom", x))
    except Exception as e:  # onnxruntime raises its own Fail/RuntimeException types
        message = str(e)
        assert "panic" in message and "nz_boom" in message and "RUNTIME_EXCEPTION" in message, message
        print(f"{op} size {size}: error as expected: {type(e).__name__}: {message.strip()[:200]}")
    else:
        sys.exit(f"{op} size {size}: the injected panic did not surface as an error")

    check(ok, "x", x)

# Many more panics, then a fresh session: nothing leaked into later work.
for _ in range(50):
    try:
        boom.run(None, op_feeds(rng, op, "boom", np.ones(3, np.float32)))
        sys.exit("no error")
    except Exception as e:
        assert "panic" in str(e)
check(session(op_model(op, [("b", TensorProto.BOOL)])), "b", rng.random((64, 64)) < 0.3)
print("PANIC-CHILD-OK")
