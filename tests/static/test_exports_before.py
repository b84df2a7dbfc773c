"""The committed exports judged as they are, before any `--static` rewrite (exports.py): each with
its inputs fixed to its manifest's shapes, OpenVINO's verdict and the ops it finds dynamic, and
for the small ones whether IREE's llvm-cpu backend compiles it (with the first error line if
not). Every export holds a NonZero, so every verdict must be dynamic with a NonZero among the
dynamic ops. The table goes to build/static/report.md (and report.json; report.py writes it): the
"before" table of docs/static.md."""

import onnx
import pytest

import exports
import judge
from judge import BUILD

EXPORTS = exports.exports()


def _opset(path):
    model = onnx.load(str(path), load_external_data=False)
    return max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


@pytest.fixture(scope="module")
def report(tables):
    return tables["before"]


@pytest.mark.parametrize("export", EXPORTS, ids=str)
def test_export_as_it_is(export, report):
    fixed = judge.fixed(export.path, export.shapes, BUILD / "fixed" / export.id)
    sources, followers = judge.openvino_dynamic(fixed)
    iree = judge.iree_status(fixed) if export.iree else f"not tried ({export.bytes / 1e6:.1f} MB)"
    report[export.id] = {
        "id": export.id, "opset": _opset(export.path), "shapes": export.shapes, "bytes": export.bytes,
        "dynamic": bool(sources), "sources": sources, "followers": followers, "iree": iree,
    }
    assert sources, "OpenVINO finds no dynamic op"
    assert "NonZero" in {kind for kind, _ in sources + followers}
    assert iree.startswith(("compiles", "fails: ", "not tried")), iree
