"""The guarded forms of `nonzero optimize` (issue 25, item 1 f) against what they replace, on
the tf2onnx and paddle2onnx exports of 2-D masks whose dims are named apart, at 1% and 50%
density, in
one process, interleaved, medians:
  - builtin:  the export as written, ONNX Runtime's built-in kernels;
  - library:  the export as written, with libnonzero_ort.so (its NonZero);
  - before:   what the default mode wrote before the guard (ArgWhere, then the original gather:
              the guarded If's else branch, put in the If's place), with the library;
  - guarded:  `nonzero optimize` now: If(sizes agree, BooleanMask, else the original), with
              the library.
Every contender's outputs are checked against the builtin's first. Ratios: time / guarded's
(above 1: the guarded form is faster).

    .venv/bin/python benches/guarded_forms.py [--rows 1048576] [--repeats 15]
writes build/bench/guarded_forms.{md,json}."""

import argparse
import os
import tempfile

import numpy as np
import onnx

import ortbench

ROOT = ortbench.ROOT
# (title, export, input shapes as functions of the row count)
PATTERNS = [
    ("tf.gather_nd(x, tf.where(c))", "models/real/tf2onnx/where_gather_nd_tf2onnx.onnx",
     lambda n: {"x": (n // 4, 4, 3), "c": (n // 4, 4)}),
    ("paddle x[m], 2-D m", "models/real/paddle2onnx/x_mask_2d_paddle2onnx.onnx",
     lambda n: {"x": (n // 4, 4, 3), "m": (n // 4, 4)}),
]
DENSITIES = (0.01, 0.5)


def unguarded(model):
    """The model with each guarded If replaced by its else branch (the earlier default output)."""
    graph = model.graph
    for i, node in enumerate(list(graph.node)):
        if node.op_type != "If" or ".nonzero_guard." not in node.input[0]:
            continue
        (else_branch,) = [a.g for a in node.attribute if a.name == "else_branch"]
        nodes = list(else_branch.node)
        renamed = {else_branch.output[0].name: node.output[0]}
        for n in nodes:
            n.output[:] = [renamed.get(o, o) for o in n.output]
        at = list(graph.node).index(node)
        graph.node.remove(node)
        for k, n in enumerate(nodes):
            graph.node.insert(at + k, n)
    return model


def feeds_for(sess, shapes, density, rng):
    out = {}
    for i in sess.get_inputs():
        shape = shapes[i.name]
        out[i.name] = rng.random(shape) < density if i.type == "tensor(bool)" else rng.standard_normal(shape).astype(np.float32)
    return out


def run_pattern(title, export, shapes_of, density, spinning, args, work):
    src = os.path.join(ROOT, export)
    base = os.path.join(work, os.path.basename(export).replace(".onnx", ""))
    guarded, before = base + "_guarded.onnx", base + "_before.onnx"
    ortbench.optimize(src, guarded)
    onnx.save(unguarded(onnx.load(guarded)), before)
    sessions = {
        "builtin": ortbench.session(src, args.threads, False, spinning),
        "library": ortbench.session(src, args.threads, True, spinning),
        "before": ortbench.session(before, args.threads, True, spinning),
        "guarded": ortbench.session(guarded, args.threads, True, spinning),
    }
    feeds = feeds_for(sessions["builtin"], shapes_of(args.rows), density, np.random.default_rng(0))
    want = sessions["builtin"].run(None, feeds)
    for key, sess in sessions.items():
        for g, w in zip(sess.run(None, feeds), want):
            assert g.shape == w.shape and np.array_equal(g, w), (title, key)
    times = ortbench.interleaved({k: (lambda s=s: s.run(None, feeds)) for k, s in sessions.items()}, args.repeats)
    return {k: ortbench.median(v) * 1e3 for k, v in times.items()}


def table(rows):
    keys = ("builtin", "library", "before", "guarded")
    lines = ["| pattern | density | spinning | " + " | ".join(f"{k} ms" for k in keys)
             + " | builtin / guarded | before / guarded |", "|---" * (len(keys) + 5) + "|"]
    for r in rows:
        ms = r["ms"]
        lines.append(f"| {r['pattern']} | {r['density']:.0%} | {'on' if r['spinning'] else 'off'} | "
                     + " | ".join(f"{ms[k]:.2f}" for k in keys)
                     + f" | {ms['builtin'] / ms['guarded']:.2f}x | {ms['before'] / ms['guarded']:.2f}x |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1 << 20)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="nz-guarded-bench-") as work:
        for spinning in (True, False):
            for title, export, shapes_of in PATTERNS:
                for density in DENSITIES:
                    ms = run_pattern(title, export, shapes_of, density, spinning, args, work)
                    rows.append({"pattern": title, "density": density, "spinning": spinning, "ms": ms})
                    print(rows[-1], flush=True)
    md = f"{ortbench.header(f'{args.rows} rows, {args.threads} threads, {args.repeats} interleaved repeats')}\n\n{table(rows)}"
    ortbench.write_outputs("guarded_forms", md, rows)
    print(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
