"""Issue 37, item 3: TopK on a count (crates/emit-static/src/padding/topk.rs, src/topk.rs).

torchvision's detectors take, per level, `s = scores[keep]; v, i = s.topk(min(K, len(s)))` and
then `idx[i]` (torch.where(keep)[0] at the picked rows). Hypothesis draws such models: 1-12
elements (the values gathered by the NonZero that the positions come from, or by a second
NonZero of the same mask, as RetinaNet), K of 1, 3, 5 or 100, `largest` 0 or 1, `sorted` 0 or 1, values from a small set with
ties, -inf and +inf (not NaN: below), and masks selecting none, some or all. Each goes through
`nonzero optimize --static` (fully static: no NonZero, a fixed k) and runs on ONNX Runtime's
built-in kernels; cut to their counts, the outputs equal the original's: the same values and
positions in the same order (for `sorted=0`, the same pairs: the static TopK sorts), and past the
counts the fill (+0 for values, -1 for positions).

The profile is CI's: derandomized, no example database, no deadline; NONZERO_DIFFERENTIAL_EXAMPLES
/ 5 examples each (at least 20), NONZERO_DIFFERENTIAL_SEED to draw others."""

import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from conftest import session
from onnx_cases import CLI, unread_nodes

EXAMPLES = max(20, int(os.environ.get("NONZERO_DIFFERENTIAL_EXAMPLES", "250")) // 5)
SEED = os.environ.get("NONZERO_DIFFERENTIAL_SEED")
PROFILE = settings(max_examples=EXAMPLES, derandomize=SEED is None, database=None, deadline=None,
                   print_blob=False, suppress_health_check=[HealthCheck.too_slow])
# No NaN: ONNX Runtime's TopK places a NaN wherever its selection algorithm leaves it (with
# sorted=0, [-inf x 11, nan] smallest 5 of the last 6 gave the NaN over a -inf), and a padding
# value sorting after a NaN does not exist; docs/static.md says so.
VALUES = (-np.inf, -1.0, 0.0, 0.5, 0.5, 2.0, np.inf)


def topk_model(n, k, largest, sorted_, opset=13, twice=False, len_of="idx"):
    """`idx = where(m)[0]; s = x[idx]; v, i = s.topk(min(k, len(idx)))`; outputs v and idx[i].
    `twice`: as torchvision's RetinaNet writes it, `s = x[m]` by a NonZero and GatherND of its own,
    and idx from a second NonZero of m (static mode reads the second as the first).
    `len_of="s"`: the length is the values' own, `min(k, s.size(0))`, as SSD's per-class TopK
    writes it (static mode reads the capacity there, padding/shapes.rs: the TopK's count is
    min(count, k))."""
    h, T = helper, TensorProto
    values = ([h.make_node("NonZero", ["m"], ["nz_s"]), h.make_node("Transpose", ["nz_s"], ["rows_s"], perm=[1, 0]),
               h.make_node("GatherND", ["x", "rows_s"], ["s"])] if twice
              else [h.make_node("Gather", ["x", "idx"], ["s"], axis=0)])
    nodes = [
        h.make_node("NonZero", ["m"], ["nz"]),
        h.make_node("Transpose", ["nz"], ["rows"], perm=[1, 0]),
        h.make_node("Squeeze", ["rows", "one"], ["idx"]),
        *values,
        h.make_node("Shape", [len_of], ["shape"]),
        h.make_node("Gather", ["shape", "zero"], ["len"], axis=0),
        h.make_node("Unsqueeze", ["len", "zero1"], ["len1"]),
        h.make_node("Concat", ["K", "len1"], ["both"], axis=0),
        h.make_node("ReduceMin", ["both"], ["kk"], keepdims=0),
        h.make_node("Reshape", ["kk", "one"], ["k"]),
        h.make_node("TopK", ["s", "k"], ["v", "i"], axis=-1, largest=largest, sorted=sorted_),
        h.make_node("Gather", ["idx", "i"], ["y"], axis=0),
    ]
    graph = h.make_graph(
        nodes, "topk_on_count",
        [h.make_tensor_value_info("x", T.FLOAT, [n]), h.make_tensor_value_info("m", T.BOOL, [n])],
        [h.make_tensor_value_info("v", T.FLOAT, [None]), h.make_tensor_value_info("y", T.INT64, [None])],
        [h.make_tensor("one", T.INT64, [1], [1]), h.make_tensor("zero", T.INT64, [], [0]),
         h.make_tensor("zero1", T.INT64, [1], [0]), h.make_tensor("K", T.INT64, [1], [k])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=7)


def make_static(model, n):
    with tempfile.TemporaryDirectory(prefix="nz-static-topk-") as work:
        src, out, rep = (os.path.join(work, f) for f in ("in.onnx", "out.onnx", "report.json"))
        onnx.save(model, src)
        done = subprocess.run([str(CLI), "optimize", "--static", "--report-json", rep, "--input-shape", f"x={n}",
                               "--input-shape", f"m={n}", src, out], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with open(rep) as f:
            return onnx.load(out), json.load(f)


@st.composite
def cases(draw):
    n = draw(st.integers(1, 12))
    k = draw(st.sampled_from([1, 3, 5, 100]))
    largest, sorted_ = draw(st.sampled_from([0, 1])), draw(st.sampled_from([0, 1]))
    twice = draw(st.booleans())
    len_of = draw(st.sampled_from(["idx", "s"]))
    x = np.array(draw(st.lists(st.sampled_from(VALUES), min_size=n, max_size=n)), np.float32)
    masks = [np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool), np.zeros(n, bool),
             np.ones(n, bool)]
    return n, k, largest, sorted_, twice, len_of, x, masks


def check(n, k, largest, sorted_, twice, len_of, x, masks):
    model = topk_model(n, k, largest, sorted_, twice=twice, len_of=len_of)
    static, report = make_static(model, n)
    assert ("duplicate" in [r["kind"] for r in report["static"]["rewrites"]]) == twice, report
    ops = {node.op_type for node in static.graph.node}
    assert "NonZero" not in ops and not report["left_nodes"], report
    assert not unread_nodes(static), unread_nodes(static)
    assert sorted(o.name for o in static.graph.output) == ["v", "v_count", "y", "y_count"]
    original, made = session(model, library=False, threads=1), session(static, library=False, threads=1)
    for m in masks:
        want_v, want_y = original.run(None, {"x": x, "m": m})
        v, y, v_count, y_count = made.run(["v", "y", "v_count", "y_count"], {"x": x, "m": m})
        assert v.dtype == np.float32 and y.dtype == np.int64 and v_count == y_count == len(want_v), (v, y, want_v)
        got_v, got_y = v[:v_count], y[:y_count]
        if not sorted_:  # ONNX Runtime's order for sorted=0 is its own; the static TopK sorts
            mine, theirs = np.argsort(got_y, kind="stable"), np.argsort(want_y, kind="stable")
            got_v, got_y, want_v, want_y = got_v[mine], got_y[mine], want_v[theirs], want_y[theirs]
        assert np.array_equal(got_y, want_y) and np.array_equal(got_v, want_v, equal_nan=True), (m, v, y, want_v, want_y)
        assert (v[v_count:] == 0).all() and not np.signbit(v[v_count:]).any() and (y[y_count:] == -1).all()


def test_topk_on_a_count_equals_onnxruntime():
    @PROFILE
    @given(case=cases())
    def prop(case):
        check(*case)

    if SEED is not None:
        prop = seed(int(SEED))(prop)
    prop()


def test_the_fixed_k_is_the_constant_bound_where_it_is_below_the_capacity():
    """min(3, len) over 10 elements: TopK's k is 3, not the capacity 10, and the outputs hold 3
    rows."""
    static, report = make_static(topk_model(10, 3, 1, 1), 10)
    (topk,) = [node for node in static.graph.node if node.op_type == "TopK"]
    inits = {t.name: onnx.numpy_helper.to_array(t) for t in static.graph.initializer}
    assert inits[topk.input[1]].tolist() == [3]
    made = session(static, library=False, threads=1)
    x = np.arange(10, dtype=np.float32)
    v, y, v_count, _ = made.run(["v", "y", "v_count", "y_count"], {"x": x, "m": np.arange(10) % 2 == 0})
    assert v.tolist() == [8.0, 6.0, 4.0] and y.tolist() == [8, 6, 4] and v_count == 3
    v, y, v_count, _ = made.run(["v", "y", "v_count", "y_count"], {"x": x, "m": np.arange(10) == 7})
    assert v.tolist() == [7.0, 0.0, 0.0] and y.tolist() == [7, -1, -1] and v_count == 1


def test_a_gather_of_other_rows_at_the_topk_indices_is_refused():
    """`x[i]` with i from a TopK over `x[idx]`: i counts positions among the selected rows, not in
    x, so the padding flow refuses it (the original reads other rows than a padded form would
    name), and the report says why."""
    model = topk_model(6, 3, 1, 1)
    model.graph.node.append(helper.make_node("Gather", ["x", "i"], ["z"], axis=0))
    model.graph.output.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [None]))
    with tempfile.TemporaryDirectory(prefix="nz-static-topk-") as work:
        src, out = os.path.join(work, "in.onnx"), os.path.join(work, "out.onnx")
        onnx.save(model, src)
        done = subprocess.run([str(CLI), "optimize", "--static", "--input-shape", "x=6", "--input-shape", "m=6",
                               src, out], capture_output=True, text=True)
    assert done.returncode != 0 and not os.path.exists(out)
    assert ("padding-unsafe (Gather -> z reads at the indices of TopK -> v rows that are not padded alike as that "
            "TopK's input (not padding-safe))") in done.stderr, done.stderr
