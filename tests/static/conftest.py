"""Shared set-up of tests/static (run by the static stage of scripts/test, in .venv-static): the
hand-made models written once under build/static/handmade/, so that IREE's compile cache
(build/static/iree/, keyed by the model's bytes) serves every later run; and the tables of the
exports before and after `--static`, written to build/static/report.md at the session's end."""

import pathlib

import onnx
import pytest

import handmade
import report
from judge import BUILD

# The shapes of the hand-made models: rank 1 to 3 (the coordinates' Div/Mod per axis).
SHAPES = [(17,), (4, 5), (2, 3, 4)]
# x_mask's trailing dims of x beyond the mask's (rows of 3 values, or single values).
TAILS = {(17,): [3], (4, 5): [3], (2, 3, 4): []}


def _ident(shape):
    return "x".join(str(d) for d in shape)


@pytest.fixture(scope="session")
def models():
    """{(kind, shape): path} of every hand-made model: kind is nonzero, x_mask, mask_assign and
    each one's `_static` form; and ("comparisons", (6,)) and ("arithmetic", (6,)) (handmade's
    comparisons(6) and arithmetic(6))."""
    folder = BUILD / "handmade"
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for shape in SHAPES:
        made = {
            "nonzero": handmade.nonzero(shape),
            "nonzero_static": handmade.nonzero_static(shape),
            "x_mask": handmade.x_mask(shape, TAILS[shape]),
            "x_mask_static": handmade.x_mask_static(shape, TAILS[shape]),
            "mask_assign": handmade.mask_assign(shape),
            "mask_assign_static": handmade.mask_assign_static(shape),
        }
        for kind, model in made.items():
            path = pathlib.Path(folder / f"{kind}_{_ident(shape)}.onnx")
            data = model.SerializeToString()
            if not path.exists() or path.read_bytes() != data:
                path.write_bytes(data)
            out[kind, shape] = path
    for kind, model in (("comparisons", handmade.comparisons(6)), ("arithmetic", handmade.arithmetic(6))):
        path, data = folder / f"{kind}_6.onnx", model.SerializeToString()
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
        out[kind, (6,)] = path
    return out


@pytest.fixture(scope="session")
def tables():
    """{"before": {export id: row}, "after": {export id: row}}: what test_exports_before.py and
    test_exports_after.py record, written by report.write when the session ends."""
    rows = {"before": {}, "after": {}}
    yield rows
    report.write(rows)


def pytest_make_parametrize_id(config, val, argname):
    if isinstance(val, tuple) and all(isinstance(d, int) for d in val):
        return _ident(val)
    return None
