"""LiteRT through onnx2tf (issue 38): each static model converted by onnx2tf 2.6.9 with both its
backends (flatbuffer_direct, its default, and tf_converter) in .venv-deploy-onnx2tf, then run by
ai-edge-litert 2.3.0 in .venv-deploy-litert (their pins conflict). Conversions are cached under
build/deploy/tflite/ by the model's bytes, the backend and the converter venv's pins, as IREE's
compiles are (a failure too: `<key>.error`), in NONZERO_DEPLOY_CACHE (default
~/.cache/nonzero/deploy-tflite: keyed by content, it serves every checkout). Imports no pytest."""

import hashlib
import json
import os
import pathlib
import subprocess
import tempfile

import numpy as np

from models import BUILD, ROOT

BACKENDS = ("flatbuffer_direct", "tf_converter")
CONVERTER = ROOT / ".venv-deploy-onnx2tf"
RUNTIME = ROOT / ".venv-deploy-litert"
# Keyed by content, so one cache serves every checkout: CI's fresh clones too (docs/configuration.md).
CACHE = pathlib.Path(os.environ.get("NONZERO_DEPLOY_CACHE")
                     or pathlib.Path.home() / ".cache" / "nonzero" / "deploy-tflite")
HERE = pathlib.Path(__file__).resolve().parent
# Conversions run in this many processes at once (the machine's 2 cores).
WORKERS = 2


def _python(venv):
    python = venv / "bin" / "python"
    assert python.exists(), f"{venv} is missing: `scripts/test deploy` makes it (scripts/deploy/stage.sh)"
    return str(python)


def _key(path, backend, layout="onnx"):
    # The default layout keeps the keys that conversions before it had.
    recipe = (ROOT / "requirements" / "deploy-onnx2tf.txt").read_bytes() + backend.encode()
    recipe += b"" if layout == "onnx" else layout.encode()
    return hashlib.sha256(pathlib.Path(path).read_bytes() + recipe).hexdigest()[:24]


class Converted:
    """One conversion: `tflite` (its path) or `error` (onnx2tf's failure, first line in
    `reason`), and `seconds` (the conversion's time, when it was made)."""

    def __init__(self, key):
        self.tflite, error = CACHE / f"{key}.tflite", CACHE / f"{key}.error"
        self.error = error.read_text() if error.exists() else None
        if self.error is None and not self.tflite.exists():
            self.error = f"the converter wrote neither {key}.tflite nor {key}.error (its log: {CACHE}/convert*.log)"
        if self.error is not None:
            self.tflite = None
        meta = CACHE / f"{key}.json"
        self.seconds = json.loads(meta.read_text())["seconds"] if meta.exists() else None

    @property
    def reason(self):
        return "".join((self.error or "").splitlines()[:1])[:300]


def convert_all(jobs, layout="onnx"):
    """{(onnx path, backend): Converted} for every (onnx path, input names, backend) of `jobs`,
    converting what the cache lacks in WORKERS processes. Each model is read once: its key is
    the bytes it had then. `layout`: "onnx" keeps every input's shape, "onnx2tf" is onnx2tf's
    own (rank-3+ inputs NCW to NWC; tflite_convert.py)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    todo, keys = [], {}
    for path, inputs, backend in jobs:
        key = keys[str(path), backend] = _key(path, backend, layout)
        if any(job["tflite"] == str(CACHE / f"{key}.tflite") for job in todo):
            continue  # two forms with the same bytes
        if not (CACHE / f"{key}.tflite").exists() and not (CACHE / f"{key}.error").exists():
            todo.append({"onnx": str(path), "backend": backend, "inputs": list(inputs),
                         "tflite": str(CACHE / f"{key}.tflite"), "error": str(CACHE / f"{key}.error"),
                         "layout": layout})
    if todo:
        env = dict(os.environ, PATH=f"{CONVERTER / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                   TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
        with tempfile.TemporaryDirectory(prefix="nz-deploy-") as work:
            procs = []
            for i in range(min(WORKERS, len(todo))):
                batch = pathlib.Path(work) / f"jobs{i}.json"
                batch.write_text(json.dumps(todo[i::WORKERS]))
                log = open(CACHE / f"convert{i}.log", "w")  # noqa: SIM115 (closed below)
                procs.append((subprocess.Popen([_python(CONVERTER), str(HERE / "tflite_convert.py"), str(batch)],
                                               stdout=log, stderr=subprocess.STDOUT, env=env), log))
            for proc, log in procs:
                proc.wait()
                log.close()
    return {where: Converted(key) for where, key in keys.items()}


def run_all(jobs):
    """Runs each (tflite path, [feeds dicts]) of `jobs` on LiteRT: [(result, [outputs dicts])],
    result as tflite_run.py gives it."""
    with tempfile.TemporaryDirectory(prefix="nz-litert-") as work:
        work = pathlib.Path(work)
        spec = []
        for j, (tflite, feeds_list) in enumerate(jobs):
            feeds_paths, out_paths = [], []
            for c, feeds in enumerate(feeds_list):
                feeds_paths.append(str(work / f"in{j}_{c}.npz"))
                out_paths.append(str(work / f"out{j}_{c}.npz"))
                np.savez(feeds_paths[-1], **feeds)
            spec.append({"tflite": str(tflite), "feeds": feeds_paths, "outputs": out_paths})
        (work / "jobs.json").write_text(json.dumps(spec))
        done = subprocess.run([_python(RUNTIME), str(HERE / "tflite_run.py"), str(work / "jobs.json"),
                               str(work / "results.json")], capture_output=True, text=True,
                              env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
        assert done.returncode == 0, done.stderr[-3000:]
        results = json.loads((work / "results.json").read_text())
        out = []
        for result, job in zip(results, spec):
            outputs = []
            for path in job["outputs"]:
                outputs.append({k: v for k, v in np.load(path).items()} if os.path.exists(path) else None)
            out.append((result, outputs))
        return out


def flex_or_custom(ops):
    """The ops that are not LiteRT builtins: Flex (TensorFlow) ops and custom ops."""
    return [op for op in ops if op.startswith("Flex") or op.upper() in ("CUSTOM", "DELEGATE")]
