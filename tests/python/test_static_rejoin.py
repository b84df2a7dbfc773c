"""Issue 37: lists of different selections appended (crates/emit-static/src/rejoin.rs), as a
torchvision detector's levels: per level `idx = where(m)[0]; s = x[idx]; v, i = s.topk(min(K,
len(s))); p = idx[i]; a = anchors[p // 2]`, then `cat(v)`, `cat(p)`, `cat(a)` over the levels.

Hypothesis draws 2-3 levels of 1-8 elements, K of 1, 2 or 100, values with ties and -inf, masks
selecting none, some or all per level. Each model goes through `nonzero optimize --static`
(fully static: every level's NonZero compacted, the Concats rejoined into one selection, that
compacted too) and runs on ONNX Runtime's built-in kernels; cut to their counts, the outputs equal
the original's exactly, with the fill past them (+0 for values, -1 for int64).

The profile is CI's: derandomized, no example database, no deadline; NONZERO_DIFFERENTIAL_EXAMPLES
/ 5 examples (at least 20), NONZERO_DIFFERENTIAL_SEED to draw others."""

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
VALUES = (-np.inf, -1.0, 0.0, 0.5, 0.5, 2.0)


def levels_model(sizes, k):
    """The levels of `sizes` elements; outputs v (float), p (int64 positions), a (anchors)."""
    h, T = helper, TensorProto
    nodes, inputs, inits = [], [], [h.make_tensor("one", T.INT64, [1], [1]), h.make_tensor("zero", T.INT64, [], [0]),
                                    h.make_tensor("zero1", T.INT64, [1], [0]), h.make_tensor("K", T.INT64, [1], [k]),
                                    h.make_tensor("two", T.INT64, [], [2])]
    for j, n in enumerate(sizes):
        inputs += [h.make_tensor_value_info(f"x{j}", T.FLOAT, [n]), h.make_tensor_value_info(f"m{j}", T.BOOL, [n])]
        anchors = np.arange((n + 1) // 2, dtype=np.float32) * 10 + j
        inits.append(onnx.numpy_helper.from_array(anchors, f"anchors{j}"))
        nodes += [
            h.make_node("NonZero", [f"m{j}"], [f"nz{j}"]),
            h.make_node("Transpose", [f"nz{j}"], [f"rows{j}"], perm=[1, 0]),
            h.make_node("Squeeze", [f"rows{j}", "one"], [f"idx{j}"]),
            h.make_node("Gather", [f"x{j}", f"idx{j}"], [f"s{j}"], axis=0),
            h.make_node("Shape", [f"idx{j}"], [f"shape{j}"]),
            h.make_node("Gather", [f"shape{j}", "zero"], [f"len{j}"], axis=0),
            h.make_node("Unsqueeze", [f"len{j}", "zero1"], [f"len1_{j}"]),
            h.make_node("Concat", ["K", f"len1_{j}"], [f"both{j}"], axis=0),
            h.make_node("ReduceMin", [f"both{j}"], [f"kk{j}"], keepdims=0),
            h.make_node("Reshape", [f"kk{j}", "one"], [f"k{j}"]),
            h.make_node("TopK", [f"s{j}", f"k{j}"], [f"v{j}", f"i{j}"], axis=-1, largest=1, sorted=1),
            h.make_node("Gather", [f"idx{j}", f"i{j}"], [f"p{j}"], axis=0),
            h.make_node("Div", [f"p{j}", "two"], [f"half{j}"]),
            h.make_node("Gather", [f"anchors{j}", f"half{j}"], [f"a{j}"], axis=0),
        ]
    for out in "vpa":
        nodes.append(h.make_node("Concat", [f"{out}{j}" for j in range(len(sizes))], [out], axis=0))
    outputs = [h.make_tensor_value_info("v", T.FLOAT, [None]), h.make_tensor_value_info("p", T.INT64, [None]),
               h.make_tensor_value_info("a", T.FLOAT, [None])]
    graph = h.make_graph(nodes, "levels", inputs, outputs, inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], ir_version=7)


def make_static(model, sizes):
    with tempfile.TemporaryDirectory(prefix="nz-static-rejoin-") as work:
        src, out, rep = (os.path.join(work, f) for f in ("in.onnx", "out.onnx", "report.json"))
        onnx.save(model, src)
        shapes = [a for j, n in enumerate(sizes) for a in ("--input-shape", f"x{j}={n}", "--input-shape", f"m{j}={n}")]
        done = subprocess.run([str(CLI), "optimize", "--static", "--report-json", rep, *shapes, src, out],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with open(rep) as f:
            return onnx.load(out), json.load(f)


@st.composite
def cases(draw):
    sizes = draw(st.lists(st.integers(1, 8), min_size=2, max_size=3))
    k = draw(st.sampled_from([1, 2, 100]))
    feeds = []
    for _ in range(3):
        f = {}
        for j, n in enumerate(sizes):
            f[f"x{j}"] = np.array(draw(st.lists(st.sampled_from(VALUES), min_size=n, max_size=n)), np.float32)
            f[f"m{j}"] = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), bool)
        feeds.append(f)
    return sizes, k, feeds


def check(sizes, k, feeds):
    model = levels_model(sizes, k)
    static, report = make_static(model, sizes)
    kinds = [r["kind"] for r in report["static"]["rewrites"]]
    assert kinds.count("rejoin") == 1 and not report["left_nodes"], report
    assert "NonZero" not in {node.op_type for node in static.graph.node}
    assert not unread_nodes(static), unread_nodes(static)
    original, made = session(model, library=False, threads=1), session(static, library=False, threads=1)
    names = ["v", "p", "a", "v_count", "p_count", "a_count"]
    for f in feeds + [{**f, **{n: np.zeros_like(v) for n, v in f.items() if n.startswith("m")}} for f in feeds[:1]]:
        want = dict(zip(["v", "p", "a"], original.run(None, f)))
        got = dict(zip(names, made.run(names, f)))
        for name, fill in (("v", 0), ("p", -1), ("a", 0)):
            count = int(got[f"{name}_count"])
            assert got[name].dtype == want[name].dtype and np.array_equal(got[name][:count], want[name]), (name, got, want)
            pad = got[name][count:]
            assert (pad == fill).all() and (fill or not np.signbit(pad).any()), (name, got[name])


def test_levels_appended_equal_onnxruntime():
    @PROFILE
    @given(case=cases())
    def prop(case):
        check(*case)

    if SEED is not None:
        prop = seed(int(SEED))(prop)
    prop()
