"""Exports the PyTorch patterns of issue 10 to ONNX with both exporters; the .onnx files are
committed so that CI needs no torch.

    python3 -m venv .venv-torch && .venv-torch/bin/pip install torch onnx onnxscript
    .venv-torch/bin/python models/exported/export.py

Writes `<pattern>_ts17.onnx` (TorchScript exporter, opset 17) and `<pattern>_dynamo18.onnx`
(dynamo exporter, opset 18), every input with dynamic axes (sizes that must agree share a
name), and `manifest.json` (pattern, exporter, torch version, ops). A pattern one exporter
cannot export is listed there with the error instead of a file.
"""

import json
import os
import sys
import warnings

import onnx
import torch
from torch.export import Dim

HERE = os.path.dirname(os.path.abspath(__file__))


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def index_put(x, mask):
    y = x.clone()
    y[mask] = x[mask] * 2.0  # tensor updates: the exporters cannot turn this into Where
    return y


def detection_postprocess(boxes, scores):
    """torchvision's RoIHeads.postprocess_detections / SSD head, per class: score threshold,
    then remove_small_boxes, each as torch.where(...)[0] feeding indexing."""
    out = []
    for c in range(1, scores.shape[1]):
        s = scores[:, c]
        inds = torch.where(s > 0.05)[0]
        b, s = boxes[inds], s[inds]
        ws, hs = b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]
        keep = torch.where((ws >= 0.01) & (hs >= 0.01))[0]
        out += [b[keep], s[keep]]
    return tuple(out)


N, M, K = Dim("N", min=2), Dim("M", min=2), Dim("K", min=2)

# name: (fn, example inputs, input names, dims per input {axis: name}).
PATTERNS = {
    "nonzero": (torch.nonzero, (torch.randn(5, 6),), {0: "N", 1: "M"}),
    "argwhere": (torch.argwhere, (torch.randint(0, 3, (4, 5, 6), dtype=torch.int32),), {0: "N", 1: "M", 2: "K"}),
    "x_mask": (lambda x, m: x[m], (torch.randn(5, 6, 3), torch.rand(5, 6) > 0.5), ({0: "N", 1: "M"}, {0: "N", 1: "M"})),
    "boxes_scores": (lambda b, s: b[s > 0.5], (torch.randn(7, 4), torch.rand(7)), ({0: "N"}, {0: "N"})),
    "masked_select": (torch.masked_select, (torch.randn(5, 6), torch.rand(6) > 0.5), ({0: "N", 1: "M"}, {0: "M"})),
    "nonzero_as_tuple": (lambda x: torch.nonzero(x, as_tuple=True), (torch.randn(5, 6),), {0: "N", 1: "M"}),
    "where_index": (lambda s, b: b[torch.where(s > 0.5)[0]], (torch.rand(7), torch.randn(7, 4)), ({0: "N"}, {0: "N"})),
    "index_put": (index_put, (torch.randn(5, 6), torch.rand(5, 6) > 0.5), ({0: "N", 1: "M"}, {0: "N", 1: "M"})),
    "detection_postprocess": (detection_postprocess, (torch.rand(20, 4) * torch.tensor([1, 1, 2, 2]), torch.rand(20, 3)), ({0: "N"}, {0: "N"})),
}


def normalise(fn, args, dims):
    dims = dims if isinstance(dims, tuple) else (dims,)
    return Fn(fn), args, dims


def export_ts(module, args, dims, path):
    names = [f"input_{i}" for i in range(len(args))]
    dynamic_axes = {n: d for n, d in zip(names, dims)}
    torch.onnx.export(module, args, path, dynamo=False, opset_version=17,
                      input_names=names, dynamic_axes=dynamic_axes)


def export_dynamo(module, args, dims, path):
    by_name = {"N": N, "M": M, "K": K}
    shapes = tuple({axis: by_name[name] for axis, name in d.items()} for d in dims)
    program = torch.onnx.export(module, args, dynamo=True, opset_version=18,
                                dynamic_shapes=(shapes,))  # forward(*args): one varargs input
    program.save(path)


def main():
    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    only = set(sys.argv[1:])
    manifest = []
    for name, (fn, args, dims) in PATTERNS.items():
        if only and name not in only:
            continue
        module, args, dims = normalise(fn, args, dims)
        for exporter, export in (("ts17", export_ts), ("dynamo18", export_dynamo)):
            path = os.path.join(HERE, f"{name}_{exporter}.onnx")
            entry = {"pattern": name, "exporter": exporter, "torch": torch.__version__}
            try:
                export(module, args, dims, path)
                model = onnx.load(path)
                onnx.checker.check_model(model)
                entry["file"] = os.path.basename(path)
                entry["ops"] = [n.op_type for n in model.graph.node]
            except Exception as e:  # noqa: BLE001 - recorded in the manifest
                entry["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300]}"
                if os.path.exists(path):
                    os.remove(path)
            manifest.append(entry)
            print(name, exporter, entry.get("error") or " ".join(entry["ops"]))
    with open(os.path.join(HERE, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
