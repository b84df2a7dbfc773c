"""The conformance pack (ONNX's test-case layout) through ONNX Runtime with the library: every
case must equal its expected output exactly, and numpy.nonzero (the ONNX text wins for scalars)."""

import pytest

from conftest import assert_exact, case_dirs, ensure_pack, load_case, numpy_nonzero, run, session

CASES = case_dirs(ensure_pack())


def test_pack_is_not_empty():
    assert len(CASES) >= 50, f"only {len(CASES)} conformance cases"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case):
    model, inputs, expected = load_case(case)
    (got,) = run(session(model), inputs)
    assert_exact(got, expected[0], case.name)
    t, a = inputs[0]
    assert_exact(got, numpy_nonzero(t, a), f"{case.name} vs numpy.nonzero")
