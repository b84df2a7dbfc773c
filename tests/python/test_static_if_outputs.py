"""Issue 37: an If whose branches each return a selection as a main graph output
(`y = x[m] if c else z[k]`; emit-static's if_outputs.rs). Each branch's selection is compacted
as an output of its own; the If gains `y_count` from the branches' counts, and the shorter
branch is padded on to the longer's capacity (-1 for coordinates, +0 for values), so that `y`
has one fixed shape. A branch whose selection stays dynamic gives its own length as its count
(the model stays valid and exact; the report names the NonZero). An If whose output other
nodes read keeps its branches' selections dynamic, named."""

import json
import os
import subprocess
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import session
from onnx_cases import CLI, assert_exact, unread_nodes


def branch(name, nodes, out):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])


def rows_of(data, mask, prefix, dynamic=False):
    """data[mask] as GatherND of the transposed NonZero; `dynamic`: its row count also read
    by a Range (not padding-safe), so that the selection stays dynamic."""
    nodes = [helper.make_node("NonZero", [mask], [f"{prefix}_nz"]),
             helper.make_node("Transpose", [f"{prefix}_nz"], [f"{prefix}_t"], perm=[1, 0]),
             helper.make_node("GatherND", [data, f"{prefix}_t"], [f"{prefix}_rows"])]
    if dynamic:
        nodes += [helper.make_node("Shape", [f"{prefix}_rows"], [f"{prefix}_shape"]),
                  helper.make_node("ReduceSum", [f"{prefix}_shape"], [f"{prefix}_total"], keepdims=0),
                  helper.make_node("Cast", [f"{prefix}_total"], [f"{prefix}_len"], to=TensorProto.FLOAT),
                  helper.make_node("Add", [f"{prefix}_rows", f"{prefix}_len"], [f"{prefix}_out"])]
        return nodes, f"{prefix}_out"
    return nodes, f"{prefix}_rows"


def if_model(n_then, n_else, dynamic_else=False, read_after=False):
    then_nodes, then_out = rows_of("x", "m", "then")
    else_nodes, else_out = rows_of("z", "k", "else", dynamic=dynamic_else)
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=branch("then", then_nodes, then_out),
                              else_branch=branch("else", else_nodes, else_out))]
    out = "y"
    if read_after:
        nodes.append(helper.make_node("Neg", ["y"], ["negated"]))
        out = "negated"
    inputs = [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [n_then, 2]),
              helper.make_tensor_value_info("m", TensorProto.BOOL, [n_then]),
              helper.make_tensor_value_info("z", TensorProto.FLOAT, [n_else, 2]),
              helper.make_tensor_value_info("k", TensorProto.BOOL, [n_else])]
    graph = helper.make_graph(nodes, "if_outputs", inputs, [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def make_static(model):
    with tempfile.TemporaryDirectory(prefix="nz-static-if-") as work:
        src, out, rep = (os.path.join(work, name) for name in ("in.onnx", "out.onnx", "report.json"))
        onnx.save(model, src)
        done = subprocess.run([str(CLI), "optimize", "--static", "--allow-dynamic", "--report-json", rep, src, out],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        with open(rep) as f:
            return onnx.load(out), json.load(f)


def feeds_for(rng, n_then, n_else, case):
    m, k = rng.random(n_then) < 0.5, rng.random(n_else) < 0.5
    if case == "none":
        m[:], k[:] = False, False
    if case == "all":
        m[:], k[:] = True, True
    return {"x": rng.standard_normal((n_then, 2)).astype(np.float32), "m": m,
            "z": rng.standard_normal((n_else, 2)).astype(np.float32), "k": k}


@pytest.mark.parametrize("n_then,n_else", [(5, 5), (3, 7), (7, 2)])
def test_each_branchs_selection_is_the_ifs_padded_output(n_then, n_else):
    model = if_model(n_then, n_else)
    static, report = make_static(model)
    assert report["left_nodes"] == [] and not unread_nodes(static)
    assert report["static"]["count_outputs"] == {"y": {"count": "y_count", "axis": 0}}, report["static"]
    # Both branches fully static: both run, and a Where per output chooses (no If for NPUs).
    assert not any(n.op_type == "If" for n in static.graph.node)
    assert "branches-joined" in [r["kind"] for r in report["static"]["rewrites"]]
    (y_info,) = [o for o in static.graph.output if o.name == "y"]
    assert [d.dim_value for d in y_info.type.tensor_type.shape.dim] == [max(n_then, n_else), 2]
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(n_then * 10 + n_else)
    for case in ["none", "all"] + ["random"] * 10:
        for c in (True, False):
            feeds = {"c": np.array(c), **feeds_for(rng, n_then, n_else, case)}
            (want,) = original.run(None, feeds)
            y, count = made.run(None, feeds)
            assert y.shape == (max(n_then, n_else), 2) and int(count) == len(want)
            assert_exact(y[:count], want, f"c={c}, {case}")
            assert (y[count:] == 0).all() and not np.signbit(y[count:]).any()


def test_a_branch_left_dynamic_gives_its_own_length_as_the_count():
    model = if_model(4, 4, dynamic_else=True)
    static, report = make_static(model)
    left = [(n["op"], n["graph"], n["reason"]) for n in report["left_nodes"]]
    assert left == [("NonZero", "main/<If -> y>.else_branch", "padding-unsafe")], left
    assert [o.name for o in static.graph.output] == ["y", "y_count"]
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(5)
    for _ in range(10):
        for c in (True, False):
            feeds = {"c": np.array(c), **feeds_for(rng, 4, 4, "random")}
            (want,) = original.run(None, feeds)
            y, count = made.run(None, feeds)
            assert int(count) == len(want)
            assert_exact(y[:count], want, f"c={c}")


def test_an_if_whose_output_is_read_on_keeps_its_selections_dynamic():
    _, report = make_static(if_model(4, 4, read_after=True))
    left = [n for n in report["left_nodes"] if n["op"] == "NonZero"]
    assert len(left) == 2 and all(n["reason"] == "padding-unsafe" for n in left), left
    assert all("whose length would change" in n["detail"] for n in left), left
