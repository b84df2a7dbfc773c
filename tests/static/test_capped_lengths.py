"""A length computed from values, run to a capacity (crate::capped, issue 37 item 4): VITS's
frames (`arange(max(sum of predicted durations))`) under `--static --capacity waveform=N`, run
on ONNX Runtime against the dynamic original, for every case of cases.py.

- With ONNX Runtime's graph optimizations off on both sides, the waveform cut to
  `waveform_count` equals the original's bit for bit, past it every sample is +0, and the count
  is the original's length: each Conv and ConvTranspose over the padded frames reads their
  padding as zero, which is the original's own padding at its end. (With them on, ONNX Runtime
  fuses the static graph otherwise: test_exports_after.py judges it up to rounding.) The one
  exception is an utterance of one frame (the all-padding case: the durations are clamped to
  at least 1): ONNX Runtime's Conv computes a length-1 input with another kernel than the
  capacity's frames, which rounds the last bits otherwise (1e-8 in the flows): equal up to
  rounding there.
- Under a capacity shorter than the waveform, the count saturates at it, and the samples the
  cut frames cannot reach (more than the decoder's reach before the cut) are the original's.
- Without a capacity the refusal names the output and the option.
- Longformer's global slots (`arange(max(m.sum(1)))`, a length the shapes bound: the sequence
  length) with its two selections of one count, the global tokens and the local slots, each
  written at the other's coordinates (crate::partners): fully static with no capacity, and
  equal to the original up to rounding (test_exports_after.py's ROUNDING says why) for global
  tokens of every count per row, attention padding included.
- The fuzz seed capped_frames_conv (`arange(max(lengths))` as frames through a Conv and a
  ConvTranspose, at `--capacity 20`): equal bit for bit with every optimization on, past the
  capacity too up to the ConvTranspose's reach."""

import numpy as np
import onnxruntime as ort
import pytest

import cases
import exports
import judge
from judge import ROOT

VITS = next(e for e in exports.exports() if e.id == "real/vits_ts17.onnx")
LONGFORMER = next(e for e in exports.exports() if e.id == "real/longformer_ts17.onnx")
VALID = [c for c in cases.CASES if not cases.invalid(VITS, c)]
# Samples per frame (the decoder's upsampling, 8 x 2), and how far a cut frame reaches back,
# in samples: the flows' and decoder's convolutions, ample.
HOP, REACH = 16, 1024


def _session(path):
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def _run(session, feeds):
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def _static(tmp_path, capacity):
    out = tmp_path / "vits_static.onnx"
    report = judge.static_model(VITS.path, out, VITS.shapes, {"waveform": capacity})
    assert report["returncode"] == 0, report["stderr"][:2000]
    assert not report["left_nodes"], report["left_nodes"]
    kinds = [r["kind"] for r in report["static"]["rewrites"]]
    assert "capped-length" in kinds, kinds
    assert judge.report_axes(report) == {"waveform": 1}, report["static"]["count_outputs"]
    return out


def test_vits_frames_at_a_capacity_are_the_originals_bit_for_bit(tmp_path):
    original, static = _session(VITS.path), _session(_static(tmp_path, 16384))
    assert [o.shape for o in static.get_outputs()][0] == [2, 16384]
    lengths = set()
    for case in VALID:
        feeds = cases.feeds(VITS, case)
        want, got = _run(original, feeds), _run(static, feeds)
        count = int(got["waveform_count"])
        assert count == want["waveform"].shape[1], (case, count, want["waveform"].shape)
        if count == HOP:
            np.testing.assert_allclose(got["waveform"][:, :count], want["waveform"], rtol=1e-5, atol=1e-6)
        else:
            assert np.array_equal(got["waveform"][:, :count], want["waveform"]), case
        tail = got["waveform"][:, count:]
        assert not tail.any() and not np.signbit(tail).any(), case
        assert np.array_equal(got["sequence_lengths"], want["sequence_lengths"]), case
        lengths.add(count)
    # The cases predict lengths of their own, most of many frames; the capacity is none of them.
    assert len(lengths - {HOP}) > 1 and max(lengths) < 16384, lengths


def test_vits_past_its_capacity_keeps_the_samples_the_cut_cannot_reach(tmp_path):
    capacity = 2048
    original, static = _session(VITS.path), _session(_static(tmp_path, capacity))
    cut = 0
    for case in VALID:
        feeds = cases.feeds(VITS, case)
        want, got = _run(original, feeds), _run(static, feeds)
        length = want["waveform"].shape[1]
        count = int(got["waveform_count"])
        assert count == min(length, capacity), (case, count, length)
        if length > capacity:
            cut += 1
            kept = capacity - REACH
            assert np.array_equal(got["waveform"][:, :kept], want["waveform"][:, :kept]), case
        elif count > HOP:
            assert np.array_equal(got["waveform"][:, :count], want["waveform"]), case
    assert cut, "no case is longer than the capacity: the saturation went untested"


def test_vits_without_a_capacity_names_the_output_and_the_option(tmp_path):
    report = judge.static_model(VITS.path, tmp_path / "never.onnx", VITS.shapes)
    assert report["returncode"] != 0
    assert "give --capacity waveform=N" in report["stderr"], report["stderr"][:2000]
    assert not (tmp_path / "never.onnx").exists()


@pytest.mark.parametrize("capacity", [0, -3])
def test_a_capacity_below_one_is_refused(tmp_path, capacity):
    report = judge.static_model(VITS.path, tmp_path / "never.onnx", VITS.shapes, {"waveform": capacity})
    assert report["returncode"] != 0
    assert "must be at least 1" in report["stderr"] or "positive" in report["stderr"], report["stderr"]


def test_frames_through_a_conv_and_a_conv_transpose_at_every_length(tmp_path):
    seed = (ROOT / "fuzz" / "seeds" / "optimize_static" / "capped_frames_conv").read_bytes()
    source, out = tmp_path / "frames.onnx", tmp_path / "frames_static.onnx"
    source.write_bytes(seed[16:])
    report = judge.static_model(source, out, {}, seed[1])
    assert report["returncode"] == 0 and not report["left_nodes"], report["stderr"]
    options = ort.SessionOptions()
    options.log_severity_level = 3
    original = ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    static = ort.InferenceSession(str(out), options, providers=["CPUExecutionProvider"])
    for lengths in ([3, 5], [1, 1], [7, 7], [2, 9], [10, 2], [12, 4], [40, 1]):
        feeds = {"lengths": np.array(lengths, np.int64)}
        (want,), (got, count) = original.run(None, feeds), static.run(None, feeds)
        count = int(count)
        assert got.shape == (2, 1, 20) and count == min(2 * max(lengths), 20), (lengths, count)
        # Past the capacity (10 frames), the last 3 samples reach the cut frames.
        kept = count if 2 * max(lengths) <= 20 else count - 3
        assert np.array_equal(got[..., :kept], want[..., :kept]), lengths
        assert not got[..., count:].any(), lengths
    # No frame at all: the original's Conv refuses an empty input; the static model counts 0.
    (got, count) = static.run(None, {"lengths": np.zeros(2, np.int64)})
    assert int(count) == 0 and not got.any()


def test_longformer_global_tokens_of_every_count_are_the_originals(tmp_path):
    """The cases of cases.py give every row the same one global token. Here the rows' counts
    differ (0 to 16 per row; never 0 in every row: the original dies of a SIGFPE there), some
    global tokens fall in the attention's padding, so the slots past a row's own count, the
    padding past the most of any row, the joined softmax's middle segment and the two
    selections' padded rows are all exercised."""
    out = tmp_path / "longformer_static.onnx"
    report = judge.static_model(LONGFORMER.path, out, LONGFORMER.shapes)
    assert report["returncode"] == 0 and not report["left_nodes"], report["stderr"][-3000:]
    compacted = [r["line"] for r in report["static"]["rewrites"] if r["kind"] == "fixed-capacity"]
    assert [t.split()[3].rsplit("/", 1)[1] for t in compacted] == ["NonZero_16", "NonZero_17"], compacted
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    original = ort.InferenceSession(str(LONGFORMER.path), options, providers=["CPUExecutionProvider"])
    static = ort.InferenceSession(str(out), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(37)
    batch, sequence = LONGFORMER.shapes["input_ids"]
    counts = set()
    for trial in range(24):
        feeds = cases.feeds(LONGFORMER, "random")
        per_row = [[1, sequence], [0, 5], [sequence, 0]][trial] if trial < 3 else rng.integers(0, sequence + 1, batch)
        g = np.zeros((batch, sequence), np.int64)
        for row, count in enumerate(per_row):
            g[row, rng.choice(sequence, count, replace=False)] = 1
        attention = np.ones_like(g)
        if trial % 3 == 2 and trial > 2:
            attention[:, rng.integers(sequence // 2, sequence):] = 0
        if not (g * attention).any():
            g[0, 0] = 1
        feeds.update(global_attention_mask=g, attention_mask=attention)
        counts.update((g * attention).sum(1).tolist())
        (want,), (got,) = original.run(None, feeds), static.run(None, feeds)
        assert got.shape == want.shape == (batch, sequence, 32)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=str(g))
    assert {0, 1, sequence} <= counts and len(counts) > 6, counts
