"""Inputs for the exports and their `--static` forms (test_exports_after.py): for each export and
case, valid feeds at the export's fixed shapes (exports.py). Imports no pytest.

Each input has a role. A pattern export's manifest names it ("mask", "normal", ...). For
models/exported it is read off the graph: a bool input is a mask; a number that reaches NonZero
unchanged (through Expand, Cast, Reshape, ...) is compared with zero ("nonzero"); any other float
is a score that the export compares with a threshold in [0, 1) ("scores": `scores > 0.5`, and
detection_postprocess's `> 0.05` and box sizes `>= 0.01`).

models/real's transformers take their manifest's kind of inputs: token ids in [3, 99) with one
eos ending each row ("all": every token an eos), full attention ("none": padding only), global
attention on the first token. Its detectors take an image in [0, 1) ("none": blank, "all":
white, "one": dim but for one bright row).

The cases: "random" (masks about half true), "none" (every mask all false), "all" (every mask all
true), "one" (one true element, or one row of scores above the thresholds), and "specials":
random, with NaN, -0.0 and the denormals of handmade.DENORMALS at distinct places of every float
input (as many as fit)."""

import functools
import pathlib
import sys
import zlib

import numpy as np
import onnx

from handmade import DENORMALS, flush_denormals

sys.path.append(str(pathlib.Path(__file__).resolve().parents[1] / "python"))
import real_patterns  # noqa: E402  (the pattern folders' other kinds of values)

CASES = ("random", "none", "all", "one", "specials")
# Ops that hand a value to NonZero unchanged (as far as "is it zero" goes).
PASS_THROUGH = {"Expand", "Cast", "Reshape", "Identity", "Unsqueeze", "Squeeze", "Flatten"}
NUMPY = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.BOOL: np.bool_,
         onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}
SPECIALS = np.concatenate([np.array([np.nan, -0.0], np.float32), DENORMALS])


def _inputs(path):
    model = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    return model, {i.name: NUMPY[i.type.tensor_type.elem_type] for i in model.graph.input
                   if i.name not in initializers}


def _reaches_nonzero(model, name):
    consumers = {}
    for node in model.graph.node:
        for i in node.input:
            consumers.setdefault(i, []).append(node)
    todo, seen = [name], set()
    while todo:
        value = todo.pop()
        for node in consumers.get(value, []):
            if node.op_type == "NonZero":
                return True
            if node.op_type in PASS_THROUGH and node.input[0] == value and node.output[0] not in seen:
                seen.add(node.output[0])
                todo.append(node.output[0])
    return False


@functools.lru_cache(maxsize=None)
def roles(export):
    """{input name: (role, numpy dtype)}: see the module's text."""
    model, types = _inputs(export.path)
    if export.entry is not None:
        return {s["name"]: (s["values"], types[s["name"]]) for s in export.entry["inputs"]}
    if set(types) == {"image"}:  # models/real's detectors: an image in [0, 1)
        return {"image": ("image", types["image"])}
    if "input_ids" in types:  # models/real's transformers (its manifest's kind of inputs)
        return {name: ({"input_ids": "tokens", "attention_mask": "attention"}.get(name, "global"), dtype)
                for name, dtype in types.items()}
    out = {}
    for name, dtype in types.items():
        if dtype == np.bool_:
            out[name] = ("mask", dtype)
        elif _reaches_nonzero(model, name):
            out[name] = ("nonzero", dtype)
        else:
            assert dtype == np.float32, (export.id, name, dtype)
            out[name] = ("scores", dtype)
    return out


def _values(role, dtype, dims, case, rng):
    """One input's values for a role of roles(): the roles of models/real's main exports and of
    the hand-made models here; the pattern folders' kinds (mask, normal, router, image, ...) are
    tests/python/real_patterns.py's, the one generator of each."""
    dims = tuple(dims)
    if role == "nonzero":
        if dtype == np.float32:
            zero = np.where(rng.random(dims) < 0.5, np.float32(0.0), np.float32(-0.0)).astype(dtype)
            some = rng.standard_normal(dims).astype(dtype) + np.float32(3.0)  # never zero
        else:
            zero, some = np.zeros(dims, dtype), rng.integers(1, 5, dims).astype(dtype)
        keep = {"random": rng.random(dims) < 0.5, "none": np.zeros(dims, bool), "all": np.ones(dims, bool),
                "one": real_patterns.values({"values": "mask", "dtype": "bool"}, dims, "one", rng)}[case]
        return np.where(keep, some, zero)
    if role == "scores":
        v = rng.random(dims).astype(dtype)
        if case == "one":  # one row (along the first axis) above every threshold, the rest below
            v -= 2
            v[rng.integers(dims[0])] += 4
            return v
        return v - 2 if case == "none" else v + 2 if case == "all" else v
    if role == "tokens":  # ids in [3, 99), one eos (2) ending each row; "all": every id eos
        ids = rng.integers(3, 99, dims).astype(dtype)
        ids[..., -1] = 2
        return np.full(dims, 2, dtype) if case == "all" else ids
    if role == "attention":  # full attention; "none": padding only (selects nothing)
        return np.zeros(dims, dtype) if case == "none" else np.ones(dims, dtype)
    if role == "global":  # Longformer's global attention: the first token
        g = np.zeros(dims, dtype)
        g[..., 0] = 1
        return g
    # The pattern folders' kinds (models/real/tf2onnx, ..., families), the detectors' image
    # included (pixels in [0, 1): random, blank, white, or dim but for one bright row).
    return real_patterns.values({"values": role, "dtype": np.dtype(dtype).name}, dims, case, rng)


def with_specials(value, rng):
    """`value` with SPECIALS at distinct random places (the first ones, if fewer places)."""
    flat = value.reshape(-1).copy()
    k = min(flat.size, len(SPECIALS))
    flat[rng.choice(flat.size, k, replace=False)] = SPECIALS[:k]
    return flat.reshape(value.shape)


def draw(export, case, rng):
    """The export's inputs for `case` (not "specials") at its fixed shapes, drawn from `rng`
    (tests/reliability's static soak draws many this way)."""
    return {name: _values(role, dtype, export.shapes[name], case, rng)
            for name, (role, dtype) in roles(export).items()}


def feeds(export, case):
    """The export's inputs for one case, the same on every call (seeded by export and case)."""
    rng = np.random.default_rng([zlib.crc32(export.id.encode()), CASES.index(case)])
    out = draw(export, "random" if case == "specials" else case, rng)
    if case == "specials":
        out = {name: with_specials(v, rng) if v.dtype == np.float32 else v for name, v in out.items()}
    return out


def flushed(export, feeds):
    """The feeds with the denormals of every float compared with zero ("nonzero" role) flushed
    to zeros of their sign: what IREE's CPU code reads (docs/static.md, "Denormals")."""
    compared = {name for name, (role, _) in roles(export).items() if role == "nonzero"}
    return {name: flush_denormals(v) if name in compared and v.dtype == np.float32 else v
            for name, v in feeds.items()}


def nan_compared(export, feeds):
    """A NaN reaches a Greater or GreaterOrEqual: a score compared with a threshold, or, in the
    control-flow exports, a float input holding one compared with zero (`if x.sum() > 0`,
    `x[i] > 0` in a loop body). OpenVINO CPU's Greater and GreaterOrEqual read NaN as greater
    (test_handmade.py pins it), ONNX Runtime's and IREE's as not."""
    if any(role == "scores" and np.isnan(feeds[name]).any() for name, (role, _) in roles(export).items()):
        return True
    nan_in = any(v.dtype.kind == "f" and np.isnan(v).any() for v in feeds.values())
    return nan_in and _has_control_flow(export.path) and bool(_ops(export.path) & {"Greater", "GreaterOrEqual"})


@functools.lru_cache(maxsize=None)
def _ops(path):
    """The op types of the model at `path`, its If and Loop bodies included."""
    ops = set()

    def walk(graph):
        for node in graph.node:
            ops.add(node.op_type)
            for a in node.attribute:
                for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    walk(g)

    walk(onnx.load(str(path)).graph)
    return frozenset(ops)


def _has_control_flow(path):
    return bool(_ops(path) & {"If", "Loop", "Scan"})


def has_denormals(export, feeds):
    """A float input holds a denormal: IREE's CPU code reads it as zero in arithmetic too (a
    masked `x[m] += v` or `x[m] *= 2` computes with a zero there; test_handmade.py pins it)."""
    tiny = np.finfo(np.float32).tiny
    return any(v.dtype == np.float32 and ((v != 0) & (np.abs(v) < tiny)).any() for v in feeds.values())


# models/real's exports that fail on a case themselves: with NaN pixels Faster R-CNN's RPN keeps
# no proposal, and the export's box head fails on none (Reshape {0, 20} to {0, -1}). Mixtral's
# trace unrolled its loop over the experts hit for the 4 it saw (a Split into 4 rows): with every
# token an eos, every token picks the same 2 experts and the Split fails. There the static
# model's outputs are not defined (docs/static.md, "a traced loop's Split").
# Longformer's original, with no global token (an attention mask of padding only masks them),
# kills ONNX Runtime 1.31.1 with a SIGFPE, an integer division by zero (DIES: asserted in a
# child process); its static form runs there.
REAL_INVALID = {"real/faster_rcnn_ts17.onnx": ("specials",), "real/mixtral_ts17.onnx": ("all",),
                "real/longformer_ts17.onnx": ("none",)}
DIES = {"real/longformer_ts17.onnx": ("none",)}


def invalid(export, case):
    """The cases the export itself fails on, on ONNX Runtime (its manifest's invalid_cases:
    ts17's `x[m] = v` with more than one true row; REAL_INVALID)."""
    if case in REAL_INVALID.get(export.id, ()):
        return True
    base = "random" if case == "specials" else case
    return export.entry is not None and base in export.entry.get("invalid_cases", [])


def written(export, feeds, shape):
    """Where a masked write can write an output of `shape`: the union of the bool masks whose
    shape is a prefix of it, each spread over the remaining axes (`x[m] = v` with m [n], x [n, 3])."""
    out = np.zeros(shape, dtype=bool)
    for name, (role, _) in roles(export).items():
        m = feeds[name]
        if role == "mask" and m.shape == tuple(shape[: m.ndim]):
            out |= m.reshape(m.shape + (1,) * (len(shape) - m.ndim))
    return out
