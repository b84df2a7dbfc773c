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
This file runs and times; the models are in patterns_models.py, the tables, targets and plot in
patterns_report.py, the real exports and the rewriter timing in patterns_exported.py.
"""

import argparse
import os
import shutil

import numpy as np
import onnx

import ortbench
from patterns_exported import exported_rows, same, time_rewriter
from patterns_models import LARGE, PATTERNS, SMALL
from patterns_report import plot, size_name, tables, targets


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
