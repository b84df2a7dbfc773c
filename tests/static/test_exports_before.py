"""The committed exports judged as they are, before any `--static` rewrite (exports.py): each with
its inputs fixed to its manifest's shapes, OpenVINO's verdict and the ops it finds dynamic, and
for the small ones whether IREE's llvm-cpu backend compiles it (with the first error line if
not). Every export holds a NonZero, so every verdict must be dynamic with a NonZero among the
dynamic ops. The table goes to build/static/report.md (and report.json): the "before" table of
docs/static.md."""

import collections
import json
import time

import onnx
import pytest

import exports
import judge
from judge import BUILD

EXPORTS = exports.exports()


def _opset(path):
    model = onnx.load(str(path), load_external_data=False)
    return max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


# Followers worth naming in the table: data-dependent ops downstream of a source, and the
# control flow whose bodies hold dynamic ops.
NOTABLE = ("NonZero", "NonMaxSuppression", "TopK", "Range", "Unique", "If", "Loop")


def _followers(ops):
    notable = [op for op in ops if op[0] in NOTABLE]
    return f"{len(ops)} ops" + (f" (incl. {_types(notable)})" if notable else "")


def _types(ops):
    counts = collections.Counter(kind for kind, _ in ops)
    return ", ".join(f"{kind} x{n}" if n > 1 else kind for kind, n in counts.most_common())


@pytest.fixture(scope="module")
def report():
    rows = {}
    yield rows
    ordered = [rows[e.id] for e in EXPORTS if e.id in rows]
    (BUILD / "report.json").write_text(json.dumps(ordered, indent=1) + "\n")
    lines = [
        "# The exports as they are: OpenVINO's verdict and IREE's compile",
        "",
        f"{len(ordered)} of {len(EXPORTS)} exports (tests/static/test_exports_before.py), inputs fixed to "
        f"the shapes shown. OpenVINO {_version('openvino')}, IREE {judge._iree_version()} (llvm-cpu, "
        f"{' '.join(judge.IREE_FLAGS)}); IREE tried on exports under {exports.IREE_MAX_BYTES // 1000} kB and "
        f"on {', '.join(sorted(exports.IREE_ALSO))}.",
        "Sources: dynamic ops fed by no dynamic op (the data-dependent ones). Followers: dynamic because a",
        "source is upstream (the data-dependent and control-flow ones named). Ops inside If and Loop",
        "bodies count too.",
        "",
        "| export | opset | fixed inputs | OpenVINO | sources | followers | IREE llvm-cpu |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in ordered:
        shapes = "; ".join(f"{k} {v}" for k, v in r["shapes"].items())
        verdict = "dynamic" if r["dynamic"] else "static"
        lines.append(f"| {r['id']} | {r['opset']} | {shapes} | {verdict} | {_types(r['sources'])} | "
                     f"{_followers(r['followers'])} | {r['iree']} |")
    (BUILD / "report.md").write_text("\n".join(lines) + "\n")


def _version(package):
    from importlib.metadata import version

    return version(package)


def _iree(export, fixed):
    if not export.iree:
        return f"not tried ({export.bytes / 1e6:.1f} MB)"
    start = time.monotonic()
    try:
        judge.iree_compile(fixed)
    except judge.IreeError as e:
        return f"fails: {e.line.replace('|', '/')}"
    seconds = time.monotonic() - start
    return "compiles (cached)" if seconds < 0.3 else f"compiles ({seconds:.1f} s)"


@pytest.mark.parametrize("export", EXPORTS, ids=str)
def test_export_as_it_is(export, report):
    fixed = judge.fixed(export.path, export.shapes, BUILD / "fixed" / export.id)
    sources, followers = judge.openvino_dynamic(fixed)
    iree = _iree(export, fixed)
    report[export.id] = {
        "id": export.id, "opset": _opset(export.path), "shapes": export.shapes, "bytes": export.bytes,
        "dynamic": bool(sources), "sources": sources, "followers": followers, "iree": iree,
    }
    assert sources, "OpenVINO finds no dynamic op"
    assert "NonZero" in {kind for kind, _ in sources + followers}
    assert iree.startswith(("compiles", "fails: ", "not tried")), iree
