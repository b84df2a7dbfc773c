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
# Faults of the toolchain that a drawn chain can meet, by a piece of their message: counted and
# printed, not failed (each is pinned on an export by expected.py too). Any other fault fails.
KNOWN = {
    "QNN_COMMON_ERROR_MEM_ALLOC": "HTP fails to allocate the graph (masked writes over tiny tensors)",
}
# Ops HTP leaves to the CPU EP for some element types the chains draw (a Gather of int64
# coordinates in column reads, a masked fill's Expand and Where): a session refused for these
# alone is counted as that known fault.
LEFT_TO_CPU = {"Gather", "Expand", "Where"}


def finite(value):
    """Float inputs rounded to fp16, with NaN and what fp16 cannot hold made 0 (HTP computes in
    fp16; how it treats NaN and infinities is not what these graphs test)."""
    value = models.fp16_representable(value)
    if value.dtype.kind == "f":
        value = np.where(np.isfinite(value), value, 0).astype(value.dtype)
    return value


def known(message):
    """The known fault a failure's message shows, or None."""
    import ast

    if message.startswith("not on QNN: "):
        try:
            ops = {op for _, op in ast.literal_eval(message[len("not on QNN: "):].split("\n")[0])}
        except (ValueError, SyntaxError):
            return None
        return f"HTP leaves {', '.join(sorted(ops))} to the CPU EP" if ops <= LEFT_TO_CPU else None
    return next((why for piece, why in KNOWN.items() if piece in message), None)


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

    feeds = {k: finite(v) for k, v in chain.feeds.items()}
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
        real = ~nan & np.isfinite(w)
        ulp = np.spacing(np.abs(w[real]).astype(np.float16)).astype(np.float32)
        assert (np.abs(g[real] - w[real]) <= ulp).all(), f"{chain.kind} {name}: {g} vs {w}"
        assert np.array_equal(g[~real & ~nan], w[~real & ~nan]), f"{chain.kind} {name}: infinities"
    return None
