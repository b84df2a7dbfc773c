"""`scripts/run-models MODEL` on models of one's own (issue 36): inputs that index a table are
fed within it, `--inputs FILE.npz` feeds given inputs, a model equal to ONNX Runtime's built-in
kernel counts as matched, and no raw ONNX Runtime log line appears. (run-models always uses
ONNX Runtime 1.31.1 from .venv, whichever venv runs this file.)"""

import re
import subprocess

import numpy as np

from conftest import ROOT

MIXTRAL = "models/real/mixtral_ts17.onnx"  # input_ids index an embedding of 99 rows
X_MASK = "models/exported/x_mask_ts17.onnx"  # input_0 float [N, M, 3], input_1 bool [N, M]
# ONNX Runtime's own log lines: colour codes, or its `[E:onnxruntime:...]` prefix.
ORT_LOG = re.compile(r"\x1b\[|\[[EWIVF]:onnxruntime")


def run_models(*args):
    proc = subprocess.run([str(ROOT / "scripts/run-models"), *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert not ORT_LOG.search(proc.stdout + proc.stderr), proc.stdout + proc.stderr
    return proc


def fed(stdout, name):
    """The values `nonzero run` printed for input `name` (`    input  NAME: int64[2, 3] [1, 2, ...]`)."""
    (line,) = [l for l in stdout.splitlines() if l.startswith(f"    input  {name}: ")]
    shape, values = re.fullmatch(r".*?\[([\d, ]*)\] \[(.*)\]", line).groups()
    return [int(d) for d in shape.split(", ") if d], values.split(", ")


def test_own_models_run_and_count_as_matched():
    proc = run_models("--preview", "1000", MIXTRAL, X_MASK)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert f"MATCH    {MIXTRAL}: equals ORT's built-in kernel" in lines, proc.stdout
    assert f"MATCH    {X_MASK}: equals ORT's built-in kernel" in lines, proc.stdout
    assert lines[-1] == "2 models: 2 matched, 0 failed, 0 other"
    # Symbolic sizes are 4: [batch, sequence] = [4, 4] token ids, each a row of the embedding.
    shape, ids = fed(proc.stdout, "input_ids")
    assert shape == [4, 4] and len(ids) == 16
    assert all(0 <= int(v) < 99 for v in ids), ids
    assert len(set(ids)) > 4, ids  # random within the table, not one value


def test_inputs_from_an_npz(tmp_path):
    ids = np.array([[5, 17, 98], [0, 3, 42]], dtype=np.int64)
    np.savez(tmp_path / "mixtral.npz", input_ids=ids, attention_mask=np.ones((2, 3), np.int64))
    x = np.arange(2 * 2 * 3, dtype=np.float32).reshape(2, 2, 3)
    np.savez(tmp_path / "x_mask.npz", input_0=x, input_1=np.array([[True, False], [False, True]]))
    proc = run_models("--inputs", tmp_path / "mixtral.npz", MIXTRAL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"MATCH    {MIXTRAL}: equals ORT's built-in kernel" in proc.stdout.splitlines()
    assert fed(proc.stdout, "input_ids") == ([2, 3], ["5", "17", "98", "0", "3", "42"])
    # BART's classifier needs one end-of-sentence token (2) per row; Longformer needs global
    # attention on some token (with none, ONNX Runtime itself dies of SIGFPE).
    bart = np.array([[5, 17, 40, 2], [9, 3, 8, 2]], dtype=np.int64)
    np.savez(tmp_path / "bart.npz", input_ids=bart, attention_mask=np.ones_like(bart))
    ids = np.random.default_rng(0).integers(3, 99, (2, 16))
    ids[:, -1] = 2
    glob = np.zeros_like(ids)
    glob[:, 0] = 1
    np.savez(tmp_path / "longformer.npz", input_ids=ids, attention_mask=np.ones_like(ids), global_attention_mask=glob)
    for name, model in [("bart", "models/real/bart_ts17.onnx"), ("longformer", "models/real/longformer_ts17.onnx")]:
        proc = run_models("--inputs", tmp_path / f"{name}.npz", model)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert f"MATCH    {model}: equals ORT's built-in kernel" in proc.stdout.splitlines(), proc.stdout
    proc = run_models("--inputs", tmp_path / "x_mask.npz", X_MASK)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert fed(proc.stdout, "input_1") == ([2, 2], ["1", "0", "0", "1"])
    # x[mask]: rows (0, 0) and (1, 1) of x.
    (out,) = [l for l in proc.stdout.splitlines() if l.startswith("    output ")]
    assert out.endswith("[2, 3] [0.0, 1.0, 2.0, 9.0, 10.0, 11.0]"), out


def test_bad_npz_files_are_refused_by_name(tmp_path):
    ids = np.zeros((1, 2), np.int64)
    cases = {
        "missing.npz": (dict(input_ids=ids), "no array for the input attention_mask"),
        "extra.npz": (dict(input_ids=ids, attention_mask=ids, mask=ids), "the model has no input mask"),
        "dtype.npz": (dict(input_ids=ids.astype(np.int32), attention_mask=ids), "array input_ids is int32, the input is int64"),
        # Read, but past the embedding: ONNX Runtime's error is the report's, not a log line.
        "past_the_table.npz": (dict(input_ids=ids + 99, attention_mask=ids),
                               "run failed: Non-zero status code returned while running Gather node"),
    }
    for name, (arrays, why) in cases.items():
        np.savez(tmp_path / name, **arrays)
    np.savez_compressed(tmp_path / "compressed.npz", input_ids=ids, attention_mask=ids)
    cases["compressed.npz"] = (None, "is compressed (np.savez_compressed?): save the inputs with np.savez")
    for name, (_, why) in cases.items():
        proc = run_models("--inputs", tmp_path / name, MIXTRAL)
        assert proc.returncode == 1, (name, proc.stdout, proc.stderr)
        (line,) = [l for l in proc.stdout.splitlines() if l.startswith("ERROR ")]
        assert why in line, (name, line)
        assert proc.stdout.splitlines()[-1] == "1 models: 0 matched, 1 failed, 0 other"
