"""Ray Data: nonzero_ort.ray.OnnxPredictor in this process (its arguments and options) and on a
2-node cluster, where one of its workers is killed by its pid in the middle of a job."""

import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest
from conftest import MODELS, random_rows, report, same

from workers import ReportingPredictor

from nonzero_ort.ray import OnnxPredictor, make_session

FLOAT = str(MODELS / "nonzero_opset13_float" / "model.onnx")  # x: float32 [3, 4] -> y
DOUBLE = str(MODELS / "nonzero_opset13_double" / "model.onnx")  # x: float64 [2, 3, 2] -> y
MASKED = str(MODELS / "masked_select_opset13" / "model.onnx")  # x: float32 [3, 4], mask: bool [3, 4] -> y


def column(arrays):
    out = np.empty(len(arrays), dtype=object)
    out[:] = arrays
    return out


def test_predictor_runs_each_row_as_one_session_does():
    rows = random_rows(np.random.default_rng(1), 9)
    batch = {"id": np.arange(9), "pixels": column(rows)}
    out = OnnxPredictor(FLOAT, input_columns=["pixels"], output_columns={"y": "coords"}, worker_column="pid")(batch)
    assert sorted(out) == ["coords", "id", "pid"]
    assert out["id"].tolist() == list(range(9)) and set(out["pid"].tolist()) == {os.getpid()}
    reference = make_session(FLOAT)
    for x, got in zip(rows, out["coords"]):
        assert same(got, reference.run(None, {"x": x})[0])
        assert same(got, np.array(np.nonzero(x), dtype=np.int64))


def test_predictor_takes_named_inputs_and_keeps_chosen_columns():
    rng = np.random.default_rng(2)
    xs = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(3)]
    masks = [rng.random((3, 4)) < 0.5 for _ in range(3)]
    batch = {"a": column(xs), "m": column(masks), "extra": np.arange(3), "drop": np.zeros(3)}
    out = OnnxPredictor(MASKED, input_columns={"x": "a", "mask": "m"}, keep_columns=["extra"])(batch)
    assert sorted(out) == ["extra", "y"]
    for x, m, y in zip(xs, masks, out["y"]):
        assert same(y, x[m])


def test_predictor_refuses_what_does_not_fit_with_a_message():
    with pytest.raises(ValueError, match=r"input_columns has 2 names, the model has 1 \(\['x'\]\)"):
        OnnxPredictor(FLOAT, input_columns=["a", "b"])
    with pytest.raises(ValueError, match=r"names \['z'\], which the model lacks"):
        OnnxPredictor(FLOAT, output_columns={"z": "out"})
    with pytest.raises(ValueError, match="SessionOptions has no setting 'intra_op_thread'"):
        OnnxPredictor(FLOAT, session_options={"intra_op_thread": 2})
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        OnnxPredictor(FLOAT, device="tpu")
    predictor = OnnxPredictor(FLOAT)
    with pytest.raises(KeyError, match=r"no column \['x'\]"):
        predictor({"pixels": column([np.zeros((3, 4), np.float32)])})
    with pytest.raises(ValueError, match="row 1 of the batch, column 'x': input 'x': dtype float64, the model takes float32"):
        predictor({"x": column([np.zeros((3, 4), np.float32), np.zeros((3, 4))])})
    with pytest.raises(ValueError, match=r"shape \[4\], the model takes rank 2"):
        predictor({"x": column([np.zeros(4, np.float32)])})


def test_library_options_reach_each_worker_session():
    """onnx_domain=False registers the nonzero domain only: an ONNX-domain NonZero on double is
    then ONNX Runtime's, which has no double kernel; with the library it runs."""
    x = np.zeros((2, 3, 2))
    x[0, 1, 1], x[1, 0, 0], x[1, 2, 1], x[0, 2, 0] = 1.5, np.nan, -2.0, -0.0
    out = OnnxPredictor(DOUBLE)({"x": column([x])})
    assert same(out["y"][0], np.array([[0, 1, 1], [1, 0, 2], [1, 0, 1]], dtype=np.int64))
    with pytest.raises(Exception, match="NOT_IMPLEMENTED"):
        OnnxPredictor(DOUBLE, onnx_domain=False)
    with pytest.raises(Exception, match="NOT_IMPLEMENTED"):
        OnnxPredictor(DOUBLE, library=False)


def test_a_worker_killed_by_its_pid_mid_job_loses_no_row(ray_cluster, tmp_path):
    """Two workers on two nodes; the first to report its pid is killed (SIGKILL) while it works
    on a batch. Ray restarts it (max_restarts) and runs its batches again (max_task_retries):
    every row comes back once, equal to one session's result."""
    import ray.data

    rows = random_rows(np.random.default_rng(3), 120)
    reference = make_session(FLOAT)
    expected = [reference.run(None, {"x": x})[0] for x in rows]
    ds = ray.data.from_items([{"id": i, "x": x} for i, x in enumerate(rows)], override_num_blocks=24)
    with warnings.catch_warnings():  # as map_model: Ray 2.60 has no other way to set the actor options
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        out = ds.map_batches(
            ReportingPredictor,
            fn_constructor_kwargs={"model": FLOAT, "pid_dir": str(tmp_path), "delay": 0.2, "worker_column": "pid"},
            batch_size=5, batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=2),
            num_cpus=1, max_restarts=2, max_task_retries=3,
        )
    result, errors = [], []

    def consume():
        try:
            result.extend(out.take_all())
        except Exception as e:  # the assertion below shows it
            errors.append(e)

    started = time.time()
    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    victim = None
    while victim is None and thread.is_alive() and time.time() - started < 120:
        reported = sorted(tmp_path.iterdir(), key=lambda p: p.stat().st_mtime)
        victim = int(reported[0].name) if reported else None
        time.sleep(0.05)
    assert victim is not None, f"no worker reported its pid within 120 s; the job: {errors or 'running'}"
    os.kill(victim, signal.SIGKILL)
    killed_at = time.time() - started
    thread.join(timeout=240)
    assert not thread.is_alive(), "the job did not finish within 240 s of the kill"
    assert not errors, f"the job failed after the kill: {errors[0]!r}"
    ids = sorted(int(r["id"]) for r in result)
    assert ids == list(range(len(rows))), "every row must come back exactly once"
    for r in result:
        assert same(r["y"], expected[int(r["id"])])
    with pytest.raises(ProcessLookupError):
        os.kill(victim, 0)
    pids = {int(r["pid"]) for r in result}
    reporters = {int(p.name) for p in tmp_path.iterdir()}
    report("data-kill", f"killed worker {victim} at {killed_at:.1f} s into the job; {len(rows)} rows back once "
           f"each, equal, in {time.time() - started:.1f} s; rows came from {len(pids)} worker processes, "
           f"{len(reporters)} processes ran batches")
