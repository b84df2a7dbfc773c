"""Static soak (issue 39, item 4): a model made by `nonzero optimize --static` runs for SECONDS on
ONNX Runtime with the library registered, THREADS threads each with its own session, over a pool
of random inputs drawn as tests/static/cases.py draws them at the export's fixed shapes (cases
"random", "none", "one", "all": "none" makes every mask all false, an empty selection). Every
output must equal, bit for bit, what one session running the same pool one input at a time gave
before the threads started. Prints one JSON line: runs per thread, errors, mismatches, VmRSS
sampled every second (after the warm-up and at the end), open fds and threads.

Started in a fresh interpreter by test_static_soak.py, or by hand:
python static_soak.py STATIC_MODEL ORIGINAL_MODEL SECONDS [THREADS]"""

import json
import pathlib
import sys
import threading
import time

import numpy as np
import onnxruntime as ort

from common import LIB, ROOT, proc_figures, same

sys.path.insert(0, str(ROOT / "tests" / "static"))
import cases  # noqa: E402
import exports  # noqa: E402

# The pool: DRAWS inputs, their cases in this rotation (a quarter with empty selections).
POOL = 256
ROTATION = ("random", "none", "one", "all")


def warmup_seconds(seconds):
    """How long the threads run before the RSS that the end is compared with is taken."""
    return max(5.0, min(60.0, seconds / 6))


def make_session(path):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.register_custom_ops_library(str(LIB))
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def find_export(original):
    original = pathlib.Path(original).resolve()
    for export in exports.exports():
        if export.path.resolve() == original:
            return export
    raise SystemExit(f"{original} is not one of tests/static/exports.py's exports (which give the fixed input shapes)")


def main():
    static, original, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    export = find_export(original)
    rng = np.random.default_rng(39)
    pool = [cases.draw(export, ROTATION[i % len(ROTATION)], rng) for i in range(POOL)]
    reference = make_session(static)
    names = [o.name for o in reference.get_outputs()]
    expected = [reference.run(names, feeds) for feeds in pool]
    del reference
    sessions = [make_session(static) for _ in range(threads)]

    stop = threading.Event()
    runs = [0] * threads
    errors, mismatches = [], []
    lock = threading.Lock()

    def work(t):
        k = t * (POOL // threads)
        while not stop.is_set():
            i = k % POOL
            k += 1
            try:
                got = sessions[t].run(names, pool[i])
            except Exception as e:  # counted; the JSON line shows the first ones
                with lock:
                    errors.append(f"thread {t}, input {i}: {type(e).__name__}: {e}"[:300])
                continue
            if not all(same(g, w) for g, w in zip(got, expected[i])):
                with lock:
                    mismatches.append(f"thread {t}, input {i} ({ROTATION[i % len(ROTATION)]})")
            runs[t] += 1

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    started = time.monotonic()
    for w in workers:
        w.start()
    warm_at = started + warmup_seconds(seconds)
    warm = None
    samples = []
    end = None
    while time.monotonic() < started + seconds:
        time.sleep(1.0)
        end = proc_figures()  # the last one is taken with every thread still running
        samples.append(end[0])
        if warm is None and time.monotonic() >= warm_at:
            warm = end
    stop.set()
    for w in workers:
        w.join()
    warm = warm or end  # a run shorter than its warm-up (by hand) compares the end with itself
    elapsed = time.monotonic() - started
    empty = sum(1 for i in range(POOL) if ROTATION[i % len(ROTATION)] == "none")
    empty_outputs = sum(1 for outs in expected if any(o.size == 0 for o in outs))
    print(json.dumps({
        "export": export.id, "shapes": export.shapes, "outputs": names, "threads": threads,
        "seconds": round(elapsed, 1), "warmup_seconds": warmup_seconds(seconds),
        "pool": POOL, "pool_empty_selections": empty,
        "pool_empty_outputs": empty_outputs, "runs": runs,
        "errors": len(errors), "first_errors": errors[:3],
        "mismatches": len(mismatches), "first_mismatches": mismatches[:3],
        "rss_kib_warm": warm[0], "rss_kib_end": end[0], "rss_kib_samples": samples[::max(1, len(samples) // 24)],
        "fds_warm": warm[1], "fds_end": end[1], "threads_warm": warm[2], "threads_end": end[2],
    }))


if __name__ == "__main__":
    main()
