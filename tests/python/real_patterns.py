"""Issue 25's pattern exports (models/real/tf2onnx, models/real/paddle2onnx,
models/real/torch_patterns, made by the export script in each folder) for
test_real_exports_patterns.py: their manifests, and valid inputs made as each manifest says, at
each of its sizes and for each mask case (random, all false, all true). Imports no pytest, and
no exporter: the .onnx files are committed."""

import json

import numpy as np

from onnx_cases import ROOT

FOLDERS = [ROOT / "models/real" / d for d in ("tf2onnx", "paddle2onnx", "torch_patterns", "families")]
MANIFESTS = {folder.name: json.loads((folder / "manifest.json").read_text()) for folder in FOLDERS}
EXPORTS = [dict(e, folder=folder) for folder in FOLDERS for e in MANIFESTS[folder.name] if "file" in e]
FAILED = [e for m in MANIFESTS.values() for e in m if "file" not in e]
# "random": masks about half true; "none": every mask all false (and every token routed to the
# first experts, so the last get none); "all": every mask all true (tokens to the last experts);
# "one": one true element per mask. An entry's "invalid_cases" are those its export fails on, on
# ONNX Runtime's own kernels ("invalid_why" says why).
CASES = ("random", "none", "all", "one")
DTYPES = {"float32": np.float32, "bool": np.bool_, "int64": np.int64, "int32": np.int32}


def path(entry):
    return entry["folder"] / entry["file"]


def shape(spec, sizes):
    return tuple(s if isinstance(s, int) else sizes[s] for s in spec["shape"])


def values(spec, dims, case, rng):
    """One input's values: see models/real/patternlib.py for the kinds."""
    kind, dtype = spec["values"], DTYPES[spec["dtype"]]
    if kind == "normal":
        return rng.standard_normal(dims).astype(dtype)
    if kind == "mask":
        if case == "random":
            return rng.random(dims) < 0.5
        if case == "one":
            m = np.zeros(dims, dtype=bool)
            m.flat[rng.integers(m.size)] = True
            return m
        return np.full(dims, case == "all", dtype=bool)
    if kind.startswith("int:"):
        lo, hi = (int(v) for v in kind.split(":")[1:])
        return rng.integers(lo, hi, dims).astype(dtype)
    if kind == "router":
        logits = rng.standard_normal(dims).astype(dtype)
        if case in ("none", "all"):  # the top experts by far: the first ones, or the last ones
            top = np.arange(dims[-1]) if case == "none" else np.arange(dims[-1])[::-1]
            logits += np.where(top < 2, 10.0 * (2 - top), 0.0).astype(dtype)
        return logits
    if kind == "image":  # pixels in [0, 1): random, blank, white, or dim but for one bright row
        if case in ("none", "all"):
            return np.full(dims, float(case == "all"), dtype)
        image = rng.random(dims).astype(dtype)
        if case == "one":
            image *= 0.1
            image[..., rng.integers(dims[-2]), :] = 1.0
        return image
    if kind == "ones":
        return np.ones(dims, dtype)
    if kind.startswith("image_tokens:"):
        return image_tokens(kind, dims, case, rng).astype(dtype)
    raise ValueError(f"unknown values {kind!r}")


def image_tokens(kind, dims, case, rng):
    """Token ids `[batch, sequence]` for a vision-language model, `image_tokens:ID:N`: ids below ID,
    and in each row the image's N tokens (id ID) in one run at a random place ("random"), none
    ("none"), N at the start ("all") or one ("one"). The model writes the image's features over
    them; more than N per row fails in the original (too few features)."""
    token, count = (int(v) for v in kind.split(":")[1:])
    ids = rng.integers(3, token, dims)
    for row in ids.reshape(-1, dims[-1]):
        run = {"random": count, "none": 0, "all": count, "one": 1}[case]
        start = 0 if case == "all" else int(rng.integers(dims[-1] - run + 1))
        row[start:start + run] = token
    return ids


def inputs(entry, size, case, seed=0):
    """Feeds for an export at its manifest's sizes[size], for a mask case."""
    rng = np.random.default_rng(seed)
    sizes = entry["sizes"][size]
    return {spec["name"]: values(spec, shape(spec, sizes), case, rng) for spec in entry["inputs"]}


def masks(entry, feeds):
    """The bool inputs of these feeds (what the cases are about)."""
    return [feeds[s["name"]] for s in entry["inputs"] if s["values"] == "mask"]
