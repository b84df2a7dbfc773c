"""Prints, as a Markdown table, what `nonzero optimize -v --report-json` says of each of issue 25's
pattern exports (models/real/tf2onnx, models/real/paddle2onnx, models/real/torch_patterns): the
NonZero count, the rewrites by kind, the NonZero left and the gathers kept with their reason
codes, and the readers that use the coordinates. models/real/README.md keeps the table made
before issue 25's rewriter changes; run this again to compare.

    .venv/bin/python tests/python/real_patterns_report.py     (after a release build of the CLI)
"""

import collections
import json
import tempfile

import onnx

import real_exports as rx
import real_patterns as rp


def counted(items):
    return ", ".join(f"{n} {k}" for k, n in sorted(collections.Counter(items).items())) or "-"


def row(entry):
    with tempfile.TemporaryDirectory() as tmp:
        report_path = f"{tmp}/report.json"
        proc, rewritten = rx.optimize(onnx.load(str(rp.path(entry))), tmp, "-v", "--report-json", report_path)
        if rewritten is None:
            return f"| `{entry['file']}` | failed: {proc.stderr.strip()[:200]} | | | | |"
        with open(report_path) as f:
            report = json.load(f)
    left = [n for n in report["left_nodes"] if n["op"] == "NonZero"]
    kept = [n for n in report["left_nodes"] if n["op"] != "NonZero"]
    kept = [n["op"] + " " + n["reason"] for n in kept]
    return (f"| {entry['folder'].name}/{entry['file']} | {report['nonzero']} | "
            f"{counted(r['kind'] for r in report['rewrites'])} | {counted(n['reason'] for n in left)} | "
            f"{counted(kept)} | {counted(u['op'] for u in report['coordinates_used'])} |")


def main():
    print("| export | NonZero | rewritten as | NonZero left | gathers kept | coordinates used by |")
    print("|---|---|---|---|---|---|")
    for entry in rp.EXPORTS:
        print(row(entry))


if __name__ == "__main__":
    main()
