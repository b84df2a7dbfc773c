"""A small workload for valgrind memcheck (see docs/reliability.md): every tested type, a scalar,
an empty tensor, a parallel-sized input, and 200 repeated runs, through ONNX Runtime's Python
API with libnonzero_ort loaded."""

import numpy as np
from onnx import TensorProto

from common import TYPES, expected_nonzero, nonzero_model, random_tensor, session

rng = np.random.default_rng(1)
sess = session(nonzero_model([(k, TYPES[k][0]) for k in TYPES]), threads=2)
shapes = [(), (0, 3), (3, 4), (2, 3, 5), (1 << 18,)]
for shape in shapes:
    feeds = {k: random_tensor(rng, k, shape if k != "string" or len(shape) < 1 or shape[0] < 1000 else (7,)) for k in TYPES}
    for k, got in zip(TYPES, sess.run(None, feeds)):
        assert np.array_equal(got, expected_nonzero(feeds[k])), (k, shape)
feeds = {k: random_tensor(rng, k, (4, 4)) for k in TYPES}
for _ in range(200):
    sess.run(None, feeds)
maps = open("/proc/self/maps").read()
assert "libnonzero_ort" in maps, "the library is not loaded"
del sess
print("VALGRIND-CHILD-OK")
