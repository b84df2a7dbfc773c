"""torchvision's single-stage detectors cut where their network ends (issue 38): the tail of each
NPU form (everything from the heads' outputs on: the score masks' compaction, box decoding, the
unrolled NMS picks, the final TopK; tails.py) on QNN HTP with every node on QNN, and on LiteRT
with every shape fixed; its outputs those of the original's tail on ONNX Runtime CPU.

The whole detectors are pinned (expected.HTP_DETECTORS; onnx2tf fails on their own backbones and
heads): HTP computes the backbone in fp16, so other boxes survive NMS, and the original cannot
run on HTP to be the reference. Fed the synthetic heads' outputs of tails.data_feeds (masks of
every case, distinct fp16 scores), the tail must give:

- labels, counts and scores exactly the original's (cut to the counts; -1 or +0 past them);
- on HTP, boxes within BOX_ULPS fp16 ulps of the largest coordinate: the model's own decoding,
  clipping and rescaling run in fp16 there (measured: at most 0.98 px on a 320-wide image,
  SSDlite's; FCOS 0.24, RetinaNet 0.47). Scores are distinct, so a wrong pick shows in them;
  a wrong gather of box rows moves a box by an anchor's stride (8 px and more). On LiteRT,
  which computes in float32, boxes too within one fp16 ulp of each value.

CI judges FCOS and RetinaNet in their target's form (HTP: qnn; LiteRT: litert, on
flatbuffer_direct); deploy_all also SSDlite, and the litert form on HTP. Faster
R-CNN is not cut: its tail holds the second stage's own network (RoIAlign, box head)."""

import functools
import time

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import expected
import litert
import models
import qnn
import tails
from contract import assert_same, count_outputs, padding, trimmed
from judge import report_axes

BOX_ULPS = 8
DETECTORS = ("fcos", "retinanet") + (("ssdlite320",) if models.ALL else ())
# (detector, form) on HTP: each target's own form in CI; deploy_all adds the litert form, and
# SSDlite (whose tail takes HTP about 20 minutes a form: its qnn form alone).
ON_HTP = [(name, "qnn") for name in DETECTORS] + ([(name, "litert") for name in DETECTORS[:2]] if models.ALL else [])
# flatbuffer_direct alone: tf_converter (deprecated by onnx2tf) took 19 minutes over FCOS's tail
# and swapped its boxes' x and y (measured 2026-12-06, docs/static.md).
BACKENDS = ("flatbuffer_direct",)


def compare(report, want, got, box_ulps=BOX_ULPS):
    counts, axes = count_outputs(got), report_axes(report)
    cut = trimmed(got, counts, axes)
    assert sorted(cut) == sorted(want), f"outputs {sorted(cut)}, the original's {sorted(want)}"
    for name, expect in want.items():
        mine = cut[name]
        if expect.dtype.kind != "f":
            assert_same(name, mine, expect)
            continue
        assert mine.dtype == expect.dtype and mine.shape == expect.shape, (name, mine.dtype, mine.shape, expect.shape)
        if name == "boxes" and box_ulps:
            largest = np.abs(expect).max(initial=0).astype(np.float16)
            bound = box_ulps * np.spacing(largest).astype(np.float32)
        else:
            bound = np.spacing(np.abs(expect).astype(np.float16)).astype(np.float32)
        off = np.abs(mine - expect) > bound
        where = np.flatnonzero(off)[:6]
        assert not off.any(), (f"{name}: {int(off.sum())} values off, e.g. {mine.flat[where].tolist()} for "
                               f"{expect.flat[where].tolist()}")
    for name, pad in padding(got, counts, axes).items():
        fill = -1 if pad.dtype == np.int64 else 0
        assert np.all(pad == fill) and not np.any(np.signbit(pad) & (pad == 0)), f"{name}: padding not {fill}"


def shape_feeds(model, names):
    """The values of the original's tensors `names`, which depend on the input's shape alone
    (the static form folded them), from one run of the original on ONNX Runtime CPU."""
    if not names:
        return {}
    sess = ort.InferenceSession(tails.with_outputs(onnx.load(str(model.original)), names).SerializeToString(),
                                providers=["CPUExecutionProvider"])
    return dict(zip(names, sess.run(names, model.feeds("random"))))


class Tail:
    """One detector's tail in one form: `model`, `report` (its static form's), `static` and
    `original` (the two tails' paths), `cut` (the static tail's input names), `folded` (the original's
    other inputs, fed from shape_feeds), `want(case)` (the original tail's outputs on CPU) and
    `feeds(case)` (the static tail's)."""

    def __init__(self, name, form):
        self.model = models.real_model(f"{name}_ts17.onnx")
        self.report, path = models.static_form(self.model, form)
        original = onnx.load(str(self.model.original))
        names = tails.frontier(original)
        folder = models.BUILD / "tails" / form
        folder.mkdir(parents=True, exist_ok=True)
        self.static, self.original = folder / f"{name}.onnx", folder / f"{name}_original.onnx"
        self._renamed = tails.static_tail(onnx.load(str(path)), names, self.static)
        self.cut = list(self._renamed.values())
        inputs = tails.original_tail(original, names, self.original)
        alone = sorted(set(self._renamed) - set(inputs))
        assert not alone, f"the static tail reads {alone}, the original's does not"
        self.folded = shape_feeds(self.model, [n for n in inputs if n not in self._renamed])
        self._cpu, self._spec = qnn.cpu(self.original), tails.inputs(self.static)

    def feeds(self, case):
        return tails.data_feeds(self._spec, case, self.model.id)

    def want(self, case):
        feeds = self.feeds(case)
        return qnn.run(self._cpu, {**{n: feeds[r] for n, r in self._renamed.items()}, **self.folded})


@functools.lru_cache(maxsize=None)
def cut_tail(name, form):
    return Tail(name, form)


def _on_htp():
    out = []
    for name, form in ON_HTP:
        why = expected.TAILS.get(("qnn", form, name))
        marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
        out.append(pytest.param(name, form, marks=marks, id=f"{name}-{form}"))
    return out


@pytest.mark.parametrize(("name", "form"), _on_htp())
def test_tail_on_htp(name, form, rows):
    tail = cut_tail(name, form)
    row = rows["tails"].setdefault((tail.model.id, form, "QNN HTP"), {"model": tail.model.id, "form": form,
                                                                      "judge": "QNN HTP", "equal": False})
    row["cut"], row["nodes"] = len(tail.cut), models.node_count(tail.static)
    start = time.monotonic()
    placed = qnn.Placed(tail.static)
    row["prepare_s"] = round(time.monotonic() - start, 2)
    row["on_target"], row["assigned"] = placed.on_qnn(), placed.assigned()
    assert not placed.off_qnn(), f"not on QNN: {placed.off_qnn()}"
    for case in models.CASES:
        got = {k: np.asarray(v) for k, v in placed.run(tail.feeds(case)).items()}
        try:
            compare(tail.report, tail.want(case), got)
        except AssertionError as e:
            row["failed"] = f"{case}: {str(e).splitlines()[0][:200]}"
            raise
    row["equal"] = True


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", DETECTORS)
def test_tail_on_litert(name, backend, rows):
    tail = cut_tail(name, "litert")
    judge = f"LiteRT {backend}"
    row = rows["tails"].setdefault((tail.model.id, "litert", judge), {"model": tail.model.id, "form": "litert",
                                                                      "judge": judge, "equal": False})
    row["cut"], row["nodes"] = len(tail.cut), models.node_count(tail.static)
    made = litert.convert_all([(tail.static, tail.cut, backend)])[str(tail.static), backend]
    row["prepare_s"] = made.seconds
    assert made.error is None, f"onnx2tf fails: {made.reason}"
    ((result, outputs),) = litert.run_all([(made.tflite, [tail.feeds(case) for case in models.CASES])])
    assert not result["dynamic"], f"-1 in the shape_signature of {result['dynamic'][:5]}"
    assert not litert.flex_or_custom(result["ops"]), f"not LiteRT builtins: {litert.flex_or_custom(result['ops'])}"
    assert result["error"] is None, f"LiteRT: {result['error'].splitlines()[0][:300]}"
    for case, got in zip(models.CASES, outputs):
        got, _ = models.as_declared(got, tail.static)
        try:
            compare(tail.report, tail.want(case), got, box_ulps=0)
        except AssertionError as e:
            row["failed"] = f"{case}: {str(e).splitlines()[0][:200]}"
            raise
    row["equal"] = True
