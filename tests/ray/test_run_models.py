"""scripts/ray/run_models.py (what `scripts/run-models --ray N` runs) beyond the ray stage's own
`--ray 2` job: an existing cluster reached by --address, with the wheel shipped to its workers,
refusals of bad arguments, and models of one's own (issue 36)."""

import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

RUN = [sys.executable, str(ROOT / "scripts" / "ray" / "run_models.py")]


def wheel():
    path = os.environ.get("NONZERO_RAY_WHEEL")
    if not path:
        pytest.fail("NONZERO_RAY_WHEEL is unset: run this through `scripts/test ray`, which builds the wheel")
    return path


def test_address_runs_on_an_existing_cluster_with_the_wheel_shipped():
    head = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "ray" / "cluster.py"), "1"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        address = head.stdout.readline().strip()
        assert address.startswith("127.0.0.1:"), address
        done = subprocess.run(RUN + ["--address", address, "--wheel", wheel(), "--rows", "8",
                                     "--concurrency", "1", str(ROOT / "models" / "nonzero_opset13_int8")],
                              capture_output=True, text=True, timeout=300)
    finally:
        head.stdin.close()
        head.wait(timeout=120)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    where = [l for l in lines if l.startswith("workers import nonzero_ort from ")]
    assert where and "runtime_resources" in where[0] and "site-packages" not in where[0], where
    assert any(l.startswith("ok   ") and "8 rows on Ray" in l and "equal to one process: yes" in l for l in lines)
    assert "1/1 models equal on Ray" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["--ray", "0"], "--ray N needs N >= 1, got 0"),
    (["--ray", "2", "--rows", "0"], "--rows needs at least 1"),
    (["--ray", "2", "no/such/model.onnx"], "no model at 'no/such/model.onnx'"),
    (["--address", "127.0.0.1:1"], "--address needs --wheel PATH"),
    (["models"], "one of the arguments --ray --address is required"),
])
def test_bad_arguments_are_refused_with_a_message(args, message):
    done = subprocess.run(RUN + args, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert message in done.stdout + done.stderr


def test_models_of_ones_own_run_on_ray(tmp_path):
    """Issue 36 on the Ray path: Mixtral's random token ids stay within its embedding (99 rows),
    and BART gets its inputs (one eos per row) from --inputs; both equal the built-in kernels."""
    mixtral, bart = "models/real/mixtral_ts17.onnx", "models/real/bart_ts17.onnx"
    ids = np.array([[5, 17, 40, 2], [9, 3, 8, 2]], dtype=np.int64)
    np.savez(tmp_path / "bart.npz", input_ids=ids, attention_mask=np.ones_like(ids))
    for args, model in [([mixtral], mixtral), (["--inputs", tmp_path / "bart.npz", bart], bart)]:
        done = subprocess.run(RUN + ["--ray", "1", "--rows", "4", *map(str, args)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        (line,) = [l for l in done.stdout.splitlines() if l.endswith(f" {model}") or f" {model}: " in l]
        assert line.startswith(f"ok   {model}: 4 rows on Ray"), line
        assert "equal to one process: yes; built-in: equal" in line, line


def test_bad_inputs_files_are_refused_before_the_cluster_starts(tmp_path):
    ids = np.zeros((1, 2), np.int64)
    np.savez(tmp_path / "few.npz", input_ids=ids)
    np.savez(tmp_path / "int32.npz", input_ids=ids.astype(np.int32), attention_mask=ids)
    model = str(ROOT / "models/real/bart_ts17.onnx")
    for npz, message in [
        ("none.npz", "--inputs " + str(tmp_path / "none.npz") + ": "),
        ("few.npz", "--inputs has the arrays ['input_ids'], "),
        ("int32.npz", "--inputs array input_ids is int32, the input is int64"),
    ]:
        done = subprocess.run(RUN + ["--ray", "1", "--inputs", str(tmp_path / npz), model],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and message in done.stdout + done.stderr, (npz, done.stderr)
        assert "cluster up" not in done.stdout
