"""Every bundled model (models/*) runs with the library and reproduces its stored output."""

import pytest

from conftest import ROOT, assert_exact, case_dirs, load_case, run_case_model

MODELS = case_dirs(ROOT / "models")


def test_models_are_bundled():
    assert len(MODELS) >= 6, MODELS


@pytest.mark.parametrize("case", MODELS, ids=[m.name for m in MODELS])
def test_model(case):
    model, inputs, expected = load_case(case)
    got = run_case_model(model, inputs)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert_exact(g, e, f"{case.name} output {i}")
