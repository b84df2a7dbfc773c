"""Two builds of the rewriter timed in-process, in turns (issue 35, item 5: a change that must not
change speed). Each build's `optimize_time` (benches/src/bin/optimize_time.rs: `optimize_bytes`
plus the streamed serialization, no process start-up or file IO) runs once per round, the two
builds' order alternating; each run reports the median of its in-process calls. Cases: the
default mode on SSDlite and on SSDlite padded to 240 MiB (benches/padded_model.py, written to
/tmp when missing), and `--static --allow-dynamic` on SSDlite at its manifest's image shape.

    cargo build --release -p nonzero-benches --bin optimize_time        # in each tree
    .venv/bin/python benches/optimize_inprocess.py BASE/target/release/optimize_time \\
        target/release/optimize_time [--rounds 7]

Prints a Markdown table: per case, each build's median over the rounds and NEW/BASE. Run it on a
quiet machine (no build, no helper): the load average is printed.
"""

import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "static"))
from exports import exports  # noqa: E402

SSDLITE = os.path.join(ROOT, "models/real/ssdlite320_ts17.onnx")
PADDED = "/tmp/ssdlite_240mib.onnx"


def static_args(model_id):
    """`--static --input-shape ... --allow-dynamic` with the shapes tests/static/exports.py gives."""
    export = next(e for e in exports() if e.id == model_id)
    args = ["--static", "--allow-dynamic"]
    for name, dims in export.shapes.items():
        args += ["--input-shape", f"{name}={','.join(str(d) for d in dims)}"]
    return args


def once(binary, model, args, calls):
    out = subprocess.run([binary, model, *args, "--runs", str(calls)], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{binary} failed on {model}:\n{out.stderr}")
    return float(out.stdout.split()[0].split("=")[1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=3, help="in-process calls per run (median)")
    args = parser.parse_args()
    if not os.path.exists(PADDED):
        subprocess.run([sys.executable, os.path.join(ROOT, "benches/padded_model.py"), SSDLITE, PADDED, "--mib", "240"], check=True)
    cases = [
        ("default, SSDlite", SSDLITE, []),
        ("default, SSDlite padded to 240 MiB", PADDED, []),
        ("--static --allow-dynamic, SSDlite", SSDLITE, static_args("real/ssdlite320_ts17.onnx")),
    ]
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print("| case | base median (s) | new median (s) | new / base |")
    print("|---|---|---|---|")
    for label, model, extra in cases:
        times = {"base": [], "new": []}
        for r in range(args.rounds):
            order = [("base", args.base), ("new", args.new)]
            for name, binary in order if r % 2 == 0 else order[::-1]:
                times[name].append(once(binary, model, extra, args.calls))
        base, new = statistics.median(times["base"]), statistics.median(times["new"])
        print(f"| {label} | {base:.4f} | {new:.4f} | {new / base:.3f} |")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
