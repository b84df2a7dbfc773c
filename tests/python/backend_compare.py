"""ONNX's backend node suite run with and without the library, compared byte for byte: shared by
tests/python/test_host_unchanged.py and the matrix stage (tests/matrix/run_cases.py).

`make_session(model_bytes, with_library)` builds the session each side runs on."""

import numpy as np


def canonical(value):
    """Outputs compared byte for byte (NaN payloads included)."""
    if value is None:
        return None
    if isinstance(value, list):
        return [canonical(v) for v in value]
    if isinstance(value, dict):
        return {k: canonical(v) for k, v in value.items()}
    a = np.asarray(value)
    if a.dtype == object:
        return (a.dtype.str, a.shape, a.tolist())
    return (a.dtype.str, a.shape, a.tobytes())


def run_case(case, make_session, with_library):
    """('ok', outputs of every data set) or ('error', message)."""
    try:
        sess = make_session(case.model.SerializeToString(), with_library)
        names = [i.name for i in case.model.graph.input]
        results = []
        for inputs, _ in case.data_sets:
            feeds = {n: v for n, v in zip(names, inputs) if v is not None}
            results.append(canonical(sess.run(None, feeds)))
        return ("ok", results)
    except Exception as e:  # the host's errors are compared as text
        return ("error", f"{type(e).__name__}: {e}")


def onnx_opset(model):
    return max((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), default=0)


def compare(cases, make_session):
    """(differences, cases that ran without error) over `cases`, each run without and with the
    library."""
    differ, ran_ok = [], 0
    for case in cases:
        without = run_case(case, make_session, False)
        with_library = run_case(case, make_session, True)
        if without != with_library:
            differ.append(f"{case.name}: without {str(without)[:200]} / with {str(with_library)[:200]}")
        ran_ok += without[0] == "ok"
    return differ, ran_ok
