"""`nonzero optimize --static` (issue 26) against the dynamic models it replaces, per pattern, at
1% and 50% density, in one process, interleaved, medians:
  - builtin:    the export as written, ONNX Runtime's built-in kernels;
  - library:    the export as written, with libnonzero_ort.so;
  - rewritten:  `nonzero optimize` (the default mode: nonzero-domain ops), with the library;
  - static:     `nonzero optimize --static`, built-in kernels (standard ops only);
  - ov dynamic / ov static: the export and the static model on OpenVINO's CPU plugin, when the
    `openvino` package is importable (the `static` stage's .venv-static has it).
Every contender's outputs are checked against the builtin's first (static ones cut to their
`<name>_count`; float sums up to rounding). Ratios are builtin / contender (above 1: faster).

The models are the committed exports (models/exported, models/real), exactly as written; only
their input shapes are fixed, to about SIZE x SIZE elements.

    .venv-bench/bin/python benches/static_forms.py [--size 2048] [--repeats 15] [--write-docs]
    .venv-bench/bin/python benches/static_forms.py --plot-only build/bench/static_forms.json
writes build/bench/static_forms.{md,json,png}; --write-docs also docs/performance-static.{md,png}.
(.venv-static has OpenVINO but no matplotlib: there, the plot is left out.)"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import ortbench

ROOT = ortbench.ROOT
# (title, export, input shapes as functions of the size, float reductions among the outputs)
PATTERNS = [
    ("torch.nonzero(x)", "models/exported/nonzero_ts17.onnx", lambda s: {"input_0": (s, s)}, False),
    ("x[mask]", "models/exported/x_mask_ts17.onnx", lambda s: {"input_0": (s // 2, s // 2, 3), "input_1": (s // 2, s // 2)}, False),
    ("x[m] = x[m] * 2", "models/exported/index_put_ts17.onnx", lambda s: {"input_0": (s, s), "input_1": (s, s)}, False),
    ("y[m] += v", "models/real/torch_patterns/mask_add_ts17.onnx", lambda s: {"x": (s * s // 4, 3), "m": (s * s // 4,), "v": (3,)}, False),
    ("y[m] = v", "models/real/torch_patterns/mask_assign_dynamo18.onnx", lambda s: {"x": (s * s // 4, 3), "m": (s * s // 4,), "v": (3,)}, False),
    ("x.masked_scatter(m, s)", "models/real/torch_patterns/masked_scatter_ts17.onnx", lambda s: {"x": (s, s), "m": (s, s), "s": (s, s)}, False),
    ("tf.reduce_sum(tf.boolean_mask(x, m), 0)", "models/real/tf2onnx/masked_reduce_sum_tf2onnx.onnx", lambda s: {"x": (s * s // 4, 3), "m": (s * s // 4,)}, True),
]
DENSITIES = (0.01, 0.5)


def cli(*args):
    done = subprocess.run([ortbench.CLI, "optimize", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"nonzero optimize {' '.join(args)}: {done.stderr.strip()}")


def feeds_for(shapes, types, density, rng):
    """Masks true at `density`; a float input that is also the NonZero's own input (one input
    only) is zero at 1 - density."""
    out = {}
    for name, shape in shapes.items():
        if types[name] == "tensor(bool)":
            out[name] = rng.random(shape) < density
        else:
            v = rng.standard_normal(shape).astype(np.float32)
            if len(shapes) == 1:
                v[rng.random(shape) >= density] = 0
            out[name] = v
    return out


def trimmed(outputs, names, counts):
    values = dict(zip(names, outputs))
    out = {}
    for name, value in values.items():
        if any(c["count"] == name for c in counts.values()):
            continue
        if name in counts:
            value = np.take(value, np.arange(int(values[counts[name]["count"]])), axis=counts[name]["axis"])
        out[name] = value
    return out


def check(name, got, want, rounding):
    for key, w in want.items():
        g = got[key]
        assert g.shape == w.shape and g.dtype == w.dtype, (name, key, g.shape, w.shape)
        if rounding:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-3, err_msg=f"{name} {key}")
        else:
            assert np.array_equal(g, w, equal_nan=True), (name, key)


def openvino_runner(path, feeds):
    try:
        import openvino as ov
    except ImportError:
        return None
    compiled = ov.Core().compile_model(ov.convert_model(path), "CPU")
    request = compiled.create_infer_request()
    names = [o.get_any_name() for o in compiled.outputs]
    return lambda: [request.infer(feeds)[o] for o in compiled.outputs], names


def run_pattern(title, export, shapes_of, rounding, density, spinning, args, work):
    rng = np.random.default_rng(0)
    src = os.path.join(ROOT, export)
    shapes = shapes_of(args.size)
    base = os.path.join(work, os.path.basename(export).replace(".onnx", ""))
    rewritten, static, report = base + "_rewritten.onnx", base + "_static.onnx", base + ".json"
    cli(src, rewritten)
    shape_args = [a for n, d in shapes.items() for a in ("--input-shape", f"{n}={','.join(map(str, d))}")]
    cli("--static", *shape_args, "--report-json", report, src, static)
    counts = json.load(open(report))["static"]["count_outputs"]
    sessions = {
        "builtin": ortbench.session(src, args.threads, False, spinning),
        "library": ortbench.session(src, args.threads, True, spinning),
        "rewritten": ortbench.session(rewritten, args.threads, True, spinning),
        "static": ortbench.session(static, args.threads, False, spinning),
    }
    types = {i.name: i.type for i in sessions["builtin"].get_inputs()}
    feeds = feeds_for(shapes, types, density, rng)
    names = {k: [o.name for o in s.get_outputs()] for k, s in sessions.items()}
    want = dict(zip(names["builtin"], sessions["builtin"].run(None, feeds)))
    runners = {}
    for key, sess in sessions.items():
        got = trimmed(sess.run(None, feeds), names[key], counts if key == "static" else {})
        check(f"{title} {key}", got, want, rounding and key == "static")
        runners[key] = (lambda s=sess: s.run(None, feeds))
    if args.openvino:
        for key, path in (("ov dynamic", src), ("ov static", static)):
            made = openvino_runner(path, feeds)
            if made is not None:
                fn, ov_names = made
                got = trimmed(fn(), ov_names, counts if key == "ov static" else {})
                check(f"{title} {key}", got, want, rounding)
                runners[key] = fn
    times = ortbench.interleaved(runners, args.repeats)
    return {k: ortbench.median(v) * 1e3 for k, v in times.items()}


def table(rows):
    keys = [k for k in ("builtin", "library", "rewritten", "static", "ov dynamic", "ov static") if any(k in r["ms"] for r in rows)]
    lines = ["| pattern | density | spinning | " + " | ".join(f"{k} ms" for k in keys) + " | builtin / static | rewritten / static |",
             "|---" * (len(keys) + 5) + "|"]
    for r in rows:
        ms = r["ms"]
        cells = [f"{ms[k]:.2f}" if k in ms else "-" for k in keys]
        lines.append(f"| {r['pattern']} | {r['density']:.0%} | {'on' if r['spinning'] else 'off'} | " + " | ".join(cells)
                     + f" | {ms['builtin'] / ms['static']:.2f}x | {ms['rewritten'] / ms['static']:.2f}x |")
    return "\n".join(lines) + "\n"


def plot(rows, path):
    """Speed-up over the built-in kernels (spinning off), per pattern and density, log scale."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib missing: no plot")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if not r["spinning"]]
    keys = [k for k in ("library", "rewritten", "static", "ov static") if any(k in r["ms"] for r in rows)]
    labels = [f"{r['pattern']} {r['density']:.0%}" for r in rows]
    fig, ax = plt.subplots(figsize=(13, 6))
    width = 0.8 / len(keys)
    for i, k in enumerate(keys):
        ratios = [r["ms"]["builtin"] / r["ms"][k] if k in r["ms"] else 0 for r in rows]
        ax.bar([x + i * width for x in range(len(rows))], ratios, width, label=k)
    ax.axhline(1, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("ONNX Runtime built-in time / contender time")
    ax.set_xticks([x + width * (len(keys) - 1) / 2 for x in range(len(rows))], labels, fontsize=7, rotation=30, ha="right")
    ax.set_title("nonzero optimize --static against the dynamic export (spinning off; above 1: faster)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-openvino", dest="openvino", action="store_false")
    parser.add_argument("--write-docs", action="store_true")
    parser.add_argument("--plot-only", metavar="JSON", help="draw the plot of an earlier run's JSON")
    args = parser.parse_args()
    if args.plot_only:
        rows = json.load(open(args.plot_only))
        plot(rows, os.path.join(ROOT, "docs/performance-static.png") if args.write_docs else os.path.join(ortbench.BUILD, "static_forms.png"))
        return 0
    rows = []
    with tempfile.TemporaryDirectory(prefix="nz-static-bench-") as work:
        for spinning in (True, False):
            for title, export, shapes_of, rounding in PATTERNS:
                for density in DENSITIES:
                    ms = run_pattern(title, export, shapes_of, rounding, density, spinning, args, work)
                    rows.append({"pattern": title, "density": density, "spinning": spinning, "ms": ms})
                    print(rows[-1], flush=True)
    md = f"{ortbench.header(f'size {args.size}, {args.threads} threads, {args.repeats} interleaved repeats')}\n\n{table(rows)}"
    ortbench.write_outputs("static_forms", md, rows)
    plot(rows, os.path.join(ortbench.BUILD, "static_forms.png"))
    if args.write_docs:
        plot(rows, os.path.join(ROOT, "docs/performance-static.png"))
        with open(os.path.join(ROOT, "docs/performance-static.md"), "w") as f:
            f.write("# Static forms against the dynamic models (benches/static_forms.py)\n\n" + md)


if __name__ == "__main__":
    sys.exit(main())
