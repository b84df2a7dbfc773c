"""The real exports of issue 19 (models/real: torchvision detectors and transformers models,
as PyTorch's exporters wrote them) for test_real_exports.py and benches/real_models.py: their
manifest, inputs at two sizes, the `value_info`-free variant, op counts and `nonzero optimize`.
Imports no pytest, and no torch: the .onnx files are committed."""

import collections
import json
import pathlib
import subprocess

import numpy as np
import onnx

from onnx_cases import CLI, ROOT

REAL = ROOT / "models/real"
MANIFEST = json.loads((REAL / "manifest.json").read_text())
EXPORTS = [e for e in MANIFEST if "file" in e]
# Op counts after `nonzero optimize` once ONNX's shape inference has run (expect.py writes them):
# the op types whose count the rewrite changes; the others keep the original's count.
EXPECTED = json.loads((REAL / "expected.json").read_text())
VOCAB, EOS = 99, 2
# Two sizes per kind of input: (height, width) of the image, (batch, sequence) of the tokens.
# Longformer's trace needs batch >= 2 and sequence >= 16 (manifest.json).
SIZES = {"image": [(240, 320), (288, 224)], "tokens": [(2, 16), (3, 24)]}


def kind(model):
    names = {i.name for i in model.graph.input}
    return "image" if "image" in names else "tokens"


def inputs(model, size, seed=0):
    """Feeds for a real export at SIZES[kind][size]: an image in [0, 1), or token ids in
    [3, VOCAB) with one eos ending each row (BART's classifier needs that), full attention and
    global attention on the first token."""
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in initializers]
    if kind(model) == "image":
        height, width = SIZES["image"][size]
        return {"image": rng.random((3, height, width), dtype=np.float32)}
    batch, sequence = SIZES["tokens"][size]
    ids = rng.integers(3, VOCAB, (batch, sequence), dtype=np.int64)
    ids[:, -1] = EOS
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "global_attention_mask" in names:
        feeds["global_attention_mask"] = np.zeros_like(ids)
        feeds["global_attention_mask"][:, 0] = 1
    assert sorted(feeds) == sorted(names), (names, sorted(feeds))
    return feeds


def graphs(model):
    """The main graph and every subgraph (If/Loop/Scan bodies), depth first."""
    stack = [model.graph]
    while stack:
        graph = stack.pop()
        yield graph
        for node in graph.node:
            for a in node.attribute:
                stack.extend([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs))


def nodes(model):
    """Every node of the model's graphs and functions, but the library's fallback bodies (domain
    `nonzero`, written by `nonzero optimize`: they stand for the op, and are never rewritten)."""
    for graph in graphs(model):
        yield from graph.node
    for function in model.functions:
        if function.domain != "nonzero":
            yield from function.node


def op_counts(model):
    return collections.Counter(n.op_type for n in nodes(model))


def nonzero_names(model):
    names = [n.name for n in nodes(model) if n.op_type == "NonZero" and n.domain in ("", "ai.onnx")]
    assert len(set(names)) == len(names), "NonZero node names are not unique"
    return set(names)


def without_value_info(model):
    """A copy with every graph's (and function's) value_info removed."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for graph in graphs(model):
        del graph.value_info[:]
    for function in model.functions:
        if hasattr(function, "value_info"):
            del function.value_info[:]
    return model


def variant(entry, name):
    model = onnx.load(str(REAL / entry["file"]))
    if name == "exported":
        return model
    if name == "no_value_info":
        return without_value_info(model)
    if name == "inferred":
        return onnx.shape_inference.infer_shapes(model, data_prop=True)
    raise ValueError(name)


def optimize(model, workdir, *extra):
    """`nonzero optimize` on a model: the process and the rewritten model (None if it failed)."""
    workdir = pathlib.Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    source, out = workdir / "in.onnx", workdir / "out.onnx"
    onnx.save(model, str(source))
    proc = subprocess.run([str(CLI), "optimize", str(source), str(out), *extra], capture_output=True, text=True)
    return proc, (onnx.load(str(out)) if proc.returncode == 0 else None)


def optimize_accounted(model, workdir):
    """`nonzero optimize --report-json` on a model, with the report checked to account for every
    NonZero (rewritten + left = NonZero, and the rewritten model keeps exactly those left).
    Returns the report and the rewritten model."""
    report_path = pathlib.Path(workdir) / "report.json"
    proc, rewritten = optimize(model, workdir, "--report-json", str(report_path))
    assert rewritten is not None, proc.stderr
    report = json.loads(report_path.read_text())
    before, after = nonzero_names(model), nonzero_names(rewritten)
    assert (report["nonzero"], report["rewritten"], report["left"]) == (len(before), len(before - after), len(after))
    return report, rewritten
