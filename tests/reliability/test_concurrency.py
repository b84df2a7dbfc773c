"""8 Python threads over 4 shared InferenceSessions (as Triton shares a model instance), once per op
(NonZero, ArgWhere, BooleanMask with a random mask over the leading dimensions, NonZeroCoordinates),
each run mixing six element types (float, int8, bool, double, string, float16) and sizes from a
scalar to about a million elements; every output is compared exactly with numpy. ONNX Runtime releases the
GIL in run(), so runs really overlap, on top of each session's own intra-op pool.

NONZERO_CONCURRENCY_RUNS sets the number of runs (CI: 2,000; the figure in docs/reliability.md
used 20,000)."""

import collections
import os
import threading
import time

import numpy as np
import pytest

from common import OPS, TYPES, expected_outputs, op_feeds, op_model, output_names, random_tensor, same, session

RUNS = int(os.environ.get("NONZERO_CONCURRENCY_RUNS", "2000"))
THREADS = 8
MAX_ELEMENTS = 1 << 20
MAX_STRING_ELEMENTS = 1 << 16  # numpy's oracle for strings is a Python loop


def random_shape(rng, kind, main):
    r = rng.random()
    if r < 0.08:
        return ()  # scalar
    if r < 0.13:
        return tuple(int(x) for x in rng.permutation([0] + list(rng.integers(1, 5, rng.integers(0, 3)))))
    cap = (MAX_STRING_ELEMENTS if kind == "string" else MAX_ELEMENTS) if main else 64
    total = int(np.exp(rng.uniform(0, np.log(cap))))
    rank = int(rng.integers(1, 5))
    shape = []
    for _ in range(rank - 1):
        d = int(rng.integers(1, max(2, int(round(total ** (1 / rank))) * 2)))
        shape.append(d)
        total = max(1, total // d)
    shape.append(total)
    return tuple(int(x) for x in rng.permutation(shape))


@pytest.mark.parametrize("op", OPS)
def test_threads_over_shared_sessions_agree_with_numpy(op):
    model = op_model(op, [(k, TYPES[k][0]) for k in TYPES])
    names = [n for k in TYPES for n in output_names(op, k)]
    sessions = [session(model, threads=t) for t in (1, 2, 4, None)]
    counter = iter(range(RUNS))
    lock = threading.Lock()
    failures = []
    stats = collections.Counter()
    biggest = [0]

    def worker(seed):
        rng = np.random.default_rng(seed)
        while not failures:
            with lock:
                i = next(counter, None)
            if i is None:
                return
            sess = sessions[int(rng.integers(0, len(sessions)))]
            main = list(TYPES)[int(rng.integers(0, len(TYPES)))]
            feeds = {}
            for k in TYPES:
                feeds.update(op_feeds(rng, op, k, random_tensor(rng, k, random_shape(rng, k, k == main))))
            try:
                outs = dict(zip(names, sess.run(names, feeds)))
                for k in TYPES:
                    for name, want in zip(output_names(op, k), expected_outputs(op, feeds, k)):
                        got = outs[name]
                        if not same(got, want):
                            failures.append(f"run {i} {op} {name} shape {feeds[k].shape}: got {got.dtype}{got.shape}, "
                                            f"want {want.dtype}{want.shape}")
            except Exception as e:  # noqa: BLE001 - any failure is reported with its run
                failures.append(f"run {i}: {e!r}")
            with lock:
                stats[main] += 1
                stats["elements"] += sum(int(np.prod(feeds[k].shape)) for k in TYPES)  # X, not the masks
                biggest[0] = max(biggest[0], int(np.prod(feeds[main].shape)))

    start = time.time()
    threads = [threading.Thread(target=worker, args=(1000 + t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - start
    print(f"\n{op}: {RUNS} runs, {THREADS} threads, {len(sessions)} sessions, {elapsed:.1f} s; "
          f"main type counts {dict((k, stats[k]) for k in TYPES)}; "
          f"{stats['elements']} elements in all, largest input {biggest[0]}")
    assert not failures, "\n".join(failures[:20])
    assert sum(stats[k] for k in TYPES) == RUNS

