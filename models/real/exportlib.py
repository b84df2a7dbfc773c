"""Shared by export_torchvision.py and export_transformers.py: the two exporters, the NonZero
count, and the manifest entry of each export (or the error that stopped it)."""

import collections
import argparse
import json
import os
import re
import traceback
import warnings

import onnx
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "manifest.json")
MAX_BYTES = 20 * 1024 * 1024  # the limit per committed file


def arguments(models):
    """The scripts' command line: model names (default: all) and --exporters."""
    parser = argparse.ArgumentParser()
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"default: all of {', '.join(models)}")
    parser.add_argument("--exporters", default="ts17,dynamo18", help="comma-separated: ts17, dynamo18")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(models))
    if unknown:
        parser.error(f"unknown model {unknown}; known: {', '.join(models)}")
    args.names = args.names or list(models)
    return args


def op_counts(model):
    """Op types over the main graph, every subgraph (If/Loop/Scan) and every local function."""
    counts = collections.Counter()

    def walk(graph_nodes):
        for node in graph_nodes:
            counts[node.op_type] += 1
            for a in node.attribute:
                for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    walk(g.node)

    walk(model.graph.node)
    for f in model.functions:
        walk(f.node)
    return counts


def export_ts(module, args, path, input_names, output_names, dynamic_axes, opset=17):
    torch.onnx.export(module, args, path, dynamo=False, opset_version=opset, input_names=input_names,
                      output_names=output_names, dynamic_axes=dynamic_axes)


def export_dynamo(module, args, path, input_names, output_names, dynamic_shapes, opset=18):
    program = torch.onnx.export(module, args, dynamo=True, opset_version=opset, input_names=input_names,
                                output_names=output_names, dynamic_shapes=dynamic_shapes)
    program.save(path)


LIBRARY_FRAME = re.compile(r'File "[^"]*/site-packages/((?:torchvision|transformers)/[^"]+)", line (\d+), in (\w+)')


def describe_error(e):
    """The first line of the exception and of its innermost cause (the dynamo exporter wraps the
    reason, such as a data-dependent guard, in a generic "step 1/3" error), and the deepest
    torchvision/transformers frame it passed through, which says where the model's code failed."""
    def first_line(x):
        text = re.sub(r"\x1b\[[0-9;]*m", "", traceback.format_exception_only(type(x), x)[-1])  # colour codes
        return text.strip().splitlines()[0][:300]

    chain, where = [e], None
    while chain[-1].__cause__ is not None or chain[-1].__context__ is not None:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    for x in chain:
        text = "".join(traceback.format_exception(type(x), x, x.__traceback__))
        frames = LIBRARY_FRAME.findall(text)
        if frames:
            where = "{}:{} in {}".format(*frames[-1])
    out = first_line(e) if len(chain) == 1 else f"{first_line(e)} <- {first_line(chain[-1])}"
    return out if where is None else f"{out} (at {where})"


def record(name, exporter, describe, export, feeds_note):
    """Runs `export(path)` and returns the manifest entry: the file's facts, or the error.
    The file is kept as the exporter wrote it (no shape inference, no clean-up)."""
    path = os.path.join(HERE, f"{name}_{exporter}.onnx")
    entry = {"name": name, "exporter": exporter, "torch": torch.__version__, **describe, "inputs": feeds_note}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            export(path)
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise ValueError(f"{size} bytes, over the {MAX_BYTES}-byte limit")
        model = onnx.load(path)
        onnx.checker.check_model(model)
        counts = op_counts(model)
        entry.update(file=os.path.basename(path), bytes=size, nonzero=counts["NonZero"],
                     nodes=sum(counts.values()), value_info=len(model.graph.value_info),
                     opset=next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")))
    except Exception as e:  # noqa: BLE001 - recorded in the manifest
        entry["error"] = describe_error(e)
        if os.path.exists(path):
            os.remove(path)
        if os.path.exists(path + ".data"):
            os.remove(path + ".data")
    print(name, exporter, entry.get("error") or f"{entry['nonzero']} NonZero, {entry['bytes']} bytes", flush=True)
    return entry


def write_manifest(source, entries):
    """Puts these entries into manifest.json, replacing those of the same name and exporter and
    keeping the rest (the other script's, and exporters not run this time)."""
    fresh = {(e["name"], e["exporter"]) for e in entries}
    old = []
    if os.path.exists(MANIFEST):
        with open(MANIFEST) as f:
            old = [e for e in json.load(f) if (e["name"], e["exporter"]) not in fresh]
    for e in entries:
        e["source"] = source
    merged = sorted(old + entries, key=lambda e: (e["source"], e["name"], e["exporter"]))
    with open(MANIFEST, "w") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")
