"""Masked writes (issue 25, item g): the default mode's MaskedFill / MaskedScatter against what it
wrote before (`ArgWhere -> ScatterND`, the read `x[m]` as BooleanMask) and against the export on
ONNX Runtime's built-in kernels, per pattern, at 1% and 50% density, spinning on and off, in one
process, interleaved, medians. Contenders:
  - builtin:   the export as written, built-in kernels;
  - library:   the export as written, with libnonzero_ort.so (its NonZero kernel);
  - argwhere:  the earlier default output: `nonzero optimize` with the ScatterND hidden from it,
               so that its coordinates stay `ArgWhere -> ScatterND`;
  - rewritten: `nonzero optimize` now (MaskedFill / MaskedScatter), with the library;
  - static:    `nonzero optimize --static` (the Where forms), built-in kernels.
Every contender's outputs are checked against the builtin's first, exactly.

    .venv-bench/bin/python benches/masked_writes.py [--size 2048] [--repeats 15]
writes build/bench/masked_writes.{md,json}."""

import argparse
import os
import subprocess
import tempfile

import numpy as np
import onnx

import ortbench

ROOT = ortbench.ROOT
# (title, export, input shapes as functions of the size)
PATTERNS = [
    ("y[m] = v", "models/real/torch_patterns/mask_assign_dynamo18.onnx",
     lambda s: {"x": (s * s // 4, 3), "m": (s * s // 4,), "v": (3,)}),
    ("x[m] = x[m] * 2", "models/exported/index_put_ts17.onnx", lambda s: {"input_0": (s, s), "input_1": (s, s)}),
    ("y[m] += v", "models/real/torch_patterns/mask_add_ts17.onnx",
     lambda s: {"x": (s * s // 4, 3), "m": (s * s // 4,), "v": (3,)}),
    ("x.masked_scatter(m, s)", "models/real/torch_patterns/masked_scatter_ts17.onnx",
     lambda s: {"x": (s, s), "m": (s, s), "s": (s, s)}),
]
DENSITIES = (0.01, 0.5)
HIDDEN = "bench.hidden"


def cli(*args):
    done = subprocess.run([ortbench.CLI, "optimize", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nonzero optimize {' '.join(args)}: {done.stderr.strip()}")


def earlier_default(src, dst, work, hidden_op="ScatterND"):
    """What `nonzero optimize` wrote before a new library op: each `hidden_op` node moved to a
    domain the rewriter does not know while it runs, then moved back (its NonZero -> Transpose
    becomes ArgWhere)."""
    model = onnx.load(src)
    for n in model.graph.node:
        if n.op_type == hidden_op:
            n.domain = HIDDEN
    model.opset_import.append(onnx.helper.make_opsetid(HIDDEN, 1))
    hidden = os.path.join(work, "hidden.onnx")
    onnx.save(model, hidden)
    cli(hidden, dst)
    model = onnx.load(dst)
    for n in model.graph.node:
        if n.domain == HIDDEN:
            n.domain = ""
    del model.opset_import[:]
    model.opset_import.extend(onnx.load(src).opset_import)
    model.opset_import.append(onnx.helper.make_opsetid("nonzero", 1))
    onnx.save(model, dst)


def run_pattern(title, export, shapes_of, density, spinning, args, work):
    rng = np.random.default_rng(0)
    src = os.path.join(ROOT, export)
    shapes = shapes_of(args.size)
    base = os.path.join(work, os.path.basename(export).replace(".onnx", ""))
    rewritten, before, static = base + "_rewritten.onnx", base + "_argwhere.onnx", base + "_static.onnx"
    cli(src, rewritten)
    earlier_default(src, before, work)
    shape_args = [a for n, d in shapes.items() for a in ("--input-shape", f"{n}={','.join(map(str, d))}")]
    cli("--static", *shape_args, src, static)
    sessions = {
        "builtin": ortbench.session(src, args.threads, False, spinning),
        "library": ortbench.session(src, args.threads, True, spinning),
        "argwhere": ortbench.session(before, args.threads, True, spinning),
        "rewritten": ortbench.session(rewritten, args.threads, True, spinning),
        "static": ortbench.session(static, args.threads, False, spinning),
    }
    ops = {n.op_type for n in onnx.load(rewritten).graph.node if n.domain == "nonzero"}
    assert ops & {"MaskedFill", "MaskedScatter"}, (title, ops)
    return checked_medians(title, sessions, shapes, density, rng, args.repeats), sorted(ops)


def checked_medians(title, sessions, shapes, density, rng, repeats):
    """Median ms per contender, interleaved, after every contender's outputs were checked equal to
    the builtin's, exactly. Masks true at `density`, other inputs standard normal float32."""
    feeds = {}
    for i in sessions["builtin"].get_inputs():
        shape = shapes[i.name]
        feeds[i.name] = (rng.random(shape) < density) if i.type == "tensor(bool)" else rng.standard_normal(shape).astype(np.float32)
    want = sessions["builtin"].run(None, feeds)
    runners = {}
    for key, sess in sessions.items():
        for g, w in zip(sess.run(None, feeds), want):
            assert g.dtype == w.dtype and g.shape == w.shape and np.array_equal(g, w, equal_nan=True), (title, key)
        runners[key] = (lambda s=sess: s.run(None, feeds))
    times = ortbench.interleaved(runners, repeats)
    return {k: ortbench.median(v) * 1e3 for k, v in times.items()}


def table(rows):
    keys = ["builtin", "library", "argwhere", "rewritten", "static"]
    lines = ["| pattern | becomes | density | spinning | " + " | ".join(f"{k} ms" for k in keys)
             + " | builtin / rewritten | argwhere / rewritten | static / rewritten |",
             "|---" * (len(keys) + 7) + "|"]
    for r in rows:
        ms = r["ms"]
        lines.append(f"| {r['pattern']} | {', '.join(r['ops'])} | {r['density']:.0%} | {'on' if r['spinning'] else 'off'} | "
                     + " | ".join(f"{ms[k]:.2f}" for k in keys)
                     + f" | {ms['builtin'] / ms['rewritten']:.2f}x | {ms['argwhere'] / ms['rewritten']:.2f}x"
                     + f" | {ms['static'] / ms['rewritten']:.2f}x |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for spinning in (False, True):
            for title, export, shapes_of in PATTERNS:
                for density in DENSITIES:
                    ms, ops = run_pattern(title, export, shapes_of, density, spinning, args, work)
                    rows.append({"pattern": title, "ops": ops, "density": density, "spinning": spinning, "ms": ms})
                    print(rows[-1], flush=True)
    md = (ortbench.header(f"{args.size}^2 elements, {args.threads} threads, median of {args.repeats}") + "\n\n"
          + table(rows))
    ortbench.write_outputs("masked_writes", md, {"rows": rows, "size": args.size})


if __name__ == "__main__":
    main()
