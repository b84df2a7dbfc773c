"""Shared by the pattern exports of issue 25 (models/real/tf2onnx, models/real/paddle2onnx,
models/real/torch_patterns): the manifest entry of each export, the chain its exporter wrote
around each NonZero, and the manifest file. Imports onnx only (each exporter has its own venv).

A manifest entry says how to make valid inputs, read by tests/python/real_patterns.py:
  "inputs": [{"name", "shape": [int or dim name], "dtype", "values"}], where values is
    "normal" (float), "mask" (bool: random, all false or all true by the test's case),
    "int:LO:HI" (integers in [LO, HI)), or "router" (logits: random, or every token's
    top experts the first ones, so that the last experts get no token);
  "sizes": [{dim name: size}], the dims' sizes to run at (dims sharing a name must agree).
"""

import collections
import json
import os

import onnx

SINKS = {"Shape", "Size", "GatherND", "Gather", "GatherElements", "ScatterND", "ScatterElements", "Compress",
         "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}
MAX_HOPS = 8


def op_counts(model):
    counts = collections.Counter()

    def walk(nodes):
        for node in nodes:
            counts[node.op_type] += 1
            for a in node.attribute:
                for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    walk(g.node)

    walk(model.graph.node)
    for f in model.functions:
        walk(f.node)
    return counts


def _attrs(node):
    """The attributes that tell chains apart (axis, perm, ...), short."""
    out = []
    for a in node.attribute:
        value = onnx.helper.get_attribute_value(a)
        if isinstance(value, bytes):
            value = value.decode()
        if isinstance(value, (int, float, str)) or (isinstance(value, list) and len(value) <= 4):
            out.append(f"{a.name}={value}")
    return f"({', '.join(out)})" if out else ""


def _constant(graph, name):
    """The value of a Constant node's output or an initializer, if small."""
    for t in graph.initializer:
        if t.name == name:
            return onnx.numpy_helper.to_array(t)
    for n in graph.node:
        if n.op_type == "Constant" and n.output[0] == name:
            return onnx.numpy_helper.to_array(n.attribute[0].t) if n.attribute[0].type == onnx.AttributeProto.TENSOR else None
    return None


def _label(graph, node):
    """`Op(attrs)`, with small constant inputs written in brackets (Squeeze's axes, Reshape's shape)."""
    consts = []
    for i in node.input[1:]:
        value = _constant(graph, i) if i else None
        if value is not None and value.size <= 4:
            consts.append(str(value.tolist()))
    return node.op_type + _attrs(node) + (f"[{', '.join(consts)}]" if consts else "")


def chains(model):
    """For each NonZero of the main graph: its producers (up to three hops back through one-input
    ops, Cast/Reshape/Equal...) and every path forward from it, op by op, to the first Shape,
    gather or scatter indexed by it, reduction or graph output, or MAX_HOPS ops (a Gather that
    picks a column of the coordinates is followed). A gather or scatter names the
    op that made its data (`data=Reshape`), or the graph input."""
    graph = model.graph
    producer = {o: n for n in graph.node for o in n.output}
    consumers = collections.defaultdict(list)
    for n in graph.node:
        for i in n.input:
            consumers[i].append(n)
    outputs = {o.name for o in graph.output}
    result = []
    for nz in (n for n in graph.node if n.op_type == "NonZero"):
        back, name = [], nz.input[0]
        while name in producer and len(back) < 3 and producer[name].op_type != "Constant":
            p = producer[name]
            back.insert(0, _label(graph, p))
            name = p.input[0] if p.input else ""
        paths = []

        def forward(name, path):
            nexts = consumers[name]
            if name in outputs:
                paths.append(path + ["output"])
            for n in nexts:
                label = _label(graph, n)
                if n.op_type in SINKS - {"Shape", "Size"} and n.input[0] != name:
                    data = producer.get(n.input[0])
                    label += f"<data={data.op_type if data is not None else n.input[0]}>"
                step = path + [label]
                picks = n.op_type.startswith("Gather") and n.input[0] == name  # a column of the coordinates
                if (n.op_type in SINKS and not picks) or len(step) >= MAX_HOPS:
                    paths.append(step)
                else:
                    for o in n.output:
                        forward(o, step)
            if not nexts and name not in outputs:
                paths.append(path)

        forward(nz.output[0], [])
        unique = sorted({" -> ".join(p) for p in paths})
        result.append({"node": nz.name, "before": " -> ".join(back), "after": unique})
    return result


def first_line(e):
    return f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"


def record(here, name, exporter, versions, describe, inputs, sizes, export, describe_error=first_line):
    """Runs `export(path)` and returns the manifest entry: the file's facts and chains, or the
    error. The file is kept exactly as the exporter wrote it."""
    path = os.path.join(here, f"{name}_{exporter}.onnx")
    entry = {"name": name, "exporter": exporter, **versions, **describe, "inputs": inputs, "sizes": sizes}
    try:
        export(path)
        model = onnx.load(path)
        onnx.checker.check_model(model)
        counts = op_counts(model)
        if counts["NonZero"] == 0:
            raise ValueError(f"no NonZero in the export: {sorted(counts)}")
        entry.update(file=os.path.basename(path), bytes=os.path.getsize(path), nonzero=counts["NonZero"],
                     nodes=sum(counts.values()), value_info=len(model.graph.value_info),
                     opset=next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
                     onnx_inputs=[i.name for i in model.graph.input],
                     chains=chains(model))
    except Exception as e:  # noqa: BLE001 - recorded in the manifest
        entry["error"] = describe_error(e)
        if os.path.exists(path):
            os.remove(path)
    print(name, exporter, entry.get("error") or f"{entry['nonzero']} NonZero, {entry['bytes']} bytes", flush=True)
    return entry


def write_manifest(here, entries):
    """manifest.json beside the script: these entries replace those of the same name and
    exporter; the others are kept (a run may export only some)."""
    path = os.path.join(here, "manifest.json")
    fresh = {(e["name"], e["exporter"]) for e in entries}
    old = []
    if os.path.exists(path):
        with open(path) as f:
            old = [e for e in json.load(f) if (e["name"], e["exporter"]) not in fresh]
    merged = sorted(old + entries, key=lambda e: (e["name"], e["exporter"]))
    with open(path, "w") as f:
        json.dump(merged, f, indent=1)
        f.write("\n")


def main(folders):
    """Recomputes the chains of the committed files in these folders' manifests (after a change
    to chains(); the exporters are not needed)."""
    for here in folders:
        path = os.path.join(here, "manifest.json")
        with open(path) as f:
            entries = json.load(f)
        for e in entries:
            if "file" in e:
                e["chains"] = chains(onnx.load(os.path.join(here, e["file"])))
        with open(path, "w") as f:
            json.dump(entries, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
