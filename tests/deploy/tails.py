"""A detector cut where its network ends (issue 38): the tail is everything that reads the
NonZero region, fed from the heads' outputs (the score masks, the scores, the box regressions).

A whole detector on QNN HTP computes its backbone and heads in fp16, so other boxes survive NMS
than on ONNX Runtime CPU, and the original cannot run on HTP to serve as the reference
(expected.HTP_DETECTORS). The tail is what `--static` made: cut off, it can be judged alone, fed
inputs whose arithmetic fp16 keeps: masks of every case, scores distinct fp16 values where a
list the model keeps reaches (no tie for an NMS pick or a TopK to break), box regressions
multiples of 1/64 below 1.

- `frontier(original)`: the tensors the original's NonZero region reads from the rest;
- `static_tail(static, names, out)`: the static form's nodes from `names` to its outputs;
- `original_tail(original, names, out)`: the original's, `names` made inputs; those that
  `--static` folded (shape arithmetic, the same on every input) are fed from a CPU run of the
  original (`shape_feeds`).

Imports no pytest, no ONNX Runtime."""

import re
import zlib

import numpy as np
import onnx
from onnx.utils import Extractor


def frontier(original):
    """[tensor name] that the nodes downstream of a NonZero (the NonZeros included) read from
    nodes that are not, in graph order. Initializers and Constants are left out."""
    graph = original.graph
    constant = {i.name for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    downstream, names = set(), []
    for node in graph.node:
        reads = _reads(node)
        if node.op_type != "NonZero" and not reads & downstream:
            continue
        downstream.update(node.output)
        for name in (i for i in node.input if i) if node.input else ():
            if (name not in downstream and name not in constant and name in producer
                    and producer[name].op_type != "Constant" and name not in names):
                names.append(name)
    return names


def _reads(node):
    """Every tensor a node reads, its subgraphs' outer-scope reads included."""
    names = {i for i in node.input if i}
    for attribute in node.attribute:
        for graph in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
            inner = {o for n in graph.node for o in n.output} | {i.name for i in graph.input}
            inner |= {i.name for i in graph.initializer}
            for n in graph.node:
                names |= _reads(n) - inner
    return names


def static_tail(static, names, out):
    """The static form's nodes from the `names` it still computes to its outputs, saved to
    `out`, each input renamed to letters, digits and `_` (onnx2tf's tf_converter writes a model
    whose input name holds a `/` with no signature, which LiteRT cannot run). Returns
    {name: the tail's input name} for the names it reads (the rest were folded into
    initializers)."""
    model = onnx.shape_inference.infer_shapes(static, data_prop=True)
    computed = {o for n in model.graph.node for o in n.output}
    cut = [n for n in names if n in computed]
    tail = Extractor(model).extract_model(cut, [o.name for o in model.graph.output])
    assert [i.name for i in tail.graph.input] == cut, "the static tail reads more than the cut"
    taken = {o for n in tail.graph.node for o in n.output} | {i.name for i in tail.graph.initializer}
    renamed = {}
    for i, graph_input in enumerate(tail.graph.input):
        plain = f"tail{i}_" + re.sub(r"\W+", "_", graph_input.name).strip("_")
        assert plain not in taken, plain
        renamed[graph_input.name], graph_input.name = plain, plain
    for node in tail.graph.node:
        node.input[:] = [renamed.get(i, i) for i in node.input]
    onnx.save(tail, str(out))
    return renamed


def original_tail(original, names, out):
    """The original with each of `names` made a graph input (its producer gone) and every node
    no output needs removed, saved to `out`."""
    typed = onnx.shape_inference.infer_shapes(original)
    types = {v.name: v for v in list(typed.graph.value_info) + list(typed.graph.output)}
    model = onnx.ModelProto()
    model.CopyFrom(original)
    graph = model.graph
    needed = {o.name for o in graph.output}
    keep = []
    for node in reversed(graph.node):
        if any(o in needed for o in node.output) and not set(node.output) & set(names):
            keep.append(node)
            needed |= _reads(node)
    del graph.node[:]
    graph.node.extend(reversed(keep))
    inputs = [types[n] for n in names if n in needed]
    del graph.input[:]
    graph.input.extend(inputs)
    used = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(used)
    onnx.save(model, str(out))
    return [i.name for i in inputs]


def with_outputs(original, names):
    """A copy of the original that also outputs `names` (typed by shape inference)."""
    typed = onnx.shape_inference.infer_shapes(original)
    types = {v.name: v for v in typed.graph.value_info}
    model = onnx.ModelProto()
    model.CopyFrom(original)
    model.graph.output.extend(types[n] for n in names)
    return model


def inputs(path):
    """[(name, numpy dtype, shape)] of the graph inputs of the model at `path`."""
    graph = onnx.load(str(path), load_external_data=False).graph
    return [(i.name, onnx.helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type),
             [d.dim_value for d in i.type.tensor_type.shape.dim]) for i in graph.input]


# Distinct fp16 values in [1/16, 16): the scores' top ranks.
DISTINCT = 1 << 13


def fp16_scores(selected, rng):
    """Scores for the elements of `selected` (bool, one per score over every score tensor): the
    selected ones rank above the others (as `score > threshold` selects), in random order
    within each group, and the top DISTINCT ranks are distinct fp16 values. Past DISTINCT
    elements (SSDlite's 90 classes of 3,234 anchors) the rest share the lowest value: no list
    the model keeps (its TopK candidates, NMS's picks, the detections) reaches that far down."""
    order = np.lexsort((rng.random(selected.size), selected))  # unselected first, then selected
    rank = np.empty(selected.size, np.int64)
    rank[order] = np.arange(selected.size)
    pool = np.arange(DISTINCT, dtype=np.uint16) + np.uint16(0x2C00)  # fp16 1/16 and up
    return pool[np.maximum(rank - (selected.size - DISTINCT), 0)].view(np.float16).astype(np.float32)


def data_feeds(inputs, case, seed):
    """Synthetic feeds for a tail's data inputs (a list of (name, numpy dtype, shape)): bool masks
    of `case` (random: half, none, all, one); float scores (1-D), each tensor paired with the
    mask of its size just before it, from fp16_scores; float box regressions (rank 2) multiples
    of 1/64 in [0, 1)."""
    rng = np.random.default_rng([zlib.crc32(seed.encode()), ("random", "none", "all", "one").index(case)])
    feeds, selected, last_mask = {}, [], {}
    for name, dtype, shape in inputs:
        size = int(np.prod(shape))
        if dtype == np.bool_:
            value = {"random": rng.random(size) < 0.5, "none": np.zeros(size, bool), "all": np.ones(size, bool),
                     "one": np.arange(size) == rng.integers(size)}[case]
            last_mask[size] = value
        elif len(shape) == 1:
            value = None
            selected.append((name, last_mask.get(size, np.zeros(size, bool))))
        else:
            value = (rng.integers(0, 64, size) / 64).astype(np.float32)
        if value is not None:
            feeds[name] = value.reshape(shape).astype(dtype)
    if selected:
        scores = fp16_scores(np.concatenate([m for _, m in selected]), rng)
        offset = 0
        for name, mask in selected:
            feeds[name], offset = scores[offset:offset + mask.size], offset + mask.size
    return {name: feeds[name] for name, _, _ in inputs}
