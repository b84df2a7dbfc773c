"""Per-call cost of one NonZero node (issue 12), through ONNX Runtime's own profiler.

For each input, one process holds these sessions, all run in turn (interleaved) `--runs` times:
  - NonZero, built-in kernel and with libnonzero_ort.so;
  - Identity on the same input, in a built-in session and in a library session: the profiler's
    time for a trivial node, that is the per-call floor that ORT's executor and profiler add;
each with session.intra_op.allow_spinning on and off. The table gives the median (and interquartile
mean, since the profiler counts whole microseconds) of the node's `kernel_time` events, and the median
wall-clock time of `session.run` for context. The `float32 [0]` row is an empty input: there the
kernel has nothing to do, so its time is the contender's fixed cost per call. The cold rows run
NonZero right after a node that streams 64 MB, as inside a large model, where the node's code and
data are no longer cached.

    .venv-bench/bin/python benches/percall.py [--runs 500] [--threads 2]
writes build/bench/percall.md and build/bench/percall.json.
"""

import argparse

import numpy as np
from onnx import TensorProto, helper

import ortbench

ELEM = {np.int64: TensorProto.INT64, np.bool_: TensorProto.BOOL, np.float32: TensorProto.FLOAT}
# Shapes that real models feed NonZero: TTS token ids and masks, detection score masks (SSD's
# 8732 anchors); then 1, 64 and 64K elements, and an empty input for the fixed cost.
CASES = [  # (label, dtype, shape, density of non-zeros); benches/percall_callgrind.py indexes it too
    ("int64 [1, 13]", np.int64, (1, 13), 0.5),
    ("int64 [1, 403]", np.int64, (1, 403), 0.5),
    ("bool [1, 1, 512]", np.bool_, (1, 1, 512), 0.5),
    ("float32 [3000]", np.float32, (3000,), 0.5),
    ("bool [8732]", np.bool_, (8732,), 0.5),
    ("float32 [1]", np.float32, (1,), 0.5),
    ("float32 [64]", np.float32, (64,), 0.5),
    ("float32 [1024]", np.float32, (1024,), 0.5),
    ("float32 [65536]", np.float32, (65536,), 0.5),
    ("float32 [0]", np.float32, (0,), 0.5),
]


# Cold calls: NonZero right after a node that streams 64 MB, which leaves the NonZero node's code
# and data out of the caches, as a long run of other nodes does inside a model (the Piper voice's
# /dp/flows.*/NonZero_5 nodes). (label, dtype, shape, density)
COLD_CASES = [
    ("bool [1, 1, 110], cold", np.bool_, (1, 1, 110), 0.3),
    ("float32 [1024], cold", np.float32, (1024,), 0.5),
]
COLD_SWEEP = 1 << 24  # float32 elements streamed before the NonZero node (64 MB)


def model(dtype, shape, op="NonZero"):
    x = helper.make_tensor_value_info("x", ELEM[dtype], list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.INT64 if op == "NonZero" else ELEM[dtype], None)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="node")], op.lower(), [x], [y])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def cold_model(dtype, shape):
    """x' = Or/Max(x, Less(ReduceMax(Neg(big)), -inf)) (= x), then NonZero(x'): the data
    dependency makes the 64 MB Neg run right before NonZero."""
    elem = ELEM[dtype]
    x = helper.make_tensor_value_info("x", elem, list(shape))
    big = helper.make_tensor_value_info("big", TensorProto.FLOAT, [COLD_SWEEP])
    y = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    nodes = [helper.make_node("Neg", ["big"], ["negated"]),
             helper.make_node("ReduceMax", ["negated"], ["peak"], keepdims=0),
             helper.make_node("Less", ["peak", "minus_inf"], ["never"])]
    if dtype is np.bool_:
        nodes.append(helper.make_node("Or", ["x", "never"], ["x2"]))
    else:  # x2 = x + 0 * never: a data dependency that leaves x unchanged, -0.0 included
        nodes += [helper.make_node("Cast", ["never"], ["never_f"], to=elem),
                  helper.make_node("Mul", ["never_f", "x"], ["zeros"]),
                  helper.make_node("Add", ["x", "zeros"], ["x2"])]
    nodes.append(helper.make_node("NonZero", ["x2"], ["y"], name="node"))
    graph = helper.make_graph(nodes, "cold", [x, big], [y],
                              initializer=[helper.make_tensor("minus_inf", TensorProto.FLOAT, [], [-np.inf])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m.SerializeToString()


def measure_cold(name, dtype, shape, density, args, rng):
    """NonZero's kernel time right after the 64 MB sweep, built-in vs library, spinning on/off."""
    x = make_input(dtype, shape, density, rng)
    if dtype is not np.bool_:
        x = np.abs(x)  # Add(x, 0 * x) turns -0.0 into +0.0: both zero, but keep the check exact
    big = rng.random(COLD_SWEEP, dtype=np.float32)
    prof = ortbench.profile_dir()
    contenders = {(who, spinning): ortbench.session(cold_model(dtype, shape), args.threads, who == "library",
                                                    spinning, prof)
                  for spinning in (True, False) for who in ("builtin", "library")}
    feeds = {"x": x, "big": big}
    ref = contenders[("builtin", True)].run(None, feeds)[0]
    got = contenders[("library", True)].run(None, feeds)[0]
    assert np.array_equal(ref, got), f"{name}: library and built-in differ"
    runs = max(args.runs // 5, 20)
    ortbench.interleaved({k: (lambda s=s: s.run(None, feeds)) for k, s in contenders.items()}, runs,
                         warmup=args.warmup // 5)
    row = {"case": name, "elements": int(x.size), "nnz": int(np.count_nonzero(x)), "runs": runs,
           "kernel_us": {}, "kernel_us_iqm": {}}
    for (who, spinning), sess in contenders.items():
        durs = [e["dur"] for e in ortbench.kernel_times(ortbench.profile_events(sess), node_name="node")][-runs:]
        label = f"{who} spin={'on' if spinning else 'off'}"
        row["kernel_us"][label] = ortbench.median(durs)
        row["kernel_us_iqm"][label] = ortbench.iqm(durs)
    ortbench.remove_dir(prof)
    return row


def cold_table(rows):
    lines = [f"Cold calls: NonZero right after a node that streams {COLD_SWEEP * 4 >> 20} MB; kernel time in us, "
             "median (interquartile mean)", "",
             "| input | built-in, spinning on | library, on | built-in, spinning off | library, off |",
             "|---|---:|---:|---:|---:|"]
    for r in rows:
        cells = [f"{r['kernel_us'][k]:.0f} ({r['kernel_us_iqm'][k]:.1f})"
                 for k in ("builtin spin=on", "library spin=on", "builtin spin=off", "library spin=off")]
        lines.append(f"| {r['case']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def make_input(dtype, shape, density, rng):
    mask = rng.random(shape) < density
    if dtype is np.bool_:
        return mask
    if dtype is np.int64:
        return np.where(mask, rng.integers(1, 256, shape), 0).astype(np.int64)
    x = np.where(mask, rng.random(shape, dtype=np.float32) + 0.5, np.float32(-0.0)).astype(np.float32)
    return x  # -0.0 for the zeros: the zero test must treat it as zero


def measure(name, dtype, shape, density, args, rng):
    x = make_input(dtype, shape, args.density if args.density is not None else density, rng)
    prof = ortbench.profile_dir()
    contenders = {}  # (op, who, spinning) -> session
    for spinning in (True, False):
        for op in ("NonZero", "Identity"):
            for who in ("builtin", "library"):
                contenders[(op, who, spinning)] = ortbench.session(
                    model(dtype, shape, op), args.threads, who == "library", spinning, prof)
    ref = contenders[("NonZero", "builtin", True)].run(None, {"x": x})[0]
    got = contenders[("NonZero", "library", True)].run(None, {"x": x})[0]
    if x.size:
        assert np.array_equal(ref, got), f"{name}: library and built-in differ"
    runners = {k: (lambda s=s: s.run(None, {"x": x})) for k, s in contenders.items()}
    wall = ortbench.interleaved(runners, args.runs, warmup=args.warmup)
    row = {"case": name, "dtype": np.dtype(dtype).name, "shape": list(shape), "elements": int(x.size),
           "nnz": int(np.count_nonzero(x)), "kernel_us": {}, "kernel_us_iqm": {}, "run_us": {}}
    for key, sess in contenders.items():
        events = ortbench.kernel_times(ortbench.profile_events(sess), node_name="node")
        durs = [e["dur"] for e in events][-args.runs:]  # the timed runs, not the check or warm-up
        assert len(events) >= args.runs + args.warmup, f"{name} {key}: {len(events)} profiler events"
        label = f"{key[0]} {key[1]} spin={'on' if key[2] else 'off'}"
        row["kernel_us"][label] = ortbench.median(durs)
        row["kernel_us_iqm"][label] = ortbench.iqm(durs)
        row["run_us"][label] = ortbench.median(wall[key]) * 1e6
    ortbench.remove_dir(prof)
    return row


def table(rows, spin):
    def k(op, who):
        return f"{op} {who} spin={spin}"

    def cell(r, op, who):
        return f"{r['kernel_us'][k(op, who)]:.0f} ({r['kernel_us_iqm'][k(op, who)]:.1f})"

    lines = [
        f"allow_spinning {spin}: kernel time in us, median (interquartile mean) of the profiler's per-node kernel_time",
        "",
        "| input | built-in | library | library / built-in | Identity, built-in session | Identity, library session "
        "| run() built-in us | run() library us |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        b, lib = r["kernel_us_iqm"][k("NonZero", "builtin")], r["kernel_us_iqm"][k("NonZero", "library")]
        lines.append(
            f"| {r['case']} | {cell(r, 'NonZero', 'builtin')} | {cell(r, 'NonZero', 'library')} | "
            f"{lib / b if b else float('nan'):.2f} | {cell(r, 'Identity', 'builtin')} | {cell(r, 'Identity', 'library')} | "
            f"{r['run_us'][k('NonZero', 'builtin')]:.1f} | {r['run_us'][k('NonZero', 'library')]:.1f} |")
    return "\n".join(lines) + "\n"


def targets(rows):
    """Issue 12's targets, judged on the medians with spinning on and off."""
    out = ["| target (issue 12) | figure | verdict |", "|---|---|---|"]
    for spin in ("on", "off"):
        k = lambda op, who: f"{op} {who} spin={spin}"  # noqa: E731
        slower = [f"{r['case']} ({r['kernel_us'][k('NonZero', 'library')]:.0f} vs {r['kernel_us'][k('NonZero', 'builtin')]:.0f} us)"
                  for r in rows if r["kernel_us"][k("NonZero", "library")] > r["kernel_us"][k("NonZero", "builtin")]]
        out.append(f"| spinning {spin}: library kernel time at or below the built-in's at every size | "
                   f"{'slower: ' + ', '.join(slower) if slower else f'all {len(rows)} inputs'} | "
                   f"{'not met' if slower else 'met'} |")
        empty = next((r for r in rows if r["elements"] == 0), None)
        if empty is not None:
            fixed = empty["kernel_us"][k("NonZero", "library")]
            out.append(f"| spinning {spin}: at most 3 us fixed cost per call (library, empty input; the profiler's "
                       f"floor, Identity, is {empty['kernel_us'][k('Identity', 'library')]:.0f} us) | {fixed:.0f} us | "
                       f"{'met' if fixed <= 3 else 'not met'} |")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=500)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--density", type=float, help="share of non-zero elements (default: each case's, 50%%)")
    ap.add_argument("--out", default=ortbench.BUILD)
    args = ap.parse_args()
    rng = np.random.default_rng(12)
    rows = [measure(name, dtype, shape, density, args, rng) for name, dtype, shape, density in CASES]
    cold = [measure_cold(name, dtype, shape, density, args, rng) for name, dtype, shape, density in COLD_CASES]
    md = (ortbench.header(f"intra_op_num_threads={args.threads}, {args.runs} interleaved runs per session, "
                          f"non-zeros: {'each case its own (50%)' if args.density is None else f'{args.density:.0%}'}, library {ortbench.LIB}") + "\n\n"
          + table(rows, "on") + "\n" + table(rows, "off") + "\n" + targets(rows) + "\n" + cold_table(cold))
    ortbench.write_outputs("percall", md, {"threads": args.threads, "runs": args.runs, "density": args.density,
                                           "onnxruntime": ortbench.ort.__version__, "rows": rows, "cold": cold},
                           args.out)


if __name__ == "__main__":
    main()
