"""Issue 37: the real exports that `nonzero optimize --static` makes fully static, on this venv's
ONNX Runtime (the onnxruntime stage runs tests/python on 1.31.1 and on 1.17.3; tests/static
judges them on 1.31.1 with OpenVINO and IREE).

Each export is fixed to its first input size (real_exports.SIZES) and made static without
`--allow-dynamic` (exit 0: nothing left dynamic), but for OPTIONS: VITS under its waveform's
capacity (tests/static's), and Keypoint and Mask R-CNN, static up to their per-detection Loop
(`--allow-dynamic`), which run with ONNX Runtime's basic graph optimizations (its layout
optimizations pick other Conv kernels for the now fixed shapes, which can move a keypoint's
argmax a pixel: test_partly_static.py). One session of it then runs every input set
in turn: seeds 0 and 1, and for the detectors a blank image (nothing detected). That catches a
session whose later runs go wrong (ONNX Runtime 1.17.3's and 1.18.1's memory patterns with an
unread node: crates/emit-static/src/dead.rs):
- each run equals the same static model in a fresh session without memory patterns, exactly;
- cut to its `<name>_count` along its padded axis (the report's), each output equals the original's on this ONNX Runtime: counts,
  integers and tied detections exactly, floats within 1e-5 relative (MatMul and the vectorised
  kernels over the capacity's rows round a last bit otherwise: docs/static.md), and the fill
  past the count (+0, -1 for int64).
An ONNX Runtime that refuses the export (1.17.3: the dynamo export's IR version 10) must refuse
the static model the same way (test_real_exports.host_cannot_load)."""

import json
import subprocess

import numpy as np
import onnx
import pytest

import real_exports as rx
from conftest import session
from onnx_cases import CLI, unread_nodes
from test_real_exports import host_cannot_load

FULLY_STATIC = ["bart_ts17.onnx", "bart_dynamo18.onnx", "faster_rcnn_ts17.onnx", "retinanet_ts17.onnx", "ssdlite320_ts17.onnx",
                "fcos_ts17.onnx", "mixtral_ts17.onnx", "longformer_ts17.onnx", "vits_ts17.onnx",
                "keypoint_rcnn_ts17.onnx", "mask_rcnn_ts17.onnx"]
OPTIONS = {"vits_ts17.onnx": ["--capacity", "waveform=16384"], "keypoint_rcnn_ts17.onnx": ["--allow-dynamic"],
           "mask_rcnn_ts17.onnx": ["--allow-dynamic"]}
# Floats up to rounding (relative, absolute) where 1e-5 is not it: VITS's waveform after 40
# convolutions, which ONNX Runtime fuses otherwise in the static graph (tests/static's ROUNDING).
ROUNDING = {"vits_ts17.onnx": (1e-4, 1e-5)}
BASIC = {"keypoint_rcnn_ts17.onnx", "mask_rcnn_ts17.onnx"}


def feeds_of(model):
    sets = [rx.inputs(model, 0, seed=seed) for seed in (0, 1)]
    if rx.kind(model) == "image":
        sets.append({"image": np.zeros_like(sets[0]["image"])})
    return sets


def make_static(model, feeds, tmp_path, options=()):
    """The static model and each padded output's axis (the report's count_outputs)."""
    src, out, report = tmp_path / "in.onnx", tmp_path / "static.onnx", tmp_path / "report.json"
    onnx.save(model, str(src))
    shapes = [a for name, value in feeds.items() for a in ("--input-shape", f"{name}={','.join(map(str, value.shape))}")]
    done = subprocess.run([str(CLI), "optimize", "--static", *shapes, *options, "--report-json", str(report), str(src),
                           str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    counts = json.loads(report.read_text())["static"]["count_outputs"]
    return onnx.load(str(out)), {name: spec["axis"] for name, spec in counts.items()}


def basic_session(model):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def fresh_run(static, feeds, basic=False):
    """The static model in a new session without memory patterns: the reference for reuse."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.enable_mem_pattern = False
    if basic:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.intra_op_num_threads = 1
    made = ort.InferenceSession(static.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return made.run(None, feeds)


@pytest.mark.parametrize("file", FULLY_STATIC)
def test_a_session_of_the_static_export_equals_the_original_run_after_run(file, tmp_path):
    judge_run_after_run(file, tmp_path, OPTIONS.get(file, ()))


# The detectors' NMS under an NPU target (issue 38): past 128 boxes per list, their 20 to 300
# picks unrolled (crates/emit-static/src/nms/picks.rs), so no Loop is left. Every detector in
# QNN's form; two in LiteRT's and RKNN's, whose NMS is the same and whose other forms the small
# exports cover.
NPU_DETECTORS = [(file, "qnn") for file in ("faster_rcnn_ts17.onnx", "retinanet_ts17.onnx", "fcos_ts17.onnx",
                                            "ssdlite320_ts17.onnx")]
NPU_DETECTORS += [(file, target) for file in ("faster_rcnn_ts17.onnx", "retinanet_ts17.onnx")
                  for target in ("litert", "rknn")]


@pytest.mark.parametrize(("file", "target"), NPU_DETECTORS)
def test_the_npu_form_of_a_detector_equals_the_original_run_after_run(file, target, tmp_path):
    static = judge_run_after_run(file, tmp_path, ["--target", target])
    ops = {n.op_type for n in static.graph.node}
    assert not ops & {"Loop", "If", "NonMaxSuppression", "NonZero"}, sorted(ops)


def judge_run_after_run(file, tmp_path, options):
    """The module's contract for one export made static with `options`; returns the static model."""
    model = onnx.load(str(rx.REAL / file))
    sets = feeds_of(model)
    static, axes = make_static(model, sets[0], tmp_path, options)
    assert not unread_nodes(static), unread_nodes(static)[:5]
    if host_cannot_load(model, static):  # asserted: the static model is refused the same way
        return static
    names = [o.name for o in static.graph.output]
    basic = file in BASIC
    if basic:
        original, made = basic_session(model), basic_session(static)
    else:
        original, made = session(model, library=False, threads=1), session(static, library=False, threads=1)
    rtol, atol = ROUNDING.get(file, (1e-5, 1e-6))
    for run, feeds in enumerate(sets):
        want = dict(zip([o.name for o in original.get_outputs()], original.run(None, feeds)))
        got_list = made.run(None, feeds)
        fresh = fresh_run(static, feeds, basic)
        for name, a, b in zip(names, got_list, fresh):
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), f"{file} run {run}: {name} differs from a fresh session"
        got = dict(zip(names, got_list))
        for name, value in want.items():
            mine, axis = got[name], axes.get(name, 0)
            count = int(got[f"{name}_count"]) if f"{name}_count" in got else mine.shape[axis]
            kept = np.take(mine, np.arange(count), axis=axis)
            assert mine.dtype == value.dtype and kept.shape == value.shape, (file, run, name, count, value.shape)
            if value.dtype.kind == "f":
                np.testing.assert_allclose(kept, value, rtol=rtol, atol=atol, err_msg=f"{file} run {run}: {name}")
            else:
                assert np.array_equal(kept, value), (file, run, name)
            if f"{name}_count" in got:
                pad = np.take(mine, np.arange(count, mine.shape[axis]), axis=axis)
                assert (pad == (-1 if value.dtype == np.int64 else 0)).all(), (file, run, name)
    return static
