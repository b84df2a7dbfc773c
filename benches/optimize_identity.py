"""Checks that two builds of `nonzero optimize` behave the same: for every .onnx under models/
(recursively) and any extra files named, with the default options, --nonzero-domain and
--no-fallback, the rewritten bytes, the --report-json file, stdout, stderr and the exit status
must be identical. For changes that must not change behaviour (speed work): build the baseline
from the commit you branch from into another target dir, then

    .venv/bin/python benches/optimize_identity.py BASE/nonzero target/release/nonzero [--extra /tmp/ssdlite_240mib.onnx]

Prints one line per difference and a summary; exits 1 if anything differs.
"""

import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPTION_SETS = [[], ["--nonzero-domain"], ["--no-fallback"]]


def run(binary, model, options, out_dir):
    """Runs one optimize; returns what must match, with the output folder's name masked."""
    out, report = os.path.join(out_dir, "out.onnx"), os.path.join(out_dir, "report.json")
    for path in (out, report):
        if os.path.exists(path):
            os.remove(path)
    proc = subprocess.run(
        [binary, "optimize", model, out, "--report-json", report, *options],
        capture_output=True,
    )

    def read(path):
        if not os.path.exists(path):
            return None
        with open(path, "rb") as f:
            return f.read()

    mask = lambda b: b.replace(out_dir.encode(), b"<out>")
    return {
        "status": proc.returncode,
        "stdout": mask(proc.stdout),
        "stderr": mask(proc.stderr),
        "model": read(out),
        "report": read(report),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the baseline nonzero binary")
    parser.add_argument("new", help="the nonzero binary under test")
    parser.add_argument("--models", default=os.path.join(ROOT, "models"))
    parser.add_argument("--extra", nargs="*", default=[], help="more .onnx files to compare")
    args = parser.parse_args()
    models = sorted(
        os.path.join(d, f)
        for d, _, files in os.walk(args.models)
        for f in files
        if f.endswith(".onnx")
    )
    models += args.extra
    differences = runs = 0
    with tempfile.TemporaryDirectory() as base_dir, tempfile.TemporaryDirectory() as new_dir:
        for model in models:
            for options in OPTION_SETS:
                runs += 1
                want = run(args.base, model, options, base_dir)
                got = run(args.new, model, options, new_dir)
                # Both output folders are masked as <out>; their names differ only there.
                for key in want:
                    if want[key] != got[key]:
                        differences += 1
                        name = os.path.relpath(model, ROOT)
                        print(f"DIFFERENT {key}: {name} {' '.join(options) or '(default)'}")
    print(f"{len(models)} models x {len(OPTION_SETS)} option sets = {runs} runs, {differences} differences")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
