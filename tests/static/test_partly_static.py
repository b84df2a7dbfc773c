"""The real exports that `--static` does not make fully static yet (test_exports_after.py's
STAYS_DYNAMIC), as `--static --allow-dynamic` writes them: what was folded and padded must not
change what the model computes. Each runs on ONNX Runtime 1.31.1 (whose built-in kernels run the
NonZero and NonMaxSuppression left) and equals the original on the manifest's kind of inputs
(an image in [0, 1)), and on an input that selects nothing (a blank image).

Both run with ONNX Runtime's basic graph optimizations (constant folding, redundant nodes), and
the outputs are equal bit for bit. Its extended and layout optimizations fuse a constant into a
MatMul (a Div by a folded `sqrt(head_dim)`) or pick NCHWc Conv kernels where
the shapes are now known (FCOS, Keypoint R-CNN), which rounds the last bits differently (and may
move a keypoint's argmax to the next pixel): ONNX Runtime's choices for what the model now
states, not a change in what it computes, so they are not compared here."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import exports
import judge
from judge import compare_static, report_axes
from test_exports_after import STAYS_DYNAMIC, made

EXPORTS = [e for e in exports.exports() if e.id.startswith("real/") and e.id in STAYS_DYNAMIC]
VOCAB, EOS = 99, 2


def _run(path, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 2
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def _feeds(export, case):
    """The detectors' image: random in [0, 1), or blank ("nothing")."""
    shape = export.shapes["image"]
    rng = np.random.default_rng(7)
    return {"image": np.zeros(shape, np.float32) if case == "nothing" else rng.random(shape, dtype=np.float32)}


CASES = [(e, case) for e in EXPORTS for case in ("random", "nothing")]


@pytest.mark.parametrize("export, case", CASES, ids=lambda v: str(v))
def test_partly_static_outputs_are_the_originals(export, case):
    report, path = made(export)
    feeds = _feeds(export, case)
    compare_static(_run(export.path, feeds), _run(path, feeds), axes=report_axes(report))


VITS_NOISE = "duration_noise"
VITS_NOISE_SHAPE = (2, 2, 12)


def _vits_with_noise(tmp_path):
    """VITS with its duration predictor's noise (`randn * noise_scale_duration`, a Mul by the
    config's 0.0) made the graph input `duration_noise`: as exported, every spline selection
    is all or nothing (24 of 24 rows inside the interval), which never leaves padding in a row.
    With noise of a few units, some of the flows' inputs fall outside the spline's interval."""
    model = onnx.load(str(exports.REAL / "vits_ts17.onnx"))
    graph = model.graph
    (scaled,) = [n for n in graph.node if n.name == "/model/duration_predictor/Mul_1"]
    graph.node.remove(scaled)
    for node in graph.node:
        node.input[:] = [VITS_NOISE if i == scaled.output[0] else i for i in node.input]
    graph.input.append(onnx.helper.make_tensor_value_info(VITS_NOISE, onnx.TensorProto.FLOAT,
                                                          list(VITS_NOISE_SHAPE)))
    path = tmp_path / "vits_noise.onnx"
    onnx.save(model, str(path))
    return path


def _selection_counts(path, feeds):
    """How many rows each NonZero of the model selects."""
    model = onnx.load(str(path))
    selections = [n.output[0] for n in model.graph.node if n.op_type == "NonZero"]
    for name in selections:
        model.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [coordinates.shape[1] for coordinates in session.run(selections, feeds)]


def test_vits_spline_selections_partly_taken_are_the_originals(tmp_path):
    """VITS's spline selections padded to 24 rows with only some taken (the rows inside the
    interval through the spline, their writes back, the rows outside copied): the static
    model's outputs equal the original's bit for bit, and its only dynamic node is the
    waveform's Range."""
    original = _vits_with_noise(tmp_path)
    out = tmp_path / "vits_noise_static.onnx"
    shapes = {"input_ids": [2, 12], "attention_mask": [2, 12], VITS_NOISE: list(VITS_NOISE_SHAPE)}
    report = judge.static_model(original, out, shapes, allow_dynamic=True)
    assert report["returncode"] == 0, report["stderr"]
    left = [(n["op"], n["reason"]) for n in report["left_nodes"]]
    assert left == [("Range", "value-dependent-shape")], report["stderr"][-3000:]
    rng = np.random.default_rng(11)
    ids = rng.integers(3, VOCAB, (2, 12), dtype=np.int64)
    ids[:, -1] = EOS
    partial = 0
    for scale in (3.0, 4.0, 5.0):
        noise = (rng.standard_normal(VITS_NOISE_SHAPE) * scale).astype(np.float32)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), VITS_NOISE: noise}
        counts = _selection_counts(original, feeds)
        partial += sum(0 < c < 24 for c in counts)
        compare_static(_run(original, feeds), _run(out, feeds), axes=report_axes(report))
    # The case this test is for: selections that leave padding rows.
    assert partial >= 10, partial
