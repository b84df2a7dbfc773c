"""Issue 37, item 3: NonMaxSuppression in a fixed shape (crates/emit-static/src/nms/greedy.rs).

Hypothesis draws NonMaxSuppression models: 1-2 batches, 1-3 classes, 0-24 boxes, boxes on an
integer grid (touching, nested, equal and empty boxes, corners in either order) or in floats,
`center_point_box` 0 or 1, `max_output_boxes_per_class` absent, 0, small, large or a graph input,
an `iou_threshold` of 0, 0.3, 0.5 or 1, with or without a `score_threshold`, opsets 11 and 13.
Each goes through `nonzero optimize --static` (fully static: a greedy Loop, no NMS left) and
runs on ONNX Runtime's built-in kernels:

- with distinct scores (one -inf at most per list), its rows cut to `<output>_count` equal ONNX
  Runtime's NMS exactly, and are -1 past it;
- with tied scores, ONNX Runtime's order among equal scores is its heap's, unspecified; the static
  form takes the lower index first, checked against a NumPy greedy NMS written from ONNX
  Runtime's SuppressByIOU, in float32.

The profile is CI's: derandomized, no example database, no deadline; NONZERO_DIFFERENTIAL_EXAMPLES
/ 5 examples each (at least 20), NONZERO_DIFFERENTIAL_SEED to draw others."""

import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from conftest import session
from onnx_cases import CLI

EXAMPLES = max(20, int(os.environ.get("NONZERO_DIFFERENTIAL_EXAMPLES", "250")) // 5)
SEED = os.environ.get("NONZERO_DIFFERENTIAL_SEED")
PROFILE = settings(max_examples=EXAMPLES, derandomize=SEED is None, database=None, deadline=None,
                   print_blob=False, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
MAX_OUTPUT = (None, 0, 1, 3, 1 << 40, "input")


def nms_model(b, c, n, max_output, iou, threshold, center, opset, keep=None):
    """NonMaxSuppression's rows as the output "selected"; `keep`: only their first `keep` rows
    (`keep[:detections_per_img]`: the fixed-shape Loop stops after that many picks a list)."""
    inputs = [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [b, n, 4]),
              helper.make_tensor_value_info("scores", TensorProto.FLOAT, [b, c, n])]
    inits, names = [], ["boxes", "scores"]
    if max_output == "input":
        inputs.append(helper.make_tensor_value_info("max_output", TensorProto.INT64, [1]))
        names.append("max_output")
    elif max_output is not None:
        inits.append(helper.make_tensor("max_output", TensorProto.INT64, [1], [max_output]))
        names.append("max_output")
    else:
        names.append("")
    inits.append(helper.make_tensor("iou", TensorProto.FLOAT, [1], [iou]))
    names.append("iou")
    if threshold is not None:
        inits.append(helper.make_tensor("threshold", TensorProto.FLOAT, [1], [threshold]))
        names.append("threshold")
    nodes = [helper.make_node("NonMaxSuppression", names, ["selected" if keep is None else "all"],
                              center_point_box=center)]
    if keep is not None:
        inits += [helper.make_tensor(name, TensorProto.INT64, [1], [v]) for name, v in (("zero", 0), ("keep", keep))]
        nodes.append(helper.make_node("Slice", ["all", "zero", "keep", "zero"], ["selected"]))
    graph = helper.make_graph(nodes, "nms", inputs,
                              [helper.make_tensor_value_info("selected", TensorProto.INT64, ["k", 3])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


@st.composite
def nms_cases(draw, ties, boxes=(0, 24), keeps=(None, None, 0, 1, 3, 100)):
    b, c, n = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(*boxes))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if draw(st.booleans()):
        boxes = rng.integers(0, 12, (b, n, 4)).astype(np.float32)
    else:
        boxes = (rng.random((b, n, 4)) * 12).astype(np.float32)
    if ties:
        scores = rng.integers(0, 3, (b, c, n)).astype(np.float32) / 2
    else:
        scores = np.stack([np.stack([rng.permutation(n) for _ in range(c)]) for _ in range(b)]).astype(np.float32)
        scores = scores / max(n, 1) + 0.01
        if n and draw(st.booleans()):
            scores[..., int(rng.integers(0, n))] = -np.inf
    max_output = draw(st.sampled_from(MAX_OUTPUT))
    threshold = draw(st.sampled_from((None, 0.4)))
    model = nms_model(b, c, n, max_output, draw(st.sampled_from((0.0, 0.3, 0.5, 1.0))), threshold,
                      draw(st.integers(0, 1)), draw(st.sampled_from((11, 13))),
                      keep=draw(st.sampled_from(keeps)))
    feeds = {"boxes": boxes, "scores": scores}
    if max_output == "input":
        feeds["max_output"] = np.array([draw(st.sampled_from((-1, 0, 2, 100)))], dtype=np.int64)
    return model, feeds


def make_static(model, feeds, *extra):
    with tempfile.TemporaryDirectory(prefix="nz-static-nms-") as work:
        src, out, rep = (os.path.join(work, n) for n in ("in.onnx", "out.onnx", "report.json"))
        onnx.save(model, src)
        args = [str(CLI), "optimize", "--static", "--report-json", rep, *extra]
        for name, value in feeds.items():
            args += ["--input-shape", f"{name}=" + ",".join(str(d) for d in value.shape)]
        done = subprocess.run([*args, src, out], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with open(rep) as f:
            return onnx.load(out), json.load(f)


# What an NPU target's NMS becomes (greedy.rs's `form`): up to 128 boxes per list the unrolled
# fixed point (unrolled.rs's MAX_BOXES), past it up to 300 picks per list the unrolled picks
# (picks.rs's MAX_PICKS), and past both the Loop.
NPU_FORMS = ("unrolled greedy steps", "unrolled greedy picks", "greedy Loop")


def static_rows(model, feeds, target=None, form=None):
    """The static form's rows cut to its count; `target` ("qnn") writes an NPU form, asserted to
    be `form` (of NPU_FORMS; by default the unrolled steps up to 128 boxes per list, the picks
    past it), with a Loop only in the Loop form."""
    static, report = make_static(model, feeds, *(["--target", target] if target else []))
    lines = [r["line"] for r in report["static"]["rewrites"] if r["kind"] == "fixed-nms"]
    assert len(lines) == 1, report
    ops = {n.op_type for n in static.graph.node}
    assert "NonMaxSuppression" not in ops and [o.name for o in static.graph.output] == ["selected", "selected_count"]
    if target:
        form = form or NPU_FORMS[int(feeds["boxes"].shape[1] > 128)]
        assert form in lines[0], lines[0]
        assert ("Loop" in ops) == (form == "greedy Loop"), ops
    rows, count = session(static, library=False, threads=1).run(None, feeds)
    assert rows.dtype == np.int64 and rows.shape[1] == 3 and 0 <= count <= rows.shape[0]
    assert (rows[count:] == -1).all(), rows
    return rows[:count]


def iou_above(a, b, center, threshold):
    """ONNX Runtime's SuppressByIOU for boxes a (selected) and b, in float32."""
    f = np.float32
    if center:
        hw = (f(a[2]) / f(2), f(a[3]) / f(2), f(b[2]) / f(2), f(b[3]) / f(2))
        x1 = (f(a[0]) - hw[0], f(a[0]) + hw[0])
        x2 = (f(b[0]) - hw[2], f(b[0]) + hw[2])
        y1 = (f(a[1]) - hw[1], f(a[1]) + hw[1])
        y2 = (f(b[1]) - hw[3], f(b[1]) + hw[3])
    else:
        x1, x2 = (min(a[1], a[3]), max(a[1], a[3])), (min(b[1], b[3]), max(b[1], b[3]))
        y1, y2 = (min(a[0], a[2]), max(a[0], a[2])), (min(b[0], b[2]), max(b[0], b[2]))
    ix = (max(x1[0], x2[0]), min(x1[1], x2[1]))
    iy = (max(y1[0], y2[0]), min(y1[1], y2[1]))
    if ix[1] <= ix[0] or iy[1] <= iy[0]:
        return False
    inter = f(ix[1] - ix[0]) * f(iy[1] - iy[0])
    area1 = f(x1[1] - x1[0]) * f(y1[1] - y1[0])
    area2 = f(x2[1] - x2[0]) * f(y2[1] - y2[0])
    union = f(area1 + area2) - inter
    if inter <= 0 or area1 <= 0 or area2 <= 0 or union <= 0:
        return False
    return f(inter / union) > f(threshold)


def reference(boxes, scores, max_output, iou, threshold, center):
    """Greedy NMS, the lower index first among equal scores."""
    out = []
    b_, c_, n = scores.shape
    for b in range(b_):
        for c in range(c_):
            order = sorted(range(n), key=lambda i: (-scores[b, c, i], i))
            kept = []
            for i in order:
                if threshold is not None and not scores[b, c, i] > np.float32(threshold):
                    continue
                if len(kept) >= max_output:
                    break
                if not any(iou_above(boxes[b, k], boxes[b, i], center, iou) for k in kept):
                    kept.append(i)
            out += [(b, c, k) for k in kept]
    return np.array(out, dtype=np.int64).reshape(-1, 3)


def check(model, feeds, ties, target=None):
    rows = static_rows(model, feeds, target)
    if not ties:
        (want,) = session(model, library=False, threads=1).run(None, feeds)
        assert np.array_equal(rows, want), (rows, want)
        return
    node = model.graph.node[0]
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    keep = int(inits["keep"][0]) if "keep" in inits else None
    max_output = feeds.get("max_output", inits.get("max_output", np.array([0])))[0]
    threshold = inits["threshold"][0] if "threshold" in inits else None
    center = next((a.i for a in node.attribute if a.name == "center_point_box"), 0)
    want = reference(feeds["boxes"], feeds["scores"], max(int(max_output), 0), inits["iou"][0], threshold, center)
    assert np.array_equal(rows, want[:keep]), (rows, want[:keep])


def run_property(ties, target=None, **draws):
    @PROFILE
    @given(case=nms_cases(ties, **draws))
    def prop(case):
        check(*case, ties, target)

    if SEED is not None:
        prop = seed(int(SEED))(prop)
    prop()


def test_fixed_nms_equals_onnxruntime_on_distinct_scores():
    run_property(ties=False)


def test_fixed_nms_takes_the_lower_index_first_among_equal_scores():
    run_property(ties=True)


@pytest.mark.parametrize("target", ["qnn", "rknn"])
def test_unrolled_nms_of_the_npu_targets_equals_onnxruntime_on_distinct_scores(target):
    """--target qnn (as litert) and rknn (its own lowest score, float16's): the greedy steps
    unrolled, no Loop (nms/unrolled.rs)."""
    run_property(ties=False, target=target)


@pytest.mark.parametrize("target", ["qnn", "rknn"])
def test_unrolled_nms_of_the_npu_targets_takes_the_lower_index_first_among_equal_scores(target):
    run_property(ties=True, target=target)


# Past 128 boxes per list: at most 300 picks unrolled (picks.rs); every `max_output` form (a
# run-time count, 1 << 40: every box, the unrolled picks as many as the boxes).
PAST_MAX_BOXES = {"boxes": (129, 140), "keeps": (None, 0, 1, 3, 100)}


@pytest.mark.parametrize("target", ["qnn", "rknn"])
def test_unrolled_picks_of_the_npu_targets_equal_onnxruntime_on_distinct_scores(target):
    run_property(ties=False, target=target, **PAST_MAX_BOXES)


@pytest.mark.parametrize("target", ["qnn", "rknn"])
def test_unrolled_picks_of_the_npu_targets_take_the_lower_index_first_among_equal_scores(target):
    run_property(ties=True, target=target, **PAST_MAX_BOXES)


def batched_nms_model(n, tested="b"):
    """torchvision's `_batched_nms_coordinate_trick` over a selection, as TorchScript writes it:
    `b, s = boxes[m], scores[m]`; `keep = empty if b.numel() == 0 else nms(b + offsets, s)`
    (the offsets from `b.max()`), then `b[keep[:3]]`. `tested="b2"` tests the size of
    `boxes[m2]` instead, a selection that the NMS does not read."""
    h, T = helper, TensorProto

    def const(name, value, dtype=T.INT64):
        return h.make_tensor(name, dtype, [len(value)], value)

    else_nodes = [
        h.make_node("ReduceMax", ["b"], ["top"], keepdims=0),
        h.make_node("Add", ["top", "one_f"], ["top1"]),
        h.make_node("Mul", ["s", "top1"], ["offset"]),
        h.make_node("Unsqueeze", ["offset", "axis1"], ["offset_col"]),
        h.make_node("Add", ["b", "offset_col"], ["shifted"]),
        h.make_node("Unsqueeze", ["shifted", "axis0"], ["b3"]),
        h.make_node("Unsqueeze", ["s", "axes01"], ["s3"]),
        h.make_node("NonMaxSuppression", ["b3", "s3", "max_out", "iou"], ["sel"]),
        h.make_node("Gather", ["sel", "two"], ["col"], axis=1),
        h.make_node("Squeeze", ["col", "axis1"], ["kept"]),
    ]
    else_branch = h.make_graph(else_nodes, "else", [], [h.make_tensor_value_info("kept", T.INT64, [None])],
                               [const("max_out", [100]), h.make_tensor("iou", T.FLOAT, [1], [0.5]),
                                h.make_tensor("one_f", T.FLOAT, [], [1.0]), const("two", [2]),
                                const("axis0", [0]), const("axis1", [1]), const("axes01", [0, 1])])
    then_branch = h.make_graph(
        [h.make_node("Constant", [], ["none"], value=h.make_tensor("e", T.INT64, [0], []))], "then", [],
        [h.make_tensor_value_info("none", T.INT64, [0])])
    nodes = [
        h.make_node("NonZero", ["m"], ["nz"]),
        h.make_node("Transpose", ["nz"], ["rows"], perm=[1, 0]),
        h.make_node("Squeeze", ["rows", "one"], ["at"]),
        h.make_node("Gather", ["boxes", "at"], ["b"], axis=0),
        h.make_node("Gather", ["scores", "at"], ["s"], axis=0),
        *([h.make_node("NonZero", ["m2"], ["nz2"]), h.make_node("Transpose", ["nz2"], ["rows2"], perm=[1, 0]),
           h.make_node("Squeeze", ["rows2", "one"], ["at2"]), h.make_node("Gather", ["boxes", "at2"], ["b2"], axis=0)]
          if tested == "b2" else []),
        h.make_node("Shape", [tested], ["shape"]),
        h.make_node("ReduceProd", ["shape"], ["numel"], keepdims=0),
        h.make_node("Equal", ["numel", "zero"], ["empty"]),
        h.make_node("If", ["empty"], ["keep"], then_branch=then_branch, else_branch=else_branch),
        h.make_node("Slice", ["keep", "zero1", "three", "zero1"], ["first"]),
        h.make_node("Gather", ["b", "first"], ["y"], axis=0),
    ]
    graph = h.make_graph(nodes, "batched_nms",
                         [h.make_tensor_value_info("boxes", T.FLOAT, [n, 4]),
                          h.make_tensor_value_info("scores", T.FLOAT, [n]),
                          *(h.make_tensor_value_info(m, T.BOOL, [n]) for m in ["m", "m2"][:1 + (tested == "b2")])],
                         [h.make_tensor_value_info("y", T.FLOAT, [None, 4])],
                         [const("one", [1]), h.make_tensor("zero", T.INT64, [], [0]), const("zero1", [0]),
                          const("three", [3])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], ir_version=7)


def test_a_count_decided_if_over_a_selection_becomes_its_else_branch():
    """The If's size test reads the padded selection, so it cannot be folded; the else branch
    takes its place (NMS over the valid rows keeps nothing of none, as the then branch), and the
    whole model is static: the kept boxes, cut to their count, are the original's, for masks that
    select some boxes and for one that selects none (the original's then branch)."""
    n = 12
    model = batched_nms_model(n)
    feeds = {"boxes": np.zeros((n, 4), np.float32), "scores": np.zeros(n, np.float32), "m": np.zeros(n, bool)}
    static, report = make_static(model, feeds)
    kinds = [r["kind"] for r in report["static"]["rewrites"]]
    assert "count-if" in kinds and "fixed-nms" in kinds, kinds
    ops = {n.op_type for n in static.graph.node}
    assert not ops & {"If", "NonZero", "NonMaxSuppression"}, ops
    original, made = session(model, library=False, threads=1), session(static, library=False, threads=1)
    rng = np.random.default_rng(7)
    for trial in range(60):
        xy = rng.random((n, 2)).astype(np.float32) * 10
        feeds = {"boxes": np.concatenate([xy, xy + 1 + rng.random((n, 2)).astype(np.float32) * 4], axis=1),
                 "scores": rng.permutation(n).astype(np.float32) / n,
                 "m": rng.random(n) < (0.0 if trial % 5 == 0 else rng.random())}
        (want,) = original.run(None, feeds)
        got, count = made.run(None, feeds)
        assert np.array_equal(got[:count], want), (trial, got, want)
        assert (got[count:] == 0).all()


def test_an_if_testing_another_selection_is_not_taken():
    """The If tests the size of `boxes[m2]` but its NMS reads `boxes[m]`: with m2 selecting none
    the original keeps nothing even where m selects boxes, so the else branch may not take its
    place. The If stays (left dynamic) and the model written anyway still equals the original."""
    n = 12
    model = batched_nms_model(n, tested="b2")
    feeds = {"boxes": np.zeros((n, 4), np.float32), "scores": np.zeros(n, np.float32), "m": np.zeros(n, bool),
             "m2": np.zeros(n, bool)}
    static, report = make_static(model, feeds, "--allow-dynamic")
    assert "count-if" not in [r["kind"] for r in report["static"]["rewrites"]], report
    assert "If" in {n.op_type for n in static.graph.node}
    original, made = session(model, library=False, threads=1), session(static, library=False, threads=1)
    rng = np.random.default_rng(11)
    xy = rng.random((n, 2)).astype(np.float32) * 10
    feeds = {"boxes": np.concatenate([xy, xy + 2], axis=1), "scores": rng.permutation(n).astype(np.float32),
             "m": np.ones(n, bool), "m2": np.zeros(n, bool)}
    (want,) = original.run(None, feeds)
    (got, *_) = made.run(None, feeds)
    assert want.shape == (0, 4) and np.array_equal(got, want), got


@pytest.mark.parametrize("n, target, max_output", [(300, None, 1 << 40), (2100, None, 1 << 40), (128, "qnn", 1 << 40),
                                                   (129, "qnn", 1 << 40), (2100, "qnn", 300), (2100, "qnn", 301)])
def test_fixed_nms_equals_onnxruntime_on_many_boxes(n, target, max_output):
    """Many overlapping boxes: 300 take the overlaps of every pair computed once, 2,100 (past
    greedy.rs's MATRIX_ELEMENTS) each pick's row computed in its iteration; for an NPU target,
    128 the unrolled steps, 129 (past MAX_BOXES) and 2,100 with 300 picks asked the unrolled
    picks, and 301 picks (past MAX_PICKS) a Loop. Exact every way."""
    model = nms_model(1, 1, n, max_output, 0.5, None, 0, 13)
    rng = np.random.default_rng(n)
    xy = rng.random((1, n, 2)).astype(np.float32) * 300
    boxes = np.concatenate([xy, xy + 1 + rng.random((1, n, 2)).astype(np.float32) * 40], axis=2)
    feeds = {"boxes": boxes, "scores": (rng.permutation(n).astype(np.float32) / n).reshape(1, 1, n)}
    form = NPU_FORMS[2] if max_output == 301 else None
    rows = static_rows(model, feeds, target, form)
    (want,) = session(model, library=False, threads=1).run(None, feeds)
    assert len(want) > min(n // 4, max_output - 1) and np.array_equal(rows, want)
