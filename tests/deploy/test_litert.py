"""Every model the static stage makes fully static, in every form, converted to LiteRT by onnx2tf
2.6.9 with each of its backends (flatbuffer_direct, tf_converter) and run by ai-edge-litert
2.3.0 (issue 38):

- it converts, and no tensor's shape_signature holds a -1 (every shape fixed);
- no Flex (TensorFlow) op and no custom op;
- it runs, and for masks random, empty, full and one element, its outputs cut to their counts
  equal ONNX Runtime CPU's run of the original: -1 past the count in coordinates, +0 in values.
  flatbuffer_direct returns int64 outputs as int32 and scalars as [1]: values are compared
  after widening, and the row says so.

Conversions are cached (litert.py). CI judges the generic and litert forms; deploy_all
(NONZERO_DEPLOY_ALL=1) every form. Known faults are xfail(strict=True) (expected.py), but for
the few whose effect varies from run to run (expected.HOST_DEPENDENT)."""

import numpy as np
import pytest

import expected
import expected_litert
import litert
import models
import qnn
from judge import compare_static, report_axes


def _inputs(path):
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in initializers]


@pytest.fixture(scope="session")
def converted(request):
    """{(model id, form, backend): (Converted, run result, [outputs per case])}: every conversion
    and run of the tests this session runs (`-k` picks fewer), done at once (onnx2tf's and
    LiteRT's start-up costs once)."""
    items = []
    for item in request.session.items:
        spec = getattr(item, "callspec", None)
        if item.originalname == "test_litert" and spec is not None:
            items.append((spec.params["model"], spec.params["form"], spec.params["backend"]))
    return _all(items)


def _all(items):
    jobs = []
    for m, f, b in items:
        _, path = models.static_form(m, f)
        jobs.append((path, _inputs(path), b))
    converted = litert.convert_all(jobs)
    runs, keys = [], []
    for (m, f, b), (path, _, _) in zip(items, jobs):
        c = converted[str(path), b]
        if c.tflite is not None:
            runs.append((c.tflite, [m.feeds(case) for case in models.CASES]))
            keys.append((m.id, f, b))
    results = dict(zip(keys, litert.run_all(runs)))
    return {(m.id, f, b): (converted[str(path), b],) + results.get((m.id, f, b), (None, None))
            for (m, f, b), (path, _, _) in zip(items, jobs)}


def _params():
    out = []
    for model in models.models():
        for form in models.FORMS_LITERT:
            for backend in litert.BACKENDS:
                why = expected.fault("litert", form, model.id, backend)
                strict = expected.strict("litert", form, model.id, backend)
                marks = [pytest.mark.xfail(strict=strict, reason=why)] if why else []
                out.append(pytest.param(model, form, backend, marks=marks, id=f"{model.id}-{form}-{backend}"))
    return out


@pytest.mark.parametrize(("model", "form", "backend"), _params())
def test_litert(model, form, backend, rows, converted):
    row = rows["litert"].setdefault((model.id, form, backend), {"model": model.id, "form": form,
                                                                 "backend": backend, "equal": False})
    report, path = models.static_form(model, form)
    made, result, outputs = converted[model.id, form, backend]
    row["convert_s"] = made.seconds
    try:
        assert made.error is None, f"onnx2tf fails: {made.reason}"
        row["dynamic"], row["flex"] = len(result["dynamic"]), litert.flex_or_custom(result["ops"])
        assert not result["dynamic"], f"-1 in the shape_signature of {result['dynamic'][:5]}"
        assert not row["flex"], f"not LiteRT builtins: {row['flex']}"
        assert result["error"] is None, f"LiteRT: {result['error'].splitlines()[0][:300]}"
        row["notes"] = _equal(model, report, path, outputs)
    except AssertionError as e:
        row["failed"] = str(e).splitlines()[0][:300]
        raise
    row["equal"] = True


def _equal(model, report, path, outputs):
    """`outputs` (LiteRT's, one per case) equal ONNX Runtime CPU's run of the original; returns
    what LiteRT changed in their types (models.as_declared)."""
    cpu, notes = qnn.cpu(model.original), []
    for case, got in zip(models.CASES, outputs):
        want = qnn.run(cpu, model.feeds(case))
        got, notes = models.as_declared(got, path)
        compare_static(want, got, axes=report_axes(report), rounding=expected.LITERT_ROUNDING.get(model.id), pads={
            name: -1 if np.asarray(got[name]).dtype == np.int64 else 0 for name in report_axes(report)})
    return notes


# TF_ARGWHERE's other half: with onnx2tf's own layout, where it moves a rank-3 input's second
# axis last (the input fed so), tf_converter converts the generic form exactly; the litert form,
# made for -kat, meets the reverse fault there.
OWN_LAYOUT = "exported/argwhere_dynamo18.onnx"


@pytest.mark.parametrize("form", [
    pytest.param(form, marks=[pytest.mark.xfail(strict=True, reason=expected_litert.TF_OWN_LAYOUT_RESHAPE)]
                 if form == "litert" else []) for form in models.FORMS_LITERT])
def test_tf_converter_own_layout(form):
    model = next(m for m in models.models() if m.id == OWN_LAYOUT)
    report, path = models.static_form(model, form)
    made = litert.convert_all([(path, _inputs(path), "tf_converter")], layout="onnx2tf")[str(path), "tf_converter"]
    assert made.error is None, f"onnx2tf fails: {made.reason}"
    nwc = [{k: v.transpose(0, 2, 1) if v.ndim == 3 else v for k, v in model.feeds(case).items()}
           for case in models.CASES]
    assert any(v.ndim == 3 for v in nwc[0].values()), "the case needs a rank-3 input"
    ((result, outputs),) = litert.run_all([(made.tflite, nwc)])
    assert not result["dynamic"] and result["error"] is None, result
    _equal(model, report, path, outputs)
