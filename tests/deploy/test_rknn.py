"""Every model the static stage makes fully static, in the generic form and `--target rknn`,
built for Rockchip's rk3588 by rknn-toolkit2 2.5.0 and run in its simulator (issue 38 item 3; the
`deploy_rknn` stage, which conftest.py leaves out of the others):

- it builds with the converter's default rules: none disabled by hand, no quantization (float16);
- it runs, and for masks random, empty, full and one element, its outputs cut to their counts
  equal ONNX Runtime CPU's run of the original: integers and counts exactly, floats within
  fp16 (RKNN computes in float16: FP16_ROUNDING), -1 past the count in coordinates and +0 in
  values. Scalars come back as [1]: compared after reshaping (models.as_declared);
- the row records which ops the build put on the NPU and which on the chip's CPU (the build's op
  table; the simulator times nothing, so the share is of nodes, not of time).

Known faults are xfail(strict=True) with their reason (expected.py).

In deploy_all also the detectors' tails (test_tails.py's cut, judged as there): the whole
detectors compute their network in float16, so other boxes survive NMS than on ONNX Runtime
CPU (expected_rknn.RKNN_DETECTOR_FP16), and the tail alone shows whether what `--static` made is
right on RKNN. FCOS's alone: its rknn tail takes the toolkit about 20 minutes to build
(TAIL_TIMEOUT_S). RetinaNet's whole rknn form runs equal when given 48 minutes
(expected_rknn.SLOW_BUILDS); SSDlite's outgrows the machine's memory."""

import numpy as np
import pytest

import expected
import expected_rknn
import models
import qnn
import rknn_judge
import test_tails
from judge import compare_static, report_axes

FORMS = ("generic", "rknn")
TAILS = ("fcos",) if models.ALL else ()
# A tail's build and runs may take this long, or NONZERO_RKNN_TIMEOUT_S where that is longer
# (FCOS's tail built in 19 minutes, 2026-12-06).
TAIL_TIMEOUT_S = max(2400, rknn_judge.TIMEOUT_S)
# Floats within fp16: RKNN computes every float op in float16 (2^-10 relative steps), so a value
# may be a few of its steps from ONNX Runtime's float32 one.
FP16_ROUNDING = (2.0**-8, 2.0**-12)


@pytest.fixture(scope="session")
def built(request):
    """{(model id, form): rknn_judge.Built} for the tests this session runs (`-k` picks fewer),
    built all at once, WORKERS at a time."""
    jobs = []
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if item.originalname != "test_rknn" or spec is None:
            continue
        model, form = spec.params["model"], spec.params["form"]
        _, path = models.static_form(model, form)
        jobs.append((f"{form}/{model.id}", path, [model.feeds(case) for case in models.CASES]))
    done = rknn_judge.build_all(jobs)
    return {tuple(ident.split("/", 1)[::-1]): b for ident, b in done.items()}


def _params():
    out = []
    for model in models.models():
        for form in FORMS:
            why = expected.fault("rknn", form, model.id) or expected_rknn.slow_build(("rknn", form, model.id),
                                                                                     rknn_judge.TIMEOUT_S)
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            out.append(pytest.param(model, form, marks=marks, id=f"{model.id}-{form}"))
    return out


@pytest.mark.parametrize(("model", "form"), _params())
def test_rknn(model, form, rows, built):
    row = rows["rknn"].setdefault((model.id, form), {"model": model.id, "form": form, "equal": False})
    report, path = models.static_form(model, form)
    one = built[model.id, form]
    row["build_s"], row["nodes"] = one.seconds, models.node_count(path)
    row["on_npu"], row["ops"], row["cpu_ops"] = one.on_npu(), len(one.ops), one.cpu_ops()
    try:
        assert one.error is None, f"rknn-toolkit2 fails at {one.reason} (log: {one.log})"
        cpu = qnn.cpu(model.original)
        for case, got in zip(models.CASES, one.outputs):
            want = qnn.run(cpu, model.feeds(case))
            got, row["notes"] = models.as_declared(got, path)
            floats = {name: FP16_ROUNDING for name, value in want.items() if np.asarray(value).dtype.kind == "f"}
            compare_static(want, got, axes=report_axes(report), rounding=floats, pads={
                name: -1 if np.asarray(got[name]).dtype == np.int64 else 0 for name in report_axes(report)})
    except AssertionError as e:
        row["failed"] = str(e).splitlines()[0][:300]
        raise
    row["equal"] = True


# Collected only under deploy_all: an empty parameter set would be reported as a skipped test.
if TAILS:
    @pytest.mark.parametrize("name", TAILS)
    def test_tail_on_rknn(name, rows):
        tail = test_tails.cut_tail(name, "rknn")
        row = rows["tails"].setdefault((tail.model.id, "rknn", "RKNN"), {"model": tail.model.id, "form": "rknn",
                                                                       "judge": "RKNN", "equal": False})
        row["cut"], row["nodes"] = len(tail.cut), models.node_count(tail.static)
        one = rknn_judge.build_and_run(f"tails/{name}", tail.static, [tail.feeds(case) for case in models.CASES],
                                       timeout_s=TAIL_TIMEOUT_S)
        row["prepare_s"], row["on_target"], row["assigned"] = one.seconds, one.on_npu(), len(one.ops)
        assert one.error is None, f"rknn-toolkit2 fails at {one.reason} (log: {one.log})"
        for case, got in zip(models.CASES, one.outputs):
            got, _ = models.as_declared(got, tail.static)
            try:
                test_tails.compare(tail.report, tail.want(case), got)
            except AssertionError as e:
                row["failed"] = f"{case}: {str(e).splitlines()[0][:200]}"
                raise
        row["equal"] = True
