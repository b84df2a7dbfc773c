"""The ONNX Runtime compatibility matrix (the `matrix` stage of scripts/test).

For every release in requirements/ort-matrix.txt: a venv of its own under build/matrix/ (kept
between runs; rebuilt only when its pins change), then
  - 1.17 and later: the bundled models and a sample of the conformance pack through that release
    with the library (tests/matrix/run_cases.py), compared exactly, and the released-opset probe;
  - older: registering the library must fail with the library's message naming 1.17.
Writes docs/compatibility.md from the results and exits non-zero if any release fails.

    python tests/matrix/matrix.py LIB [--only 1.17.3,1.31.1] [--no-table]
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/python"))
from onnx_cases import case_dirs, ensure_pack  # noqa: E402

MATRIX = ROOT / "requirements/ort-matrix.txt"
VENVS = ROOT / "build/matrix"
TABLE = ROOT / "docs/compatibility.md"
MINIMUM = (1, 17)
SAMPLE_EVERY = 5  # every 5th case of each element type of the pack (as tests/python-package)


def versions():
    out = []
    for line in MATRIX.read_text().splitlines():
        m = re.fullmatch(r"onnxruntime==(\d+)\.(\d+)\.(\d+)", line.strip())
        if m:
            out.append(tuple(map(int, m.groups())))
    return out


def name(v):
    return ".".join(map(str, v))


def requirements(v) -> str:
    """The pins of ort-1.17.txt (numpy 1.x) or ort-1.31.txt, with this onnxruntime (pytest-xdist
    left out: the matrix runs no pytest in parallel, and leaving it out keeps the venvs' stamps)."""
    base = ROOT / ("requirements/ort-1.17.txt" if v < (1, 19) else "requirements/ort-1.31.txt")
    skip = ("#", "onnxruntime==", "pytest-xdist==", "execnet==")
    lines = [l for l in base.read_text().splitlines() if l and not l.startswith(skip)]
    return "\n".join([f"onnxruntime=={name(v)}", *lines]) + "\n"


def venv(v) -> pathlib.Path:
    # resolve(): the stage links each venv into the cache (scripts/cache.sh), and venv refuses a link.
    root = (VENVS / f"ort-{name(v)}").resolve()
    want = requirements(v)
    marker = root / ".installed-requirements"
    if marker.exists() and marker.read_text() == want:
        return root
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(root)], check=True)
    req = root / "requirements.txt"
    req.write_text(want)
    subprocess.run(
        [str(root / "bin/python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", str(req)],
        check=True,
    )
    marker.write_text(want)
    return root


def sample():
    by_type = {}
    for case in case_dirs(ensure_pack()):
        by_type.setdefault(case.name.split("_op")[0], []).append(case)
    # ONNX Runtime has no complex tensor type (asserted in tests/python/test_conformance.py).
    types = sorted(t for t in by_type if not t.startswith("complex"))
    return [c for t in types for c in by_type[t][::SAMPLE_EVERY]]


def rewritten_models(models):
    """The bundled models with every NonZero moved to the nonzero domain (`nonzero optimize
    --nonzero-domain`), as case directories beside build/matrix: run with the library's nonzero
    domain alone registered, they must give the original's outputs."""
    out = VENVS / "nonzero-domain"
    cli = os.environ.get("NONZERO_CLI", str(ROOT / "target/release/nonzero"))
    rewritten = []
    for model in models:
        case = out / model.name
        case.mkdir(parents=True, exist_ok=True)
        subprocess.run([cli, "optimize", str(model / "model.onnx"), str(case / "model.onnx"), "--nonzero-domain"],
                       check=True, capture_output=True)
        for data in model.glob("test_data_set_*"):
            link = case / data.name
            if not link.exists():
                link.symlink_to(data.resolve())
        rewritten.append(case)
    return rewritten


# Real exports whose default rewrite writes the library's newer ops (MaskedFill, MaskedScatter,
# BooleanMaskAxis), so that the fallback probe checks every op `nonzero optimize` writes, on every
# release: with the library its kernels run, without it the functions' bodies.
LIBRARY_OP_EXPORTS = ("mask_assign_dynamo18.onnx", "masked_scatter_ts17.onnx", "mask_add_ts17.onnx",
                      "boolean_mask_axis1_tf2onnx.onnx", "x_mask_paddle2onnx.onnx")


def library_op_cases():
    """Case directories (model + test_data_set_0) of LIBRARY_OP_EXPORTS rewritten by `nonzero
    optimize`: random inputs at the manifest's first sizes, the expected outputs from this
    process's ONNX Runtime on the export as written. IR 10 is lowered to 9 (1.17 loads 9 at most;
    the models use nothing of 10)."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    import real_patterns as rp

    out = VENVS / "library-ops"
    cli = os.environ.get("NONZERO_CLI", str(ROOT / "target/release/nonzero"))
    cases = []
    for entry in (e for e in rp.EXPORTS if e["file"] in LIBRARY_OP_EXPORTS):
        case = out / entry["file"].removesuffix(".onnx")
        data = case / "test_data_set_0"
        data.mkdir(parents=True, exist_ok=True)
        subprocess.run([cli, "optimize", str(rp.path(entry)), str(case / "model.onnx")], check=True, capture_output=True)
        model = onnx.load(str(case / "model.onnx"))
        model.ir_version = min(model.ir_version, 9)
        onnx.save(model, str(case / "model.onnx"))
        feeds = rp.inputs(entry, 0, "random", seed=5)
        want = ort.InferenceSession(str(rp.path(entry)), providers=["CPUExecutionProvider"]).run(None, feeds)
        for i, vi in enumerate(model.graph.input):
            onnx.save_tensor(numpy_helper.from_array(np.asarray(feeds[vi.name]), vi.name), str(data / f"input_{i}.pb"))
        for i, w in enumerate(want):
            onnx.save_tensor(numpy_helper.from_array(np.asarray(w)), str(data / f"output_{i}.pb"))
        cases.append(case)
    assert len(cases) == len(LIBRARY_OP_EXPORTS), [c.name for c in cases]
    return cases


def check_supported(root, lib, models, cases, rewritten):
    proc = subprocess.run(
        [str(root / "bin/python"), "-I", str(ROOT / "tests/matrix/run_cases.py"), str(ROOT / "tests/python"), lib,
         *map(str, models + cases), "--nonzero-domain-only", *map(str, rewritten)],
        capture_output=True, text=True, cwd=VENVS,
    )
    if proc.returncode != 0:
        raise AssertionError(f"run_cases.py exited with {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    model_names = {m.name for m in models}
    rewritten_names = {f"{m.name} (nonzero domain only)" for m in rewritten}
    result["models_passed"] = sum(1 for n in result["passed"] if n in model_names)
    result["rewritten_passed"] = sum(1 for n in result["passed"] if n in rewritten_names)
    result["cases_passed"] = len(result["passed"]) - result["models_passed"] - result["rewritten_passed"]
    return result


REFUSAL = """
import json, sys, onnxruntime as ort
so = ort.SessionOptions()
try:
    so.register_custom_ops_library(sys.argv[1])
    print(json.dumps({"ort": ort.__version__, "error": None}))
except Exception as e:
    print(json.dumps({"ort": ort.__version__, "error": str(e)}))
"""


def check_refused(root, lib):
    proc = subprocess.run([str(root / "bin/python"), "-I", "-c", REFUSAL, lib], capture_output=True, text=True,
                          cwd=VENVS, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib")
    ap.add_argument("--only", default="", help="comma-separated releases (default: every one)")
    ap.add_argument("--no-table", action="store_true", help="do not rewrite docs/compatibility.md")
    args = ap.parse_args()
    lib = str(pathlib.Path(args.lib).resolve())
    wanted = [v for v in versions() if not args.only or name(v) in args.only.split(",")]
    assert wanted, f"no release of {MATRIX} matches --only {args.only}"
    VENVS.mkdir(parents=True, exist_ok=True)

    started = time.monotonic()
    # Venvs: network and unpacking, so a few at a time.
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        roots = dict(zip(wanted, pool.map(venv, wanted)))
    print(f"matrix: {len(roots)} venvs ready in {time.monotonic() - started:.0f} s", flush=True)

    models, cases = case_dirs(ROOT / "models"), sample()
    rewritten = rewritten_models(models) + library_op_cases()
    rows, failures = [], []
    for v, root in roots.items():
        t0 = time.monotonic()
        if v < MINIMUM:
            r = check_refused(root, lib)
            ok = r["error"] is not None and "1.17" in r["error"]
            rows.append((v, r, ok))
            if not ok:
                failures.append(f"{name(v)}: registration did not fail naming 1.17: {r['error']!r}")
        else:
            r = check_supported(root, lib, models, cases, rewritten)
            ok = not r["failed"] and r["models_passed"] == len(models) and r["cases_passed"] == len(cases)
            ok = ok and r["rewritten_passed"] == len(rewritten)
            if not ok:
                failures.append(f"{name(v)}: {json.dumps(r['failed'], indent=1)[:4000]}")
            fallback = r["fallback"]
            if fallback["failed"] or fallback["checked"] != len(rewritten):
                ok = False
                failures.append(f"{name(v)}: fallback functions: {fallback['checked']}/{len(rewritten)} "
                                f"checked, {json.dumps(fallback['failed'], indent=1)[:4000]}")
            problem = domain_only_problem(r["domain_only"])
            if problem:
                ok = False
                failures.append(f"{name(v)}: nonzero-domain-only registration: {problem}")
            rows.append((v, r, ok))
        print(f"matrix: onnxruntime {name(v)}: {'ok' if ok else 'FAILED'} ({time.monotonic() - t0:.1f} s)", flush=True)

    if not args.no_table and not args.only:
        write_table(rows, len(models), len(cases), len(rewritten))
        print(f"matrix: wrote {TABLE.relative_to(ROOT)}")
    print(f"matrix: {len(rows)} releases in {time.monotonic() - started:.0f} s")
    if failures:
        sys.exit("matrix FAILED:\n" + "\n".join(failures))


def domain_only_problem(d):
    """What is wrong with a release's nonzero-domain-only probe (run_cases.py), or None."""
    changed = {o: x for o, x in d["opsets"].items() if x["without"] != x["domain_only"]}
    if changed:
        return f"the released-opset check changed: {changed}"
    if d["backend_differ"]:
        return f"{len(d['backend_differ'])} backend cases differ: " + "; ".join(d["backend_differ"][:5])
    # A suite that errors everywhere would compare equal too.
    if d["backend_compared"] < 100 or d["backend_ran"] <= d["backend_compared"] // 2:
        return f"too few backend cases ran: {d['backend_ran']} of {d['backend_compared']}"
    return None


def write_table(rows, n_models, n_cases, n_rewritten):
    out = [
        "# ONNX Runtime compatibility",
        "",
        "Generated by the `matrix` stage of `scripts/test` (`tests/matrix/matrix.py`); do not edit by hand.",
        f"Each release runs in its own venv: the {n_models} bundled models and a sample of {n_cases} conformance",
        "cases (every 5th case of each element type; complex excepted, as ONNX Runtime has no complex",
        "tensors) through `libnonzero_ort.so`, compared exactly with the expected outputs.",
        "",
        "| ONNX Runtime | numpy | bundled models | conformance sample | notes | newest released opset | "
        "newest known opset | Abs at released + 1: without / with the library | nonzero domain only: "
        "Abs at released + 1, backend cases identical, rewritten models |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for v, r, ok in rows:
        if v < MINIMUM:
            first = r["error"].strip().splitlines()[0] if r["error"] else "(registered!)"
            out.append(f"| {name(v)} | | | | registration refused{'' if ok else ' WRONGLY'}: \"{first}\" | | | | |")
            continue
        cast = len(r["bf16_via_cast"])
        notes = f"{cast} bfloat16 inputs made by a Cast node (this release cannot feed bfloat16 from Python)" if cast else ""
        if not ok:
            notes = (notes + "; " if notes else "") + f"FAILED: {', '.join(sorted(r['failed']))}"
        o = r["opsets"]
        above = o["above"][str(o["released"] + 1)]
        d = r["domain_only"]
        same = d["backend_compared"] - len(d["backend_differ"])
        out.append(
            f"| {name(v)} | {r['numpy']} | {r['models_passed']}/{n_models} | {r['cases_passed']}/{n_cases} | {notes} | "
            f"{o['released']} | {o['newest']} | {above['without']} / {above['with']} | "
            f"{d['opsets'][str(o['released'] + 1)]['domain_only']}, {same}/{d['backend_compared']}, "
            f"{r['rewritten_passed']}/{n_rewritten} |"
        )
    out += [
        "",
        "`released-only`: the host's refusal of models stamped with an unreleased opset (\"ONNX Runtime only",
        "*guarantees* support for models stamped with official released onnx opset versions\").",
        "Newest known opset: the newest a model loads at with `ALLOW_RELEASED_ONNX_OPSET_ONLY=0`.",
        "`ok`: the model loads and runs. `no-op`: \"No Op registered for Abs with domain_version of N\".",
        "With the library loaded the refusal is gone on every release: the model loads (`ok`) where the",
        "host knows the opset, and finds no schema (`no-op`) where it does not. ONNX Runtime does this for",
        "any custom-op library with an op in the ONNX domain: it registers every custom-op domain's schemas",
        "for opsets 1 to 1000 (docs/deployment.md, \"The released-opset check\"). The newest released and",
        "known opsets are also in crates/onnx-adapter/src/opset.rs (`HOSTS`).",
        "",
        "Nonzero domain only: the library registered with the session config entry `nonzero.onnx_domain`",
        "= `0` (`nonzero_ort.register(so, onnx_domain=False)`), which registers nothing in the ONNX domain.",
        "The released-opset check then refuses the model as without the library, and each case of ONNX's",
        "backend node suite at an opset the release accepts gives byte-identical outputs, or the identical",
        "error, with and without the library (every case; `NONZERO_MATRIX_BACKEND_EVERY=N` samples every",
        "N-th). Rewritten models: the bundled",
        "models with every NonZero moved to `nonzero.NonZero` by `nonzero optimize --nonzero-domain`, and five",
        "real exports whose rewrite writes MaskedFill, MaskedScatter and BooleanMaskAxis, run so, compared",
        "exactly with the original's outputs. Each of them also runs with the library and without it: ONNX",
        "Runtime's profile shows the library's nodes ran with it, and the model-local functions' bodies without.",
        "",
        "Linux x86_64 only. Linux aarch64 and Windows x86_64, each on its own ONNX Runtime 1.17.3 and",
        "1.31.1: [platforms.md](platforms.md).",
        "",
    ]
    TABLE.write_text("\n".join(out))


if __name__ == "__main__":
    main()
