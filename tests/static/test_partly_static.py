"""The real exports that `--static` does not make fully static yet (test_exports_after.py's
STAYS_DYNAMIC), as `--static --allow-dynamic` writes them: what was folded and padded must not
change what the model computes. Each runs on ONNX Runtime 1.31.1 (whose built-in kernels run the
NonZero and NonMaxSuppression left) and equals the original on the manifest's kind of inputs
(token ids in [3, 99) with one eos ending each row, full attention, global attention on the
first token; an image in [0, 1)), and on an input that selects nothing (a blank image; an
attention mask of padding only).

Longformer selects the tokens of its global attention, and has no "nothing" case here: with no
global token (or an attention mask of padding only) ONNX Runtime 1.31.1 dies of a SIGFPE, an
integer division by zero, running the original itself.

Both run with ONNX Runtime's basic graph optimizations (constant folding, redundant nodes), and
the outputs are equal bit for bit. Its extended and layout optimizations fuse a constant into a
MatMul (a Div by a folded `sqrt(head_dim)`: BART, Longformer) or pick NCHWc Conv kernels where
the shapes are now known (FCOS, Keypoint R-CNN), which rounds the last bits differently (and may
move a keypoint's argmax to the next pixel): ONNX Runtime's choices for what the model now
states, not a change in what it computes, so they are not compared here."""

import numpy as np
import onnxruntime as ort
import pytest

import exports
from judge import compare_static, report_axes
from test_exports_after import STAYS_DYNAMIC, made

EXPORTS = [e for e in exports.exports() if e.id.startswith("real/") and e.id in STAYS_DYNAMIC]
VOCAB, EOS = 99, 2


def _run(path, feeds):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = 2
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def _feeds(export, case):
    rng = np.random.default_rng(7)
    if "image" in export.shapes:
        shape = export.shapes["image"]
        image = np.zeros(shape, np.float32) if case == "nothing" else rng.random(shape, dtype=np.float32)
        return {"image": image}
    batch, sequence = export.shapes["input_ids"]
    ids = rng.integers(3, VOCAB, (batch, sequence), dtype=np.int64)
    ids[:, -1] = EOS
    global_attention = "global_attention_mask" in export.shapes
    padding_only = case == "nothing" and not global_attention
    feeds = {"input_ids": ids, "attention_mask": np.zeros_like(ids) if padding_only else np.ones_like(ids)}
    if global_attention:
        feeds["global_attention_mask"] = np.zeros_like(ids)
        feeds["global_attention_mask"][:, 0] = case == "random"
    return feeds


CASES = [(e, case) for e in EXPORTS for case in ("random", "nothing")
         if not (case == "nothing" and "global_attention_mask" in e.shapes)]


@pytest.mark.parametrize("export, case", CASES, ids=lambda v: str(v))
def test_partly_static_outputs_are_the_originals(export, case):
    report, path = made(export)
    feeds = _feeds(export, case)
    compare_static(_run(export.path, feeds), _run(path, feeds), axes=report_axes(report))
