"""The exports `nonzero optimize --static` is tested on (test_static.py), with fixed input
shapes and valid inputs for each: issue 25's pattern exports at their manifest's first sizes
(real_patterns.py), and models/exported with every symbolic size set to SIZE. Imports no pytest."""

import json
import pathlib
import subprocess
import tempfile

import numpy as np
import onnx

import real_patterns
from onnx_cases import CLI, ROOT

EXPORTED = ROOT / "models/exported"
# Every symbolic size of a models/exported input (their dims are named alike where they must
# agree, and any common size is valid for them).
SIZE = 6
# The mask cases: random, all false, all true, one true (real_patterns.CASES), and for float
# inputs NaN, -0.0 and a denormal mixed into random values ("specials").
CASES = real_patterns.CASES + ("specials",)
NUMPY = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.BOOL: np.bool_,
         onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}


def exports():
    """(id, path, entry or None) of every export."""
    out = [(f"exported/{p.name}", p, None) for p in sorted(EXPORTED.glob("*.onnx"))]
    out += [(f"{e['folder'].name}/{e['file']}", real_patterns.path(e), e) for e in real_patterns.EXPORTS]
    return out


def fixed_shapes(path, entry):
    """Input name -> fixed shape."""
    if entry is not None:
        sizes = entry["sizes"][0]
        return {s["name"]: list(real_patterns.shape(s, sizes)) for s in entry["inputs"]}
    model = onnx.load(path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    return {
        i.name: [d.dim_value if d.HasField("dim_value") else SIZE for d in i.type.tensor_type.shape.dim]
        for i in model.graph.input if i.name not in initializers
    }


def with_specials(value, rng):
    """Random floats with NaN, -0.0 and a denormal at random places."""
    flat = value.reshape(-1).copy()
    for special in (np.nan, -0.0, np.float32(1e-40)):
        flat[rng.integers(flat.size)] = special
    return flat.reshape(value.shape)


def feeds(path, entry, case, seed=0):
    """Valid inputs for one case (see CASES)."""
    rng = np.random.default_rng(seed)
    base = "random" if case == "specials" else case
    if entry is not None:
        out = real_patterns.inputs(entry, 0, base, seed)
    else:
        model = onnx.load(path, load_external_data=False)
        types = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
        out = {}
        for name, dims in fixed_shapes(path, None).items():
            dtype = NUMPY[types[name]]
            if dtype == np.bool_:
                out[name] = real_patterns.values({"values": "mask", "dtype": "bool"}, tuple(dims), base, rng)
            elif dtype == np.float32:
                # Uniform in [0, 1): thresholds such as `scores > 0.5` see both sides; the all-false
                # and all-true cases push every value below 0 or above 1.
                v = rng.random(dims).astype(np.float32)
                out[name] = v - 2 if base == "none" else v + 2 if base == "all" else v
            else:
                out[name] = rng.integers(0, 3, dims).astype(dtype)
    if case == "specials":
        out = {k: with_specials(v, rng) if v.dtype == np.float32 else v for k, v in out.items()}
    return out


def invalid(entry, case):
    """True where the original export fails on ONNX Runtime's own kernels (manifest)."""
    base = "random" if case == "specials" else case
    return entry is not None and base in entry.get("invalid_cases", [])


def make_static(path, shapes, allow_dynamic=False, capacity=None, target=None):
    """Runs `nonzero optimize --static`; returns (returncode, stdout+stderr, model path or None,
    report dict or None). The files live in a temporary directory kept for the caller."""
    work = pathlib.Path(tempfile.mkdtemp(prefix="nz-static-"))
    out, report = work / "static.onnx", work / "report.json"
    args = [str(CLI), "optimize", "--static", "--report-json", str(report)]
    for name, dims in shapes.items():
        args += ["--input-shape", f"{name}=" + ",".join(str(d) for d in dims)]
    if allow_dynamic:
        args.append("--allow-dynamic")
    if capacity is not None:
        args += ["--capacity", str(capacity)]
    if target is not None:
        args += ["--target", target]
    done = subprocess.run([*args, str(path), str(out)], capture_output=True, text=True)
    written = out if out.exists() else None
    parsed = json.loads(report.read_text()) if report.exists() else None
    return done.returncode, done.stdout + done.stderr, written, parsed


def run_static(model, *args):
    """A ModelProto through `nonzero optimize --static *args`: (returncode, stdout+stderr, the
    static ModelProto or None, the report dict or None)."""
    with tempfile.TemporaryDirectory(prefix="nz-static-") as work:
        src, out, report = (pathlib.Path(work) / name for name in ("in.onnx", "out.onnx", "report.json"))
        onnx.save(model, str(src))
        done = subprocess.run([str(CLI), "optimize", "--static", "--report-json", str(report), *args, str(src),
                               str(out)], capture_output=True, text=True)
        written = onnx.load(str(out)) if out.exists() else None
        parsed = json.loads(report.read_text()) if report.exists() else None
    return done.returncode, done.stdout + done.stderr, written, parsed


def static_model(model, *args):
    """(static ModelProto, report) of `run_static`, which must succeed."""
    returncode, text, written, report = run_static(model, *args)
    assert returncode == 0, text
    return written, report


def trimmed(outputs, names, count_outputs):
    """Static outputs by name, each padded one cut to its count along its padded axis; the
    `<name>_count` outputs dropped."""
    values = dict(zip(names, outputs))
    counts = {c["count"] for c in count_outputs.values()}
    result = {}
    for name, value in values.items():
        if name in counts:
            continue
        if name in count_outputs:
            spec = count_outputs[name]
            count = int(values[spec["count"]])
            value = np.take(value, np.arange(count), axis=spec["axis"])
        result[name] = value
    return result
