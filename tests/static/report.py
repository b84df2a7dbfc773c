"""build/static/report.md and report.json: the exports as they are (test_exports_before.py, the
"before" table) and after `nonzero optimize --static --allow-dynamic` (test_exports_after.py, the
"after" table), each row as its test recorded it. conftest.py writes both at the end of the
session, in exports.exports() order. Imports no pytest."""

import collections
import json

import exports
import judge
from judge import BUILD

# Followers worth naming in the tables: data-dependent ops downstream of a source, and the
# control flow whose bodies hold dynamic ops.
NOTABLE = ("NonZero", "NonMaxSuppression", "TopK", "Range", "Unique", "If", "Loop")
ENGINES = ("onnxruntime", "openvino", "iree")


def version(package):
    from importlib.metadata import version as v

    return v(package)


def types(ops):
    counts = collections.Counter(kind for kind, _ in ops)
    return ", ".join(f"{kind} x{n}" if n > 1 else kind for kind, n in counts.most_common())


def followers(ops):
    notable = [op for op in ops if op[0] in NOTABLE]
    return f"{len(ops)} ops" + (f" (incl. {types(notable)})" if notable else "")


def leftovers(left):
    """nonzero's report["left_nodes"] as (op, reason, n) triples, counted."""
    return ", ".join(f"{op} x{n} {reason}" if n > 1 else f"{op} {reason}" for op, reason, n in left) or "none"


def outputs(row):
    """The outputs column: per engine, yes (every case equal), with the cases judged otherwise."""
    if row.get("left") and not row.get("outputs"):
        return "n.a. (partly dynamic)"
    cells = []
    for engine in ENGINES:
        cell = row.get("outputs", {}).get(engine)
        if cell is None:
            cells.append("not run")
            continue
        text = "yes" if cell["equal"] else "NO"
        notes = []
        if cell.get("failed"):
            notes.append(cell["failed"])
        if cell.get("invalid"):
            notes.append(f"{', '.join(cell['invalid'])}: the export fails")
        if cell.get("own"):
            notes.append(f"{', '.join(cell['own'])}: vs its own run of the original, {cell['why']}")
        if cell.get("signs"):
            notes.append(f"{cell['signs']} written -0.0 read +0.0")
        cells.append(text + (f" ({'; '.join(notes)})" if notes else ""))
    return " / ".join(cells)


def _before(rows, total):
    lines = [
        "# The exports as they are: OpenVINO's verdict and IREE's compile",
        "",
        f"{len(rows)} of {total} exports (tests/static/test_exports_before.py), inputs fixed to "
        f"the shapes shown. OpenVINO {version('openvino')}, IREE {judge._iree_version()} (llvm-cpu, "
        f"{' '.join(judge.IREE_FLAGS)}); IREE tried on exports under {exports.IREE_MAX_BYTES // 1000} kB and "
        f"on {', '.join(sorted(exports.IREE_ALSO))}.",
        "Sources: dynamic ops fed by no dynamic op (the data-dependent ones). Followers: dynamic because a",
        "source is upstream (the data-dependent and control-flow ones named). Ops inside If and Loop",
        "bodies count too.",
        "",
        "| export | opset | fixed inputs | OpenVINO | sources | followers | IREE llvm-cpu |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        shapes = "; ".join(f"{k} {v}" for k, v in r["shapes"].items())
        verdict = "dynamic" if r["dynamic"] else "static"
        lines.append(f"| {r['id']} | {r['opset']} | {shapes} | {verdict} | {types(r['sources'])} | "
                     f"{followers(r['followers'])} | {r['iree']} |")
    return lines


def _after(rows, total):
    static = [r for r in rows if not r["left"]]
    agree = [r for r in static if not r["dynamic"]]
    lines = [
        "# After `nonzero optimize --static --allow-dynamic`",
        "",
        f"{len(rows)} of {total} exports (tests/static/test_exports_after.py), the same fixed inputs. "
        f"{len(static)} fully static by nonzero's report (no left_nodes), OpenVINO calling "
        f"{len(agree)} of them static; {len(rows) - len(static)} partly dynamic.",
        "Leftovers: nonzero's left_nodes (op, reason code). OpenVINO and IREE judge the written model.",
        "Outputs: trimmed to their counts, equal to the original's on ONNX Runtime, per engine (ONNX",
        "Runtime / OpenVINO CPU / IREE llvm-cpu), for the cases " + ", ".join(rows[0].get("cases", [])) + ";",
        "exact but for the float reductions (rounding), ONNX Runtime's Where writing a -0.0 as +0.0",
        "(counted), and IREE judged on denormals flushed where they are compared with zero. Where a",
        "host reads inputs its own way (NaN > threshold on OpenVINO CPU, denormals in arithmetic on",
        "IREE) and its run of the original differs from ONNX Runtime's, that run is the reference (noted).",
        "",
        "| export | NonZero before -> after | nonzero's leftovers | OpenVINO after | its sources | "
        "followers | IREE llvm-cpu after | outputs equal (ORT / OV / IREE) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        verdict = "dynamic" if r["dynamic"] else "static"
        lines.append(f"| {r['id']} | {r['nonzero_before']} -> {r['nonzero_after']} | {leftovers(r['left'])} | "
                     f"{verdict} | {types(r['sources']) or '-'} | {followers(r['followers'])} | "
                     f"{r['iree'].replace('|', '/')} | {outputs(r)} |")
    return lines


def write(tables):
    """Writes report.json ({"before": [...], "after": [...]}) and report.md from the rows the
    tests recorded (a table with no rows is left out)."""
    order = [e.id for e in exports.exports()]
    ordered = {name: [rows[i] for i in order if i in rows] for name, rows in tables.items()}
    BUILD.mkdir(parents=True, exist_ok=True)
    (BUILD / "report.json").write_text(json.dumps(ordered, indent=1) + "\n")
    lines = []
    for name, render in (("before", _before), ("after", _after)):
        if ordered.get(name):
            lines += ([""] if lines else []) + render(ordered[name], len(order))
    (BUILD / "report.md").write_text("\n".join(lines) + "\n")
