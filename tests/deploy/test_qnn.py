"""Every model the static stage makes fully static, in every form, on Qualcomm's QNN HTP (the
x86_64 emulator of onnxruntime-qnn 2.7.0, ONNX Runtime 1.32), at soc_model 57 (issue 38):

- the session is created with CPU fallback disabled, and every node is assigned to QNN. ONNX
  Runtime 1.32 refuses some graphs whose every node is on QNN while fallback is disabled
  (qnn.CONFLICT): such a session is made again with fallback allowed, and must then still have
  every node on QNN (the row says "conflict");
- on inputs whose floats are fp16-representable, for masks random, empty, full and one element
  (hand-made models past 2048 elements, so counts pass 2048), the outputs cut to their counts
  equal: integers and counts those of the original (dynamic) model on the same HTP with CPU
  fallback allowed for its NonZero chain; floats those of ONNX Runtime CPU's run of the original.
  -1 past the count in coordinates, +0 in values;
- the oldest soc_model of qnn.SOC_MODELS where the model is taken and equal is in the report.

CI judges the generic and qnn forms; deploy_all (NONZERO_DEPLOY_ALL=1) every form.

Known faults are xfail(strict=True) with their reason (expected.py)."""

import time

import numpy as np
import pytest

import expected
import models
import qnn
from contract import assert_same, count_outputs, padding, trimmed
from judge import report_axes


def _params():
    out = []
    for model in models.models():
        for form in models.FORMS_QNN:
            why = expected.fault("qnn", form, model.id)
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            out.append(pytest.param(model, form, marks=marks, id=f"{model.id}-{form}"))
    return out


def _f16(value):
    return value.astype(np.float16).astype(np.float32)


def compare(report, on_cpu, on_htp, got):
    """The static model's HTP outputs `got` against the original's: integers exactly as the
    original on HTP gives them (`on_htp`), floats as ONNX Runtime CPU gives them (`on_cpu`) within
    one fp16 ulp of CPU's value (HTP computes floats in fp16, and returns an fp16 0.494140625 as
    0.4941406548), or else no further from CPU's than the original on HTP is. The padding past
    each count is -1 in int64 coordinates and +0 in values."""
    got = {k: np.asarray(v) for k, v in got.items()}
    counts, axes = count_outputs(got), report_axes(report)
    cut = trimmed(got, counts, axes)
    assert sorted(cut) == sorted(on_cpu), f"outputs {sorted(cut)}, the original's {sorted(on_cpu)}"
    for name, want in on_cpu.items():
        mine, want = cut[name], np.asarray(want)
        if want.dtype.kind != "f":
            assert_same(name, mine, on_htp[name])
            continue
        assert mine.dtype == want.dtype and mine.shape == want.shape, (name, mine.dtype, mine.shape, want.shape)
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(mine), nan), f"{name}: NaN in one only"
        ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float32)
        near = np.abs(mine - want) <= ulp
        if not near[~nan].all():
            ref = np.asarray(on_htp[name])
            further = np.abs(mine - want) > np.abs(ref - want)
            bad = ~near & further & ~nan
            where = np.flatnonzero(bad)[:6]
            assert not bad.any(), (f"{name}: {int(bad.sum())} values further from CPU than the original on HTP, e.g. "
                                   f"{mine.flat[where].tolist()} vs {want.flat[where].tolist()}")
    for name, pad in padding(got, counts, axes).items():
        fill = -1 if pad.dtype == np.int64 else 0
        assert np.all(pad == fill) and not np.any(np.signbit(pad) & (pad == 0)), \
            f"{name}: padding not {fill}: {np.unique(pad)[:6].tolist()}"


def judged(model, form, soc=qnn.DEFAULT_SOC, row=None):
    """Asserts the module's contract for one model in one form at `soc`; fills `row`."""
    row = {} if row is None else row
    report, path = models.static_form(model, form)
    row["nodes"] = models.node_count(path)
    start = time.monotonic()
    placed = qnn.Placed(path, soc)
    row["prepare_s"] = round(time.monotonic() - start, 2)
    assert not placed.off_qnn(), f"not on QNN: {placed.off_qnn()}"
    try:
        reference, row["reference"] = qnn.reference(models.fixed_original(model)), "HTP"
        taken = qnn.assignment(reference)
        row["reference_on_qnn"] = f"{len(taken.get(qnn.QNN, []))} / {sum(map(len, taken.values()))}"
    except Exception as e:  # noqa: BLE001
        reference, row["reference"] = None, f"CPU (the original fails on HTP: {str(e).splitlines()[0][:120]})"
    cpu = qnn.cpu(model.original)
    for case in models.CASES:
        feeds = model.feeds(case)
        on_cpu = qnn.run(cpu, feeds)
        on_htp = on_cpu
        if reference is not None:
            try:
                on_htp = qnn.run(reference, feeds)
            except Exception as e:  # noqa: BLE001 (created, but HTP fails to run it: VITS)
                reference, row["reference"] = None, f"CPU (the original fails on HTP: {str(e).splitlines()[0][:120]})"
        got = placed.run(feeds)
        row["on_qnn"], row["assigned"], row["conflict"] = placed.on_qnn(), placed.assigned(), placed.conflict
        try:
            compare(report, on_cpu, on_htp, got)
        except AssertionError as e:
            row["failed"] = f"{case}: {str(e).splitlines()[0][:200]}"
            raise
    row["equal"] = True
    return row


@pytest.mark.parametrize(("model", "form"), _params())
def test_qnn_htp(model, form, rows):
    row = rows["qnn"].setdefault((model.id, form), {"model": model.id, "form": form, "equal": False})
    try:
        judged(model, form, row=row)
    except Exception as e:
        row.setdefault("failed", f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
        raise
    if models.ALL or form != "generic":
        row["oldest_soc"] = oldest_soc(model, form)


def oldest_soc(model, form):
    """The oldest soc_model of qnn.SOC_MODELS where the model is taken and equal (None if none)."""
    for soc in qnn.SOC_MODELS:
        try:
            judged(model, form, soc)
            return soc
        except Exception:  # noqa: BLE001 (a refusal or a difference: try the next one)
            continue
    return None
