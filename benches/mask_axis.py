"""BooleanMaskAxis (issue 25, item e and the 1-D gathers of item f): the default mode's
BooleanMaskAxis against what it wrote before (`ArgWhere`, the gather kept) and the export on ONNX
Runtime's built-in kernels, on the committed tf2onnx and paddle2onnx exports, at 1% and 50%
density, spinning on and off, in one process, interleaved, medians. Contenders:
  - builtin:   the export as written, built-in kernels;
  - library:   the export as written, with libnonzero_ort.so (its NonZero kernel);
  - argwhere:  the earlier default output: `ArgWhere`, then the exporter's own gather;
  - rewritten: `nonzero optimize` now (BooleanMaskAxis), with the library.
Every contender's outputs are checked against the builtin's first, exactly.

    .venv-bench/bin/python benches/mask_axis.py [--size 2048] [--repeats 15]
writes build/bench/mask_axis.{md,json}."""

import argparse
import os
import tempfile

import numpy as np
import onnx

import ortbench
from masked_writes import checked_medians, cli, earlier_default

ROOT = ortbench.ROOT
# (title, export, the gather op the rewrite replaces, input shapes as functions of the size)
PATTERNS = [
    ("tf.boolean_mask(x, m)", "models/real/tf2onnx/boolean_mask_tf2onnx.onnx", "Gather",
     lambda s: {"x": (s * s // 4, 3), "m": (s * s // 4,)}),
    ("tf.boolean_mask(x, m, axis=1)", "models/real/tf2onnx/boolean_mask_axis1_tf2onnx.onnx", "Gather",
     lambda s: {"x": (s // 4, s * 4 // 3, 3), "m": (s * 4 // 3,)}),
    ("paddle x[m] (1-D m)", "models/real/paddle2onnx/x_mask_paddle2onnx.onnx", "GatherND",
     lambda s: {"x": (s * s // 4, 3), "m": (s * s // 4,)}),
]
DENSITIES = (0.01, 0.5)


def run_pattern(title, export, gather, shapes_of, density, spinning, args, work):
    rng = np.random.default_rng(0)
    src = os.path.join(ROOT, export)
    shapes = shapes_of(args.size)
    base = os.path.join(work, os.path.basename(export).replace(".onnx", ""))
    rewritten, before = base + "_rewritten.onnx", base + "_argwhere.onnx"
    cli(src, rewritten)
    earlier_default(src, before, work, hidden_op=gather)
    ops = sorted({n.op_type for n in onnx.load(rewritten).graph.node if n.domain == "nonzero"})
    assert "BooleanMaskAxis" in ops, (title, ops)
    sessions = {
        "builtin": ortbench.session(src, args.threads, False, spinning),
        "library": ortbench.session(src, args.threads, True, spinning),
        "argwhere": ortbench.session(before, args.threads, True, spinning),
        "rewritten": ortbench.session(rewritten, args.threads, True, spinning),
    }
    return checked_medians(title, sessions, shapes, density, rng, args.repeats)


def table(rows):
    keys = ["builtin", "library", "argwhere", "rewritten"]
    lines = ["| pattern | density | spinning | " + " | ".join(f"{k} ms" for k in keys)
             + " | builtin / rewritten | argwhere / rewritten |", "|---" * (len(keys) + 5) + "|"]
    for r in rows:
        ms = r["ms"]
        lines.append(f"| {r['pattern']} | {r['density']:.0%} | {'on' if r['spinning'] else 'off'} | "
                     + " | ".join(f"{ms[k]:.2f}" for k in keys)
                     + f" | {ms['builtin'] / ms['rewritten']:.2f}x | {ms['argwhere'] / ms['rewritten']:.2f}x |")
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
            for title, export, gather, shapes_of in PATTERNS:
                for density in DENSITIES:
                    ms = run_pattern(title, export, gather, shapes_of, density, spinning, args, work)
                    rows.append({"pattern": title, "density": density, "spinning": spinning, "ms": ms})
                    print(rows[-1], flush=True)
    md = (ortbench.header(f"about {args.size}^2 elements, {args.threads} threads, median of {args.repeats}") + "\n\n"
          + table(rows))
    ortbench.write_outputs("mask_axis", md, {"rows": rows, "size": args.size})


if __name__ == "__main__":
    main()
