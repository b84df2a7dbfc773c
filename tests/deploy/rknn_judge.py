"""Rockchip's RKNN (issue 38, the `deploy_rknn` stage): each static model built for rk3588 by
rknn-toolkit2 2.5.0 in .venv-deploy-rknn (Python 3.12; it pins torch 2.4, ~5.6 GB, too heavy for
CI's default stages) with the converter's default rules, then run in the toolkit's simulator.
One process per model (rknn_build.py), WORKERS at a time. Named rknn_judge, not rknn: the
worker runs from this folder, where an rknn.py would shadow the toolkit's own `rknn` package.
Imports no pytest."""

import json
import os
import pathlib
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx

from models import BUILD, ROOT

VENV = ROOT / ".venv-deploy-rknn"
HERE = pathlib.Path(__file__).resolve().parent
LOGS = BUILD / "rknn"
# Builds run in this many processes at once (the machine's 2 cores).
WORKERS = 2
# A build and its runs; past this the model counts as failed (the converter can loop).
# NONZERO_RKNN_TIMEOUT_S raises it (the detectors' rknn forms take longer).
TIMEOUT_S = int(os.environ.get("NONZERO_RKNN_TIMEOUT_S", "300"))


# One row of the build's op table, as librknnc logs it at the end of a verbose build:
# `D RKNN: [time] 3    Cast    INT8     CPU    (1,2560,1,1)   (1,2560,1,1)   0/0/0   2   Cast:nonzero/Cast`
OP_ROW = re.compile(r"D RKNN: \[[^\]]*\]\s+\d+\s+(\w+)\s+\w+\s+(NPU|CPU)\s")


def op_table(log_text):
    """[(op type, target)] of the last op table in the log, without the Input/OutputOperators
    (they are the graph's edges, not its work)."""
    blocks, rows = [], None
    for line in log_text.splitlines():
        if re.search(r"ID\s+OpType\s+DataType\s+Target", line):
            rows = []
            blocks.append(rows)
            continue
        if rows is not None:
            match = OP_ROW.search(line)
            if match:
                rows.append([match.group(1), match.group(2)])
    last = blocks[-1] if blocks else []
    return [row for row in last if row[0] not in ("InputOperator", "OutputOperator")]


class Built:
    """One model through the toolkit: `stage` reached ("done" when it ran every case), `error`
    (its first line in `reason`), `ops` ([(op type, "NPU" | "CPU")]), `seconds` (the build's
    time), `outputs` ([{output name: array}] per case, None where the run failed) and `log`."""

    def __init__(self, result, outputs, log):
        self.stage, self.error, self.seconds = result["stage"], result["error"], result["seconds"]
        self.ops = [tuple(op) for op in op_table(log.read_text(errors="replace"))] if log.exists() else []
        self.outputs, self.log = outputs, log

    @property
    def reason(self):
        """The stage and the converter's own message: the last `SomethingError: text` line that
        is not the toolkit's re-raise (`ValueError: Traceback ...`)."""
        lines = [line.strip() for line in (self.error or "").splitlines()]
        said = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Argument)\b.*: \S", line)
                and "Traceback" not in line]
        return f"{self.stage}: {(said[-1] if said else lines[0] if lines else '')[:300]}"

    def on_npu(self):
        return sum(target == "NPU" for _, target in self.ops)

    def cpu_ops(self):
        """{op type: how many run on the chip's CPU}."""
        out = {}
        for op, target in self.ops:
            if target == "CPU":
                out[op] = out.get(op, 0) + 1
        return dict(sorted(out.items()))


def _python():
    python = VENV / "bin" / "python"
    assert python.exists(), f"{VENV} is missing: `scripts/test deploy_rknn` makes it (scripts/deploy/stage.sh)"
    return str(python)


def _graph_io(path):
    model = onnx.load(str(path), load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    inputs = [(i.name, [d.dim_value for d in i.type.tensor_type.shape.dim])
              for i in model.graph.input if i.name not in initializers]
    return inputs, [o.name for o in model.graph.output]


def build_and_run(ident, path, feeds_list, timeout_s=None):
    """Built: the model at `path` (id `ident`: names its log, build/deploy/rknn/<id>.log) built
    and run on every feeds dict of `feeds_list`, within `timeout_s` (TIMEOUT_S when None)."""
    timeout_s = timeout_s or TIMEOUT_S
    inputs, outputs = _graph_io(path)
    log = LOGS / f"{ident}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="nz-rknn-") as work:
        work = pathlib.Path(work)
        job = {"onnx": str(path), "inputs": [n for n, _ in inputs],
               "feeds": [], "outputs": [], "result": str(work / "result.json")}
        for c, feeds in enumerate(feeds_list):
            job["feeds"].append(str(work / f"in{c}.npz"))
            job["outputs"].append(str(work / f"out{c}.npz"))
            np.savez(job["feeds"][-1], **{n: feeds[n] for n, _ in inputs})
        (work / "job.json").write_text(json.dumps(job))
        try:
            # In the temporary folder: the toolkit writes its check*.onnx files to the working one.
            done = subprocess.run([_python(), str(HERE / "rknn_build.py"), str(work / "job.json")],
                                  capture_output=True, text=True, timeout=timeout_s, cwd=work)
            log.write_text(done.stdout + done.stderr)
            tail = (done.stdout + done.stderr)[-2000:]
        except subprocess.TimeoutExpired as e:
            log.write_bytes((e.stdout or b"") + (e.stderr or b""))
            done, tail = None, f"timed out after {timeout_s} s"
        result_path = work / "result.json"
        if result_path.exists():
            result = json.loads(result_path.read_text())
            log.with_suffix(".json").write_text(result_path.read_text())
        else:  # the process died (a crash in the converter's native code)
            code = "no exit code" if done is None else f"exit code {done.returncode}"
            result = {"stage": "build", "error": f"the toolkit's process died ({code}): {tail}", "ops": [],
                      "seconds": None}
        runs = []
        for out_path in job["outputs"]:
            if result["stage"] == "done" and pathlib.Path(out_path).exists():
                arrays = np.load(out_path)
                if len(arrays.files) != len(outputs):
                    result.update(stage="inference", error=f"RKNN returned {len(arrays.files)} outputs; the model "
                                  f"has {len(outputs)}: {outputs}")
                    runs.append(None)
                    continue
                runs.append({name: arrays[f"arr_{i}"] for i, name in enumerate(outputs)})
            else:
                runs.append(None)
        return Built(result, runs, log)


def build_all(jobs):
    """{ident: Built} for every (ident, onnx path, [feeds dicts]) of `jobs`, WORKERS at a time."""
    with ThreadPoolExecutor(WORKERS) as pool:
        built = list(pool.map(lambda job: build_and_run(*job), jobs))
    return {job[0]: b for job, b in zip(jobs, built)}
