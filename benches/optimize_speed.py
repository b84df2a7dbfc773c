"""Wall time and peak memory of `nonzero optimize IN OUT` against onnx's load + save of the same
file (issue 25, item 5): the median of N runs each, taken in turns, with the peak resident set
from `/usr/bin/time -v`. The models: torchvision's SSDlite (models/real, 180 chains) and the
same padded to 240 MiB with an initializer the graph reads (made by benches/padded_model.py into
/tmp when missing; never committed). Run it on a quiet machine (the load average is printed).

    .venv/bin/python benches/optimize_speed.py [--nonzero target/release/nonzero] [--baseline OLD/nonzero] [--runs 5]

Prints a Markdown table: per model and contender, the median wall time, its ratio to onnx's,
and the peak memory as a multiple of the file size.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SSDLITE = os.path.join(ROOT, "models/real/ssdlite320_ts17.onnx")
PADDED = "/tmp/ssdlite_240mib.onnx"
ONNX_SAVE = "import onnx, sys; onnx.save(onnx.load(sys.argv[1]), sys.argv[2])"


def timed(command):
    """(wall seconds, peak resident set in bytes) of one run."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed: {' '.join(command)}\n{proc.stderr}")
    peak = next(
        int(line.split(":")[1]) * 1024
        for line in proc.stderr.splitlines()
        if "Maximum resident set size" in line
    )
    return wall, peak


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nonzero", default=os.path.join(ROOT, "target/release/nonzero"))
    parser.add_argument("--baseline", help="another nonzero binary to time beside it")
    parser.add_argument("--python", default=sys.executable, help="a Python with onnx")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--models", nargs="*", default=[SSDLITE, PADDED])
    args = parser.parse_args()
    if PADDED in args.models and not os.path.exists(PADDED):
        subprocess.run(
            [args.python, os.path.join(ROOT, "benches/padded_model.py"), SSDLITE, PADDED],
            check=True,
        )
    contenders = [("onnx load+save", lambda i, o: [args.python, "-c", ONNX_SAVE, i, o])]
    if args.baseline:
        contenders.append(("baseline", lambda i, o: [args.baseline, "optimize", i, o]))
    contenders.append(("nonzero optimize", lambda i, o: [args.nonzero, "optimize", i, o]))
    print(f"load average before: {load()}\n")
    print("| model | file | contender | median wall | x onnx | peak memory | x file |")
    print("|---|---:|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as out_dir:
        for model in args.models:
            size = os.path.getsize(model)
            results = {name: [] for name, _ in contenders}
            for run in range(args.runs):
                for name, command in contenders:
                    out = os.path.join(out_dir, f"{run}.onnx")
                    results[name].append(timed(command(model, out)))
                    os.remove(out)
            onnx_wall = statistics.median(w for w, _ in results["onnx load+save"])
            for name, _ in contenders:
                wall = statistics.median(w for w, _ in results[name])
                peak = max(p for _, p in results[name])
                print(
                    f"| {os.path.basename(model)} | {size / 2**20:.1f} MiB | {name} | {wall:.3f} s "
                    f"| {wall / onnx_wall:.2f} | {peak / 2**20:.0f} MiB | {peak / size:.2f} |"
                )
    print(f"\nload average after: {load()}")


if __name__ == "__main__":
    main()
