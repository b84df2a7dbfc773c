"""build/deploy/report.md and report.json: what each toolchain took, per model and form (the
rows tests/deploy records). Imports no pytest."""

import json

from models import BUILD


def _cell(row, key, default="-"):
    value = row.get(key)
    return default if value is None else value


def _qnn(rows):
    lines = ["## QNN HTP (onnxruntime-qnn 2.7.0, soc_model 57)", "",
             "| Model | Form | Nodes on QNN / assigned (in the model) | Equal | Prepare (s) | Oldest soc_model | Notes |",
             "|---|---|---|---|---|---|---|"]
    for (model, form), row in sorted(rows.items()):
        notes = []
        if row.get("conflict"):
            notes.append("fallback-disabled session refused (ORT 1.32 conflict), every node on QNN")
        if row.get("reference", "HTP") != "HTP":
            notes.append(row["reference"])
        elif row.get("reference_on_qnn"):
            notes.append(f"reference (the original, inputs fixed): {row['reference_on_qnn']} nodes on QNN")
        if row.get("failed"):
            notes.append(row["failed"].replace("|", "/"))
        lines.append(f"| {model} | {form} | {_cell(row, 'on_qnn')} / {_cell(row, 'assigned')} ({_cell(row, 'nodes')}) | "
                     f"{'yes' if row.get('equal') else 'no'} | {_cell(row, 'prepare_s')} | "
                     f"{_cell(row, 'oldest_soc')} | {'; '.join(notes)} |")
    return lines


def _litert(rows):
    lines = ["## LiteRT (onnx2tf 2.6.9, ai-edge-litert 2.3.0)", "",
             "| Model | Form | Backend | Converts (s) | Tensors with -1 | Flex/custom | Equal | Notes |",
             "|---|---|---|---|---|---|---|---|"]
    for (model, form, backend), row in sorted(rows.items()):
        notes = list(row.get("notes") or [])
        if row.get("failed"):
            notes.append(row["failed"].replace("|", "/"))
        lines.append(f"| {model} | {form} | {backend} | {_cell(row, 'convert_s', 'cached')} | "
                     f"{_cell(row, 'dynamic')} | {', '.join(row.get('flex') or []) or 'none'} | "
                     f"{'yes' if row.get('equal') else 'no'} | {'; '.join(notes)} |")
    return lines


def _rknn(rows):
    lines = ["## RKNN (rknn-toolkit2 2.5.0, rk3588, its simulator)", "",
             "| Model | Form | Ops on the NPU / all | On the chip's CPU | Equal | Build (s) | Notes |",
             "|---|---|---|---|---|---|---|"]
    for (model, form), row in sorted(rows.items()):
        notes = list(row.get("notes") or [])
        if row.get("failed"):
            notes.append(row["failed"].replace("|", "/"))
        cpu = ", ".join(f"{op} {n}" for op, n in (row.get("cpu_ops") or {}).items()) or "none"
        lines.append(f"| {model} | {form} | {_cell(row, 'on_npu')} / {_cell(row, 'ops')} | {cpu} | "
                     f"{'yes' if row.get('equal') else 'no'} | {_cell(row, 'build_s')} | {'; '.join(notes)} |")
    return lines


def _tails(rows):
    lines = ["## Detector tails (test_tails.py): cut where the network ends", "",
             "| Model | Form | Judge | Cut at (tensors) | Nodes in the tail (on QNN or the NPU / assigned) | Equal | "
             "Prepare or convert (s) | Notes |", "|---|---|---|---|---|---|---|---|"]
    for (model, form, judge), row in sorted(rows.items()):
        placed = f" ({_cell(row, 'on_target')} / {_cell(row, 'assigned')})" if "on_target" in row else ""
        lines.append(f"| {model} | {form} | {judge} | {_cell(row, 'cut')} | {_cell(row, 'nodes')}{placed} | "
                     f"{'yes' if row.get('equal') else 'no'} | {_cell(row, 'prepare_s', 'cached')} | "
                     f"{(row.get('failed') or '').replace('|', '/')} |")
    return lines


def _summary(table):
    lines = ["## Summary", "", "| Judge | Form | Equal / judged |", "|---|---|---|"]
    for judge in ("qnn", "litert", "rknn"):
        rows = table[judge]
        by_form = {}
        for key, row in rows.items():
            tag = key[1] if judge != "litert" else f"{key[1]}, {key[2]}"
            total = by_form.setdefault(tag, [0, 0])
            total[0] += bool(row.get("equal"))
            total[1] += 1
        for tag, (ok, n) in sorted(by_form.items()):
            lines.append(f"| {judge} | {tag} | {ok} / {n} |")
    return lines


def write(table, name="report"):
    """Writes build/deploy/<name>.md and <name>.json (deploy_rknn writes report-rknn, so that
    the deploy stage's report stays)."""
    BUILD.mkdir(parents=True, exist_ok=True)
    text = ["# The deploy stage's judges", ""] + _summary(table) + [""]
    for judge, section in (("qnn", _qnn), ("litert", _litert), ("rknn", _rknn), ("tails", _tails)):
        if table.get(judge):
            text += section(table[judge]) + [""]
    if table.get("fuzz"):
        fuzz = table["fuzz"]
        text += ["## Generated chains on QNN HTP (test_fuzz_qnn.py)", "",
                 f"NONZERO_DEPLOY_FUZZ_SEED={fuzz.get('seed')}", ""]
        text += [f"- {k}: {v}" for k, v in sorted(fuzz.get("tally", {}).items())]
    (BUILD / f"{name}.md").write_text("\n".join(text) + "\n")
    flat = {judge: [dict(row) for row in table.get(judge, {}).values()] for judge in ("qnn", "litert", "rknn", "tails")}
    flat["fuzz"] = table.get("fuzz", {})
    (BUILD / f"{name}.json").write_text(json.dumps(flat, indent=1, default=str))
