"""`nonzero optimize --static` on the real exports (issue 37, item 7), two tables:

1. The rewriter's own time: `nonzero optimize --static` (the CLI, a process per run, median of
   REPEATS) against `onnx.load` + `onnx.save` of the same model in this process (the floor any
   tool that reads and writes the model pays), per export of models/real at its manifest's
   shapes (tests/static/exports.py), whether or not it becomes fully static.
2. The static model against the dynamic original on ONNX Runtime CPU, 2 threads, in one
   process, interleaved, medians, with session.intra_op.allow_spinning on and off, for each real
   export that becomes fully static (the MoE routers among models/real/torch_patterns: an
   exact MoE gives every expert the capacity's rows, `experts / top_k` times the original's
   expert work). The static outputs are checked against the original's first (cut to counts;
   MatMul rows up to 1e-5 relative).

    .venv/bin/python benches/static_real.py [--repeats 15] [--write-docs]

writes build/bench/static_real.{md,json,png}; --write-docs replaces the "Real exports" section of
docs/performance-static.md (between its markers) and draws docs/performance-static-real.png;
--plot-only JSON draws the plot of an earlier run."""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

import ortbench

ROOT = ortbench.ROOT
sys.path.insert(0, os.path.join(ROOT, "tests", "static"))
import exports  # noqa: E402  (tests/static: the exports and their fixed shapes)
import cases  # noqa: E402

DOC = os.path.join(ROOT, "docs", "performance-static.md")
BEGIN, END = "<!-- static_real.py: begin -->", "<!-- static_real.py: end -->"
# Fully static MoE exports: (experts, top_k) for the expert-work factor.
MOE = {"torch_patterns/moe_router_ts17.onnx": (4, 2), "torch_patterns/moe_router_dynamo18.onnx": (4, 2),
       "real/mixtral_ts17.onnx": (4, 2)}
# The other fully static real exports timed: Faster R-CNN (two fixed-shape NMS), RetinaNet and
# FCOS (TopK per level, the levels rejoined, a fixed-shape NMS), SSDlite (the same per class, 91
# of them), BART, the mask-then-NMS patterns (a fixed-shape NMS over 6 boxes), and Keypoint and
# Mask R-CNN, static up to their per-detection Loop (a counted loop, which stays dynamic).
TIMED = {"real/faster_rcnn_ts17.onnx", "real/retinanet_ts17.onnx", "real/fcos_ts17.onnx",
         "real/ssdlite320_ts17.onnx", "real/bart_ts17.onnx", "real/bart_dynamo18.onnx",
         "torch_patterns/mask_nms_ts17.onnx", "torch_patterns/mask_nms_dynamo18.onnx",
         "real/keypoint_rcnn_ts17.onnx", "real/mask_rcnn_ts17.onnx",
         # models/real/families: LLaVA (its image features written by a Where), SuperPoint (its
         # keypoints off the border, a second selection, padded to every pixel).
         "families/llava_ts17.onnx", "families/superpoint_dynamo18.onnx",
         # VITS: its frames run to the capacity tests/static/exports.py gives its waveform.
         "real/vits_ts17.onnx",
         # Longformer: its global slots run to the sequence length (16 where the manifest's case
         # has 1 global token per row), its two selections of one count compacted together.
         "real/longformer_ts17.onnx"}
# Also timed under a capacity, as deployed: SuperPoint's default capacity is every pixel (5,120
# rows through its descriptor sampling for the ~70 keypoints kept); its own `max_keypoints` and
# the matchers after it keep 512 to 2048.
# VITS's waveform at 8192 samples (512 frames): the "random" case's 6272 fit, at half the frames
# of the stage's 16384.
CAPPED = {"families/superpoint_dynamo18.onnx": 512, "real/vits_ts17.onnx": {"waveform": 8192}}
# Where the real exports are: models/real and its families folder.
REAL = ("real/", "families/")


def capacity_args(capacity):
    """`--capacity N`, or `--capacity NAME=N` per entry of a dict."""
    if isinstance(capacity, dict):
        return [arg for name, n in capacity.items() for arg in ("--capacity", f"{name}={n}")]
    return [] if capacity is None else ["--capacity", str(capacity)]


def static_cmd(export, out, capacity=None):
    """The CLI's command at `capacity`, else the export's own (exports.CAPACITIES)."""
    args = [ortbench.CLI, "optimize", "--static", "--allow-dynamic"]
    args += capacity_args(export.capacity if capacity is None else capacity)
    for name, dims in export.shapes.items():
        args += ["--input-shape", f"{name}=" + ",".join(str(int(d)) for d in dims)]
    return args + [str(export.path), out]


def rewrite_times(repeats):
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for export in exports.exports():
            if not export.id.startswith(REAL):
                continue
            out = os.path.join(work, "out.onnx")
            cli = []
            for _ in range(repeats):
                t = time.perf_counter()
                subprocess.run(static_cmd(export, out), capture_output=True, check=True)
                cli.append(time.perf_counter() - t)
            io = []
            for _ in range(repeats):
                t = time.perf_counter()
                onnx.save(onnx.load(str(export.path)), os.path.join(work, "copy.onnx"))
                io.append(time.perf_counter() - t)
            rows.append({"export": export.id, "static_s": ortbench.median(cli), "load_save_s": ortbench.median(io)})
    return rows


def check(original_path, static_path, feeds, axes):
    """The static outputs, cut to their counts, against the original's, both with basic graph
    optimizations: ONNX Runtime's layout transforms take other kernel paths for fixed shapes,
    whose last bits differ, and a keypoint's argmax over such heatmaps can move a pixel."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.log_severity_level = 3
    original = ort.InferenceSession(str(original_path), so, providers=["CPUExecutionProvider"])
    static = ort.InferenceSession(str(static_path), so, providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in original.get_outputs()], original.run(None, feeds)))
    got = dict(zip([o.name for o in static.get_outputs()], static.run(None, feeds)))
    for name, w in want.items():
        g = got[name]
        if name in axes:  # padded along that axis: cut to the count
            g = np.take(g, np.arange(int(got[f"{name}_count"])), axis=axes[name])
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-7)


def runtime(repeats):
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for export in exports.exports():
            if export.id not in MOE and export.id not in TIMED:
                continue
            rows += timed(export, work, repeats)
            if export.id in CAPPED:
                rows += timed(export, work, repeats, CAPPED[export.id])
    return rows


def timed(export, work, repeats, capacity=None):
    """Rows of the static model (under `capacity`, if given) against the original, spinning on
    and off; its outputs checked first (cut to the counts)."""
    rows = []
    out, report = os.path.join(work, "static.onnx"), os.path.join(work, "report.json")
    subprocess.run(static_cmd(export, out, capacity) + ["--report-json", report], capture_output=True, check=True)
    with open(report) as f:
        counts = json.load(f)["static"]["count_outputs"]
    feeds = cases.feeds(export, "random")
    check(export.path, out, feeds, {name: spec["axis"] for name, spec in counts.items()})
    label = export.id if capacity is None else f"{export.id} {' '.join(capacity_args(capacity))}"
    experts, top_k = MOE.get(export.id, (0, 0))
    for spinning in (True, False):
        original = ortbench.session(str(export.path), spinning=spinning)
        static = ortbench.session(out, spinning=spinning)
        times = ortbench.interleaved({"original": lambda: original.run(None, feeds),
                                      "static": lambda: static.run(None, feeds)}, repeats)
        rows.append({"export": label, "spinning": spinning,
                     "original_ms": 1e3 * ortbench.median(times["original"]),
                     "static_ms": 1e3 * ortbench.median(times["static"]),
                     "expert_work": experts / top_k if top_k else None})
    return rows


def markdown(rewrites, runs, repeats):
    lines = [BEGIN, "## Real exports (benches/static_real.py)", "",
             ortbench.header(f"{repeats} repeats, medians"), "",
             "`nonzero optimize --static --allow-dynamic` (the CLI, one process per run) against `onnx.load` + "
             "`onnx.save` of the same model:", "",
             "| export | --static s | load + save s | ratio |", "|---|---|---|---|"]
    for r in rewrites:
        lines.append(f"| {r['export']} | {r['static_s']:.3f} | {r['load_save_s']:.3f} | "
                     f"{r['static_s'] / r['load_save_s']:.2f}x |")
    slowest = max(rewrites, key=lambda r: r["static_s"])
    verdict = "is under" if slowest["static_s"] < 1.0 else "misses"
    lines += ["", "The CLI's time includes starting a process and decoding and encoding the model; `onnx.load` + "
              f"`onnx.save` run in this process. The slowest, {slowest['export']} ({slowest['static_s']:.2f} s), "
              f"{verdict} the 1 s aimed at. The graph's shapes are computed again after each compaction, except "
              "that the NonZeros whose plans touch nothing another's does are compacted in one batch on one "
              "computation (emit-static/src/capacity.rs): SSDlite's 90 per-class selections in one, where one "
              "at a time took 3.6 s."]
    lines += ["", "The fully static real exports against their dynamic originals on ONNX Runtime CPU (2 threads, "
              "interleaved; the plot: docs/performance-static-real.png):", "",
              "![static / original time per real export](performance-static-real.png)", "",
              "| export | spinning | original ms | static ms | static / original | expert work (MoE: experts / top_k) |",
              "|---|---|---|---|---|---|"]
    for r in runs:
        work = "" if r["expert_work"] is None else f"{r['expert_work']:.0f}x"
        lines.append(f"| {r['export']} | {'on' if r['spinning'] else 'off'} | {r['original_ms']:.3f} | "
                     f"{r['static_ms']:.3f} | {r['static_ms'] / r['original_ms']:.2f}x | {work} |")
    lines += ["", "A fixed-shape NMS whose rows every reader cuts to a prefix (torchvision's "
              "`keep[:detections_per_img]`) stops after that many picks per list (emit-static/src/nms/fixed.rs): "
              "SSDlite's NMS over its 91 classes' 27,000 rejoined boxes makes 300 picks, and the static model "
              "runs faster than the original, whose per-class selections and Concats are dynamic. Faster R-CNN is "
              "at or just over the 1.5x aimed at (1.47x to 1.55x over the runs so far): its two greedy NMS Loops (the RPN's proposals, then the class "
              "boxes) run one iteration per pick, where ONNX Runtime's NMS kernel does the greedy pass in C++; "
              "the mask-then-NMS patterns (6 boxes) are the Loop's fixed cost. BART is no slower static (its one "
              "selection is the eos rows). Mixtral's exact form gives each of its 4 experts every token's row "
              "(top 2: twice the original's expert work). Keypoint and Mask R-CNN are static up to their "
              "per-detection Loop, which runs once per detection as in the original. Longformer is faster static: "
              "its 43 NonZeros and the dynamic shape arithmetic after them are gone, its global slots run to the "
              "sequence length (16) and its two selections of one count are padded to 32 rows. LLaVA is no slower static (its "
              "image features written by a Where, not a ScatterND). SuperPoint's exact default gives every pixel a "
              "row (5,120 through the descriptor sampling and normalisation, where the original samples the ~70 "
              "keypoints kept): under `--capacity 512` (its `max_keypoints` as deployed; exact while at most 512 "
              "pixels pass the threshold) the rows are the capacity's. VITS runs its frames to the capacity, whatever "
              "the utterance's length: its time follows the capacity's frames against the utterance's (16384 "
              "samples are 2.6 times the \"random\" case's 6272: 1.9-2.6x over the runs so far, around the 2x "
              "aimed at; 8192, 1.3 times: 1.1-1.4x)."]
    lines.append(END)
    return "\n".join(lines) + "\n"


PLOT = os.path.join(ROOT, "docs", "performance-static-real.png")


def plot(runs, path):
    """static / original time per export, spinning on and off, with the 1.5x and 2x aims."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib missing: no plot")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exports_ = list(dict.fromkeys(r["export"] for r in runs))
    fig, ax = plt.subplots(figsize=(12, 5.5))
    width = 0.4
    for i, spinning in enumerate((True, False)):
        ratios = {r["export"]: r["static_ms"] / r["original_ms"] for r in runs if r["spinning"] == spinning}
        ax.bar([x + i * width for x in range(len(exports_))], [ratios.get(e, 0) for e in exports_], width,
               label=f"spinning {'on' if spinning else 'off'}")
    for aim, style in ((1.0, "-"), (1.5, "--"), (2.0, ":")):
        ax.axhline(aim, color="black", linewidth=0.8, linestyle=style)
    ax.set_ylabel("static time / original time (below 1: faster)")
    ax.set_xticks([x + width / 2 for x in range(len(exports_))], [e.split("/")[-1].replace(".onnx", "") for e in exports_],
                  fontsize=8, rotation=30, ha="right")
    ax.set_title("nonzero optimize --static on real exports, ONNX Runtime CPU, 2 threads (lines: 1x, 1.5x, 2x)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--plot-only", metavar="JSON", help="draw the plot of an earlier run's JSON")
    args = parser.parse_args()
    if args.plot_only:
        with open(args.plot_only) as f:
            plot(json.load(f)["runs"], PLOT if args.write_docs else os.path.join(ortbench.BUILD, "static_real.png"))
        return
    rewrites, runs = rewrite_times(max(3, args.repeats // 3)), runtime(args.repeats)
    md = markdown(rewrites, runs, args.repeats)
    ortbench.write_outputs("static_real", md, {"rewrites": rewrites, "runs": runs})
    plot(runs, PLOT if args.write_docs else os.path.join(ortbench.BUILD, "static_real.png"))
    if args.write_docs:
        text = open(DOC).read()
        if BEGIN in text:
            text = text[:text.index(BEGIN)] + md + text[text.index(END) + len(END) + 1:]
        else:
            text = text.rstrip("\n") + "\n\n" + md
        with open(DOC, "w") as f:
            f.write(text)
        print(f"wrote {DOC}")


if __name__ == "__main__":
    main()
