"""Checks that `nonzero optimize` keeps its behaviour: for every .onnx under models/ (recursively)
and five option sets (the default, --nonzero-domain, --no-fallback, --static, and --static
--allow-dynamic), the rewritten bytes, the --report-json file, stdout, stderr and the exit status.
The static sets give each model the fixed input shapes of tests/static/exports.py (one
--input-shape per input); a model it does not list runs without any, and its errors, stdout and
exit status are what must stay the same. Every binary runs every case twice, so an ordering that a
hash map or set brings in (a different output from one run to the next) fails too. Paths in
stdout and stderr are masked (<out> for the case's output folder, <root> for the repository, <pid>
for a process id in a temporary file's name), so nothing depends on where the checkout or the
temporary folder is.

Two builds (a change that must not change behaviour, such as a refactor or speed work): build the
baseline from the commit you branch from into another target dir, then

    .venv/bin/python benches/optimize_identity.py BASE/nonzero target/release/nonzero [--extra /tmp/ssdlite_240mib.onnx]

prints one line per difference and a summary, and exits 1 if anything differs.

The golden (CI: scripts/test's `identity` stage): tests/golden/optimize_identity.txt holds, for each
(model, option set), the exit status and the sha256 (first 16 hex digits) of the output model,
the report, stdout and stderr, one sorted line each.

    .venv/bin/python benches/optimize_identity.py --check [target/release/nonzero]

checks a build against it (exit 1 on any difference, a missing or extra case, or a run that
differs from its repeat), and

    .venv/bin/python benches/optimize_identity.py --write [target/release/nonzero]

rewrites it from a build. A commit that changes behaviour on purpose (a new rewrite, a changed
report field or message, a model added under models/ or to tests/static/exports.py) regenerates
the golden with --write, commits it with the change, and says in its commit message which
behaviour changed and why the golden moved (`git diff tests/golden` names the cases). A golden
that moves in a commit meant to change nothing is a bug in that commit. Before regenerating, the
two-build mode against the previous commit's binary shows the differences in full.

--jobs N runs N cases at a time (default: the CPU count, at most 4). Exit status: 0 same,
1 different, 2 usage.
"""

import argparse
import concurrent.futures
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time

# Resolved, so that the masked paths and the golden's model names agree under a symlinked checkout.
ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
GOLDEN = os.path.join(ROOT, "tests", "golden", "optimize_identity.txt")
DEFAULT_BINARY = os.path.join(ROOT, "target", "release", "nonzero")
# (name, options); the static sets also get the model's --input-shape options (static_shapes).
OPTION_SETS = [
    ("default", []),
    ("nonzero-domain", ["--nonzero-domain"]),
    ("no-fallback", ["--no-fallback"]),
    ("static", ["--static"]),
    ("static-allow-dynamic", ["--static", "--allow-dynamic"]),
]
KEYS = ("status", "model", "report", "stdout", "stderr")
HASH_DIGITS = 16
PID_TMP = re.compile(rb"\.[0-9]+\.tmp")
# A run that takes longer (SSDlite --static: about 3 s) has hung: its status is "timeout".
RUN_TIMEOUT_S = 600


def static_shapes():
    """{absolute model path: ["--input-shape", "NAME=D0,D1,...", ...]} from tests/static/exports.py
    (it reads the models' inputs with onnx)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "static"))
    try:
        import exports
    finally:
        sys.path.pop(0)
    shapes = {}
    for export in exports.exports():
        args = []
        for name, dims in sorted(export.shapes.items()):
            args += ["--input-shape", f"{name}=" + ",".join(str(int(d)) for d in dims)]
        shapes[os.path.realpath(str(export.path))] = args
    return shapes


def cases(models, shapes):
    """[(model, set name, options)] in a stable order."""
    out = []
    for model in models:
        extra = shapes.get(os.path.realpath(model), [])
        for name, options in OPTION_SETS:
            out.append((model, name, options + (extra if "--static" in options else [])))
    return out


def run(binary, model, options, out_dir):
    """Runs one optimize; returns what must match, with paths masked."""
    out, report = os.path.join(out_dir, "out.onnx"), os.path.join(out_dir, "report.json")
    for path in (out, report):
        if os.path.exists(path):
            os.remove(path)
    try:
        proc = subprocess.run(
            [binary, "optimize", model, out, "--report-json", report, *options],
            capture_output=True,
            timeout=RUN_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as e:
        proc = subprocess.CompletedProcess(e.cmd, "timeout", e.stdout or b"", e.stderr or b"")

    def read(path):
        if not os.path.exists(path):
            return None
        with open(path, "rb") as f:
            return f.read()

    def mask(text):
        # The output folder first: it may lie under the repository.
        text = text.replace(out_dir.encode(), b"<out>").replace(ROOT.encode(), b"<root>")
        return PID_TMP.sub(b".<pid>.tmp", text)

    return {
        "status": proc.returncode,
        "stdout": mask(proc.stdout),
        "stderr": mask(proc.stderr),
        "model": read(out),
        "report": read(report),
    }


def digest(result):
    """The golden's fields of one result: the exit status and short hashes ('-': no file)."""
    h = lambda b: "-" if b is None else hashlib.sha256(b).hexdigest()[:HASH_DIGITS]
    return {"status": str(result["status"]), **{k: h(result[k]) for k in KEYS[1:]}}


def label(model):
    path = os.path.realpath(model)
    return os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path


def repeat_differences(first, second):
    return [k for k in KEYS if first[k] != second[k]]


def run_all(binaries, todo, jobs):
    """Runs every case twice with each binary; yields (case, [(run 1, run 2) per binary], seconds)
    in the order of `todo`. Each case has its own output folder per binary."""

    def one(case):
        model, _, options = case
        start = time.monotonic()
        results = []
        for binary in binaries:
            with tempfile.TemporaryDirectory(prefix="nz-identity-") as out_dir:
                results.append((run(binary, model, options, out_dir), run(binary, model, options, out_dir)))
        return case, results, time.monotonic() - start

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        # The largest models first, so that they do not end the run alone on one core.
        order = sorted(range(len(todo)), key=lambda i: -os.path.getsize(todo[i][0]))
        futures = {i: pool.submit(one, todo[i]) for i in order}
        for i in range(len(todo)):
            yield futures[i].result()


def read_golden(path):
    golden = {}
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            model, name, *fields = line.split()
            golden[(model, name)] = dict(field.split("=", 1) for field in fields)
    return golden


def golden_line(model, name, fields):
    return " ".join([model, name, *(f"{k}={fields[k]}" for k in KEYS)])


GOLDEN_HEADER = """\
# benches/optimize_identity.py --write: `nonzero optimize` on every model under models/, per option
# set (default, nonzero-domain, no-fallback, static, static-allow-dynamic; the static sets with
# tests/static/exports.py's input shapes): exit status, then the first 16 hex digits of the sha256
# of the output model, the --report-json file, stdout and stderr (paths masked; '-': not written).
# A commit that changes these on purpose regenerates this file and says which behaviour changed.
"""


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Two builds: BASE NEW. Golden: --check [BINARY] or --write [BINARY].",
    )
    parser.add_argument("binaries", nargs="*", help="BASE NEW, or with --check/--write one binary")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="check one binary against the golden")
    mode.add_argument("--write", action="store_true", help="write the golden from one binary")
    parser.add_argument("--golden", default=GOLDEN, help="the golden file (%(default)s)")
    parser.add_argument("--models", default=os.path.join(ROOT, "models"))
    parser.add_argument("--extra", nargs="*", default=[], help="more .onnx files (two-build mode)")
    parser.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 4))
    parser.add_argument("--slowest", type=int, default=0, help="print the N slowest cases")
    args = parser.parse_args()
    golden_mode = args.check or args.write
    if golden_mode:
        if len(args.binaries) > 1 or args.extra:
            parser.error("--check and --write take one binary (default target/release/nonzero), no --extra")
        binaries = [os.path.abspath(b) for b in args.binaries] or [DEFAULT_BINARY]
    elif len(args.binaries) != 2:
        parser.error("give BASE NEW, or --check/--write [BINARY]")
    else:
        binaries = [os.path.abspath(b) for b in args.binaries]
    for binary in binaries:
        if not os.access(binary, os.X_OK):
            parser.error(f"{binary}: not an executable")
    models = sorted(
        os.path.join(d, f)
        for d, _, files in os.walk(os.path.realpath(args.models))
        for f in files
        if f.endswith(".onnx")
    )
    models += [os.path.abspath(m) for m in args.extra]
    todo = cases(models, static_shapes())

    start = time.monotonic()
    problems, lines, timings = [], [], []
    for (model, name, options), results, seconds in run_all(binaries, todo, args.jobs):
        timings.append((seconds, label(model), name))
        where = f"{label(model)} {name}"
        for binary, (first, second) in zip(binaries, results):
            for key in repeat_differences(first, second):
                problems.append(f"NONDETERMINISTIC {key}: {where} ({binary}: run 1 != run 2)")
        if golden_mode:
            lines.append((label(model), name, digest(results[0][0])))
        else:
            (want, _), (got, _) = results
            for key in KEYS:
                if want[key] != got[key]:
                    problems.append(f"DIFFERENT {key}: {where}")

    if args.check:
        golden = read_golden(args.golden)
        seen = set()
        for model, name, fields in lines:
            seen.add((model, name))
            want = golden.get((model, name))
            if want is None:
                problems.append(f"NOT IN GOLDEN: {model} {name}")
                continue
            for key in KEYS:
                if want.get(key) != fields[key]:
                    problems.append(f"DIFFERENT {key}: {model} {name} (golden {want.get(key)}, now {fields[key]})")
        for model, name in sorted(set(golden) - seen):
            problems.append(f"MISSING (in the golden, not run): {model} {name}")
    if args.write:
        if problems:
            print("not writing the golden: the runs are not reproducible", file=sys.stderr)
        else:
            os.makedirs(os.path.dirname(os.path.abspath(args.golden)), exist_ok=True)
            with open(args.golden, "w") as f:
                f.write(GOLDEN_HEADER)
                for line in sorted(golden_line(*entry) for entry in lines):
                    f.write(line + "\n")
            print(f"wrote {args.golden}")

    for problem in problems:
        print(problem)
    elapsed = time.monotonic() - start
    for seconds, model, name in sorted(timings, reverse=True)[: args.slowest]:
        print(f"  {seconds:6.2f} s  {model} {name}")
    runs = len(todo) * 2 * len(binaries)
    print(
        f"{len(models)} models x {len(OPTION_SETS)} option sets = {len(todo)} cases, {runs} runs"
        f" ({len(binaries)} binar{'y' if len(binaries) == 1 else 'ies'}, twice each), {len(problems)} problems,"
        f" {elapsed:.1f} s with {args.jobs} jobs"
    )
    if problems and args.check:
        write = ["--write" if a == "--check" else a for a in sys.argv[1:]]
        print(
            "If this change means to change behaviour: regenerate with\n"
            f"  .venv/bin/python benches/optimize_identity.py {' '.join(write)}\n"
            "and say in the commit message which behaviour changed (see this script's docstring)."
        )
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
