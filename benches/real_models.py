"""Whole-model times for issue 19's real exports (models/real: torchvision detectors and
transformers models): each model run by ONNX Runtime with its built-in NonZero, with
libnonzero_ort.so, and rewritten by `nonzero optimize` with the library; one process, the
three interleaved, medians; with session.intra_op.allow_spinning on and off.

The share of run time that NonZero chains take comes from ONNX Runtime's profiler (per-node
kernel times, separate profiled sessions so that the timed runs carry no profiling cost):
- built-in and library: the kernel time of the nodes that make up the chains, i.e. the nodes
  that `nonzero optimize` replaces once ONNX's shape inference has run (every chain, today),
  over the kernel time of all nodes;
- rewritten: the library's ArgWhere/BooleanMask, plus any NonZero and chain node left.
The rewritten model is the tool's output on the file as exported (no ONNX inference first),
so it gains only what the tool rewrites by itself; the table says how many NonZero it left.
Every contender's outputs are compared bit for bit with the built-in's first.

    .venv/bin/python benches/real_models.py [--runs 20] [--threads 2] [--models ssdlite320 vits]
writes build/bench/real_models.md and .json. Take figures on a quiet machine.
"""

import argparse
import os
import sys
import tempfile

import onnx

import ortbench

sys.path.insert(0, os.path.join(ortbench.ROOT, "tests", "python"))
import real_exports as rx  # noqa: E402  (the models' manifest and inputs, shared with the tests)

CONTENDERS = ("builtin", "library", "rewritten")


def chain_nodes(original, tmp):
    """Names of the nodes `nonzero optimize` replaces after ONNX's shape inference: NonZero and
    the Transpose/GatherND/Split/Squeeze/Gather... of its chains."""
    inferred = onnx.shape_inference.infer_shapes(original, data_prop=True)
    proc, out = rx.optimize(inferred, os.path.join(tmp, "inferred"))
    if out is None:
        raise RuntimeError(f"nonzero optimize failed after ONNX's inference: {proc.stderr.strip()}")
    kept = {n.name for n in rx.nodes(out)}
    return {n.name for n in rx.nodes(original) if n.op_type != "Constant" and n.name not in kept}


def chain_share(events, names, op_types=()):
    """Median over runs of (kernel time of the chain nodes) / (kernel time of all nodes)."""
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") == "Session" and e["name"] == "model_run")
    shares = []
    for start, end in runs:
        total = chain = 0
        for e in ortbench.kernel_times(events):
            if start <= e["ts"] <= end:
                total += e["dur"]
                node = e["name"][: -len("_kernel_time")]
                if node in names or e["args"].get("op_name") in op_types:
                    chain += e["dur"]
        shares.append(chain / total if total else float("nan"))
    return ortbench.median(shares)


def same(want, got):
    return len(want) == len(got) and all(
        a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes() for a, b in zip(want, got))


def bench_model(entry, args, tmp):
    path = str(rx.REAL / entry["file"])
    original = onnx.load(path)
    feeds = rx.inputs(original, args.size)
    rewritten_path = os.path.join(tmp, "rewritten_" + entry["file"])
    ortbench.optimize(path, rewritten_path)
    left = rx.op_counts(onnx.load(rewritten_path))["NonZero"]
    names = chain_nodes(original, tmp)
    models = {"builtin": (path, False), "library": (path, True), "rewritten": (rewritten_path, True)}
    result = {"file": entry["file"], "model": entry["model"], "nonzero": entry["nonzero"], "nonzero_left": left,
              "chain_nodes": len(names), "feeds": {k: list(v.shape) for k, v in feeds.items()}}
    want = ortbench.session(path, args.threads).run(None, feeds)
    for who, (model, library) in models.items():
        if not same(want, ortbench.session(model, args.threads, library).run(None, feeds)):
            raise SystemExit(f"{entry['file']}: {who}'s outputs differ from the built-in's")
    for spinning in (True, False):
        sessions = {who: ortbench.session(m, args.threads, lib, spinning=spinning) for who, (m, lib) in models.items()}
        times = ortbench.interleaved({who: (lambda s=s: s.run(None, feeds)) for who, s in sessions.items()},
                                     args.runs, args.warmup)
        row = {who: ortbench.median(t) * 1e3 for who, t in times.items()}
        prof = ortbench.profile_dir()
        for who, (model, library) in models.items():
            sess = ortbench.session(model, args.threads, library, spinning=spinning, profile_dir=prof)
            for _ in range(args.warmup + args.profiled_runs):
                sess.run(None, feeds)
            events = ortbench.profile_events(sess)
            extra = ("ArgWhere", "BooleanMask") if who == "rewritten" else ()
            row[who + "_chain_share"] = chain_share(events, names, extra)
        ortbench.remove_dir(prof)
        result["spinning" if spinning else "no_spinning"] = row
    return result


def table(results):
    md = ["| model | spinning | built-in ms | library ms | rewritten ms | NonZero (left after rewrite) "
          "| chains' share: built-in | library | rewritten |", "|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for r in results:
        for key, label in (("spinning", "on"), ("no_spinning", "off")):
            t = r[key]
            b = t["builtin"]
            md.append(f"| {r['file']} | {label} | {b:.2f} | {t['library']:.2f} ({t['library'] / b:.2f}x) | "
                      f"{t['rewritten']:.2f} ({t['rewritten'] / b:.2f}x) | {r['nonzero']} ({r['nonzero_left']}) | "
                      f"{t['builtin_chain_share']:.1%} | {t['library_chain_share']:.1%} | {t['rewritten_chain_share']:.1%} |")
    return md


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20, help="timed runs per contender and spinning mode")
    ap.add_argument("--profiled-runs", type=int, default=5, help="runs of the profiled sessions (chain shares)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--size", type=int, default=0, choices=(0, 1), help="input size: index into the tests' SIZES")
    ap.add_argument("--models", nargs="*", help="manifest names (default: every export)")
    ap.add_argument("--out", default=ortbench.BUILD)
    args = ap.parse_args()
    entries = [e for e in rx.EXPORTS if not args.models or e["name"] in args.models]
    if not entries:
        raise SystemExit(f"no export named {args.models}; manifest: {sorted({e['name'] for e in rx.EXPORTS})}")
    with tempfile.TemporaryDirectory() as tmp:
        results = [bench_model(e, args, tmp) for e in entries]
    md = [ortbench.header(f"intra_op_num_threads={args.threads}, {args.runs} interleaved runs after {args.warmup} "
                          f"warm-up, size {args.size}, library {ortbench.LIB}"), "",
          "Every contender's outputs equal the built-in's bit for bit. Times are medians of whole "
          "`session.run` calls; shares are from separate profiled sessions.", "", *table(results)]
    ortbench.write_outputs("real_models", "\n".join(md) + "\n", {"runs": args.runs, "threads": args.threads,
                                                                "results": results}, args.out)


if __name__ == "__main__":
    main()
