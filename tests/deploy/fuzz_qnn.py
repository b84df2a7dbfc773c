"""The property-test generator's graphs (tests/python/chain_strategies.py, the chains exporters
write around NonZero) through QNN HTP (issue 38, item 5): each drawn chain whose inputs HTP
takes (float32 and bool) is made static with `--target qnn` at its drawn shapes; where nonzero's
report calls it fully static, it must run on HTP with every node on QNN and give the original's
outputs on ONNX Runtime CPU (integers exactly; floats within one fp16 ulp, on fp16-representable
inputs). Imports no pytest."""

import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx

import models
import qnn

sys.path.insert(0, str(models.ROOT / "tests" / "python"))
HTP_TYPES = (np.float32, np.bool_)


def takes(chain):
    """HTP's input types only, no empty input (nothing to judge), opset 11 or newer."""
    return (all(v.dtype.type in HTP_TYPES and v.size > 0 for v in chain.feeds.values())
            and chain.model.opset_import[0].version >= 11)


def static(chain):
    """(report, static model path) of `--static --target qnn --allow-dynamic` at the feeds'
    shapes, written under a fresh directory of build/deploy/fuzz/."""
    work = tempfile.mkdtemp(prefix="chain-", dir=models.BUILD / "fuzz")
    src, out, rep = (os.path.join(work, n) for n in ("in.onnx", "out.onnx", "report.json"))
    onnx.save(chain.model, src)
    args = [str(models.judge.CLI), "optimize", "--static", "--target", "qnn", "--allow-dynamic", "--report-json", rep]
    for name, value in chain.feeds.items():
        args += ["--input-shape", f"{name}=" + ",".join(str(d) for d in value.shape)]
    done = subprocess.run([*args, src, out], capture_output=True, text=True)
    assert done.returncode == 0, f"{chain.kind}: {done.stderr}"
    with open(rep) as f:
        return json.load(f), src, out


def judged(chain):
    """None when judged and equal, or why the chain is not judged ("not static", "the original
    fails"); raises AssertionError on a fault."""
    from contract import count_outputs, trimmed

    feeds = {k: models.fp16_representable(v) for k, v in chain.feeds.items()}
    report, src, out = static(chain)
    if report["left_nodes"]:
        return "not static"
    try:
        want = qnn.run(qnn.cpu(src), feeds)
    except Exception:  # noqa: BLE001 (a selected coordinate out of range: nothing to compare)
        return "the original fails"
    placed = qnn.Placed(out)
    got = placed.run(feeds)
    assert not placed.off_qnn(), f"{chain.kind}: not on QNN: {placed.off_qnn()}"
    axes = {name: spec["axis"] for name, spec in report["static"]["count_outputs"].items()}
    cut = trimmed({k: np.asarray(v) for k, v in got.items()}, count_outputs(got), axes)
    for name, w in want.items():
        g, w = cut[name], np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, f"{chain.kind} {name}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        if w.dtype.kind != "f":
            assert np.array_equal(g, w), f"{chain.kind} {name}: {g} vs {w}"
            continue
        nan = np.isnan(w)
        assert np.array_equal(np.isnan(g), nan), f"{chain.kind} {name}: NaN places"
        finite = ~nan & np.isfinite(w)
        ulp = np.spacing(np.abs(w[finite]).astype(np.float16)).astype(np.float32)
        assert (np.abs(g[finite] - w[finite]) <= ulp).all(), f"{chain.kind} {name}: {g} vs {w}"
        assert np.array_equal(g[~finite & ~nan], w[~finite & ~nan]), f"{chain.kind} {name}: infinities"
    return None
