"""Exports the PyTorch patterns of issue 25 (item 4) with both exporters, exactly as they write
them (no shape inference, no clean-up): a hand-written top-k MoE router, masked_scatter,
`x[mask] = v`, `x[mask] += v`, `mask.nonzero().squeeze(1)` then index_select, and where-tuple
indexing `x[torch.where(cond)]` with a 2-D cond; and issue 26's mask-then-NMS, torchvision's
`nms(boxes[m], scores[m])`, reductions of a selection (prod, any, all), and patterns inside
control flow (`if_*`, `loop_*`): TorchScript exports a scripted module's `if` and `for` as If
and Loop; the dynamo exporter exports `torch.cond` as If and has no loops (torch.export cannot
unroll a loop over a dynamic size: its failure is recorded). CI never runs this:
the .onnx files are committed.

    python3 -m venv /tmp/venv-torch && /tmp/venv-torch/bin/pip install -r requirements/export-models.txt
    /tmp/venv-torch/bin/python models/real/torch_patterns/export_torch_patterns.py [NAME...]

Pinned: torch 2.15.0, onnx 1.23.2, onnxscript 0.7.2 from PyPI (requirements/export-models.txt;
torchvision 0.29.2 for nms; transformers is not needed here). TorchScript exporter at opset 17 (`ts17`) and
dynamo exporter at opset 18 (`dynamo18`), as models/exported/export.py; every dim dynamic but the
feature sizes, dims that must agree sharing a name. Writes `<name>_<exporter>.onnx` and
manifest.json (see models/real/patternlib.py); an export that fails is listed with its error.
"""

import os
import sys
import warnings

import torch
import torchvision
from torch.export import Dim

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import exportlib  # noqa: E402
import patternlib  # noqa: E402

EXPERTS, TOP_K, HIDDEN = 4, 2, 8


class MoeRouter(torch.nn.Module):
    """A hand-written top-k mixture-of-experts block: per expert, the (token, slot) pairs routed
    to it by nonzero, its routing weight read weights[token, slot], its tokens hidden[token],
    and its output added back with index_add."""

    def __init__(self):
        super().__init__()
        self.experts = torch.nn.ModuleList(torch.nn.Linear(HIDDEN, HIDDEN) for _ in range(EXPERTS))

    def forward(self, hidden, router_logits):
        probs = torch.softmax(router_logits, dim=-1)
        weights, expert_ids = torch.topk(probs, TOP_K, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(hidden)
        for e in range(EXPERTS):
            idx = (expert_ids == e).nonzero()
            token, slot = idx[:, 0], idx[:, 1]
            w = weights[token, slot]
            y = self.experts[e](hidden[token]) * w[:, None]
            out = out.index_add(0, token, y)
        return out


class Two(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, m):
        return self.fn(x, m)


class Three(Two):
    def forward(self, x, m, v):
        return self.fn(x, m, v)


def mask_assign(x, m, v):
    y = x.clone()
    y[m] = v
    return y


def mask_add(x, m, v):
    y = x.clone()
    y[m] += v
    return y


def mask_assign_scalar(x, m):
    y = x.clone()
    y[m] = 0.5
    return y


def nonzero_index_select(x, m):
    return x.index_select(0, m.nonzero().squeeze(1))


def mask_nms(boxes, scores, m):
    kept = boxes[m]
    return kept[torchvision.ops.nms(kept, scores[m], 0.5)]


def mask_nms_indices(boxes, scores, m):
    return torchvision.ops.nms(boxes[m], scores[m], 0.5)


def masked_prod(x, m):
    return x[m].prod(0)


def masked_any(x, m):
    return (x[m] > 0).any()


def masked_all(x, m):
    return (x[m] > 0).all()


class IfMaskedScatter(torch.nn.Module):
    def forward(self, x, m, s):
        if bool(x.sum() > 0):
            y = x.masked_scatter(m, s)
        else:
            y = x * 2
        return y


class CondMaskedScatter(torch.nn.Module):
    def forward(self, x, m, s):
        return torch.cond(x.sum() > 0, lambda x, m, s: x.masked_scatter(m, s), lambda x, m, s: x * 2, (x, m, s))


class IfMaskAdd(torch.nn.Module):
    def forward(self, x, m, v):
        y = x.clone()
        if bool(x.sum() > 0):
            y[m] += v
        return y


class CondMaskAdd(torch.nn.Module):
    def forward(self, x, m, v):
        return torch.cond(x.sum() > 0, mask_add, lambda x, m, v: x.clone(), (x, m, v))


class IfSelect(torch.nn.Module):
    def forward(self, x, m):
        if bool(x.sum() > 0):
            y = x[m]
        else:
            y = x[~m]
        return y


class CondSelect(torch.nn.Module):
    def forward(self, x, m):
        return torch.cond(x.sum() > 0, lambda x, m: x[m], lambda x, m: x[~m], (x, m))


class LoopCount(torch.nn.Module):
    """Per row, the number of its positive entries, summed."""

    def forward(self, x):
        total = torch.zeros((), dtype=torch.long)
        for i in range(x.shape[0]):
            total = total + (x[i] > 0).nonzero().shape[0]
        return total


class LoopMaskedWrite(torch.nn.Module):
    """Row by row, out takes x[i] where m[i], then twice that again through a masked write."""

    def forward(self, x, m):
        out = torch.zeros(x.shape[1])
        for i in range(x.shape[0]):
            out = torch.where(m[i], x[i], out)
            out[m[i]] = x[i][m[i]] * 2
        return out


NO_LOOPS = ("the dynamo exporter has no loops: torch.export unrolls a Python loop at the example's size "
            "(6 copies of the body for n = 6) and fixes n, so the export would not take the manifest's sizes")


def per_exporter(scripted, traced):
    """TorchScript exports torch.jit.script(scripted); the dynamo exporter exports traced, or
    nothing where traced is a reason (a string)."""
    return {"ts17": torch.jit.script(scripted), "dynamo18": traced}


def inp(name, shape, dtype, values):
    return {"name": name, "shape": shape, "dtype": dtype, "values": values}


X_N3 = inp("x", ["n", 3], "float32", "normal")
M_N = inp("m", ["n"], "bool", "mask")
X_NK = inp("x", ["n", "k"], "float32", "normal")
M_NK = inp("m", ["n", "k"], "bool", "mask")
SIZES_N = [{"n": 7}, {"n": 12}]
SIZES_NK = [{"n": 4, "k": 5}, {"n": 6, "k": 3}]

torch.manual_seed(0)  # the router's experts
# name: (module, description, inputs, sizes, example sizes)
MODELS = {
    "moe_router": (MoeRouter(), f"hand-written top-{TOP_K} MoE router, {EXPERTS} experts of Linear({HIDDEN}, {HIDDEN}): "
                   "(expert_ids == e).nonzero(), weights[token, slot], hidden[token], index_add",
                   [inp("hidden", ["t", HIDDEN], "float32", "normal"), inp("router_logits", ["t", EXPERTS], "float32", "router")],
                   [{"t": 6}, {"t": 11}], {"t": 6}),
    "masked_scatter": (Three(lambda x, m, s: x.masked_scatter(m, s)), "x.masked_scatter(m, s): x, m, s [n, k]",
                       [X_NK, M_NK, inp("s", ["n", "k"], "float32", "normal")], SIZES_NK, {"n": 6, "k": 5}),
    "mask_assign": (Three(mask_assign), "y = x.clone(); y[m] = v: x [n, 3], m [n], v [3]",
                    [X_N3, M_N, inp("v", [3], "float32", "normal")], SIZES_N, {"n": 6}),
    "mask_add": (Three(mask_add), "y = x.clone(); y[m] += v: x [n, 3], m [n], v [3]",
                 [X_N3, M_N, inp("v", [3], "float32", "normal")], SIZES_N, {"n": 6}),
    "mask_assign_scalar": (Two(mask_assign_scalar), "y = x.clone(); y[m] = 0.5: x, m [n, k]",
                           [X_NK, M_NK], SIZES_NK, {"n": 6, "k": 5}),
    "nonzero_index_select": (Two(nonzero_index_select), "x.index_select(0, m.nonzero().squeeze(1)): x [n, 3], m [n]",
                             [X_N3, M_N], SIZES_N, {"n": 6}),
    "where_tuple": (Two(lambda x, c: x[torch.where(c)]), "x[torch.where(c)]: x [n, k, 3], c [n, k]",
                    [inp("x", ["n", "k", 3], "float32", "normal"), inp("c", ["n", "k"], "bool", "mask")],
                    SIZES_NK, {"n": 6, "k": 5}),
    "mask_nms": (Three(mask_nms), "kept = boxes[m]; kept[nms(kept, scores[m], 0.5)]: boxes [n, 4], scores [n], m [n]",
                 [inp("boxes", ["n", 4], "float32", "normal"), inp("scores", ["n"], "float32", "normal"), M_N],
                 SIZES_N, {"n": 6}),
    "mask_nms_indices": (Three(mask_nms_indices), "nms(boxes[m], scores[m], 0.5): boxes [n, 4], scores [n], m [n]",
                         [inp("boxes", ["n", 4], "float32", "normal"), inp("scores", ["n"], "float32", "normal"), M_N],
                         SIZES_N, {"n": 6}),
    "masked_prod": (Two(masked_prod), "x[m].prod(0): x [n, 3], m [n]", [X_N3, M_N], SIZES_N, {"n": 6}),
    "masked_any": (Two(masked_any), "(x[m] > 0).any(): x [n, 3], m [n]", [X_N3, M_N], SIZES_N, {"n": 6}),
    "masked_all": (Two(masked_all), "(x[m] > 0).all(): x [n, 3], m [n]", [X_N3, M_N], SIZES_N, {"n": 6}),
    "where_tuple_same_shape": (Two(lambda x, c: x[torch.where(c)]), "x[torch.where(c)]: x, c [n, k]",
                               [X_NK, inp("c", ["n", "k"], "bool", "mask")], SIZES_NK, {"n": 6, "k": 5}),
    "if_masked_scatter": (per_exporter(IfMaskedScatter(), CondMaskedScatter()),
                          "if x.sum() > 0: y = x.masked_scatter(m, s) else: y = x * 2: x, m, s [n, k]",
                          [X_NK, M_NK, inp("s", ["n", "k"], "float32", "normal")], SIZES_NK, {"n": 6, "k": 5}),
    "if_mask_add": (per_exporter(IfMaskAdd(), CondMaskAdd()),
                    "y = x.clone(); if x.sum() > 0: y[m] += v: x [n, 3], m [n], v [3]",
                    [X_N3, M_N, inp("v", [3], "float32", "normal")], SIZES_N, {"n": 6}),
    "if_select": (per_exporter(IfSelect(), CondSelect()), "y = x[m] if x.sum() > 0 else x[~m]: x [n, 3], m [n]",
                  [X_N3, M_N], SIZES_N, {"n": 6}),
    "loop_count": (per_exporter(LoopCount(), NO_LOOPS),
                   "for i in range(n): total += (x[i] > 0).nonzero().shape[0]: x [n, 3]",
                   [X_N3], SIZES_N, {"n": 6}),
    "loop_masked_write": (per_exporter(LoopMaskedWrite(), NO_LOOPS),
                          "for i in range(n): out = where(m[i], x[i], out); out[m[i]] = x[i][m[i]] * 2: x, m [n, k]",
                          [X_NK, M_NK], SIZES_NK, {"n": 6, "k": 5}),
}


# Mask cases (tests/python/real_patterns.py) on which an export fails on ONNX Runtime's own
# kernels, and why: the manifest lists them, and the tests assert that they fail.
INVALID = {
    ("mask_assign", "ts17"): (["random", "all"], "the TorchScript exporter writes y[m] = v as ScatterND with updates "
                              "Slice(Reshape(v, [-1]), 0, nnz), nnz counting elements of m expanded to x's shape: "
                              "ScatterND refuses the 3 values unless m has at most one true row"),
}


def example(inputs, sizes):
    """Example tensors at the example sizes (masks half true, logits random)."""
    out = []
    for i in inputs:
        shape = [s if isinstance(s, int) else sizes[s] for s in i["shape"]]
        out.append(torch.rand(shape) > 0.5 if i["dtype"] == "bool" else torch.randn(shape))
    return tuple(out)


def main():
    warnings.filterwarnings("ignore")
    names = sys.argv[1:] or list(MODELS)
    versions = {"torch": torch.__version__}
    entries = []
    for name in names:
        modules, text, inputs, sizes, example_sizes = MODELS[name]
        torch.manual_seed(0)
        args = example(inputs, example_sizes)
        in_names = [i["name"] for i in inputs]
        axes = {i["name"]: {a: s for a, s in enumerate(i["shape"]) if isinstance(s, str)} for i in inputs}
        dims = {d: Dim(d, min=2) for a in axes.values() for d in a.values()}
        for exporter in ("ts17", "dynamo18"):
            module = modules[exporter] if isinstance(modules, dict) else modules
            if isinstance(module, str):
                def export(path, reason=module):
                    raise NotImplementedError(reason)
            elif exporter == "ts17":
                def export(path):
                    exportlib.export_ts(module.eval(), args, path, in_names, ["y"], axes)
            else:
                def export(path):
                    shapes = tuple({a: dims[d] for a, d in axes[n].items()} or None for n in in_names)
                    exportlib.export_dynamo(module.eval(), args, path, in_names, ["y"], shapes)
            with torch.no_grad():
                describe = {"pattern": text}
                if (name, exporter) in INVALID:
                    describe["invalid_cases"], describe["invalid_why"] = INVALID[name, exporter]
                entries.append(patternlib.record(HERE, name, exporter, versions, describe,
                                                 inputs, sizes, export, exportlib.describe_error))
    patternlib.write_manifest(HERE, entries)


if __name__ == "__main__":
    main()
