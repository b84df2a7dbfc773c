"""Issue 38: under `--static --target qnn|litert|rknn`, an If of the main graph whose branches
are fixed-shape work becomes both branches and a Where per output (emit-static's fixed/ifs.rs):
QNN HTP runs no If, onnx2tf's flatbuffer_direct writes one as a custom op, and rknn-toolkit2
refuses it. The form must equal the If exactly (dtype, shape, values) for both conditions, read
as the If reads them; the generic target keeps the If, and so does every target where a Where
could not stand in: branches of other dims, a body of their own, or a `[1]` condition over a
scalar output (the Where would add an axis)."""

import pathlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import run_declared, session
from onnx_cases import assert_exact
from static_cases import static_model
from test_real_exports import host_cannot_load

PORTABLE = ("qnn", "litert", "rknn")
REAL = pathlib.Path(__file__).parents[2] / "models" / "real" / "torch_patterns"


def branch(name, nodes, outputs):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(o, t, None) for o, t in outputs])


def if_model(condition_dims=(), else_dims=(4, 3), nested=False, scalar_output=False):
    """y = x + v (float) and n = argmax(x) (int64) if c else x * 2 and argmin(x); the branches
    read the outer x and v, as an export's do. `else_dims`: the else branch's x is first sliced
    to these dims (other dims than the then branch's [4, 3] where they differ)."""
    then_nodes = [helper.make_node("Add", ["x", "v"], ["then_y"]),
                  helper.make_node("ArgMax", ["x"], ["then_n"], axis=1, keepdims=0)]
    else_nodes = [helper.make_node("Slice", ["x", "zeros", "ends"], ["else_x"]),
                  helper.make_node("Mul", ["else_x", "two"], ["else_y"]),
                  helper.make_node("ArgMin", ["x"], ["else_n"], axis=1, keepdims=0)]
    outputs = [("y", TensorProto.FLOAT), ("n", TensorProto.INT64)]
    if scalar_output:
        then_nodes.append(helper.make_node("ReduceMax", ["then_y"], ["then_s"], keepdims=0))
        else_nodes.append(helper.make_node("ReduceMin", ["else_y"], ["else_s"], keepdims=0))
        outputs.append(("s", TensorProto.FLOAT))
    if nested:
        inner = helper.make_node("If", ["c"], ["inner_y"],
                                 then_branch=branch("inner_then", [helper.make_node("Neg", ["else_y"], ["neg"])],
                                                    [("neg", TensorProto.FLOAT)]),
                                 else_branch=branch("inner_else", [helper.make_node("Abs", ["else_y"], ["abs"])],
                                                    [("abs", TensorProto.FLOAT)]))
        else_nodes.append(inner)
    then_outputs = [(f"then_{o}", t) for o, t in outputs]
    else_outputs = [(f"else_{o}", t) for o, t in outputs]
    if nested:
        else_outputs[0] = ("inner_y", TensorProto.FLOAT)
    node = helper.make_node("If", ["c"], [o for o, _ in outputs],
                            then_branch=branch("then", then_nodes, then_outputs),
                            else_branch=branch("else", else_nodes, else_outputs))
    inits = [onnx.numpy_helper.from_array(np.zeros(2, np.int64), "zeros"),
             onnx.numpy_helper.from_array(np.array(else_dims, np.int64), "ends"),
             onnx.numpy_helper.from_array(np.array(2, np.float32), "two")]
    inputs = [helper.make_tensor_value_info("c", TensorProto.BOOL, list(condition_dims)),
              helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
              helper.make_tensor_value_info("v", TensorProto.FLOAT, [3])]
    graph = helper.make_graph([node], "fixed_ifs", inputs,
                              [helper.make_tensor_value_info(o, t, None) for o, t in outputs], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def feeds(condition, dims):
    rng = np.random.default_rng(38)
    return {"c": np.full(dims, condition), "x": rng.integers(-9, 10, (4, 3)).astype(np.float32),
            "v": rng.integers(-9, 10, 3).astype(np.float32)}


def op_types(model):
    """The ops, but the Reshape of a rank-0 input declared [1] (litert, rknn: scalar_inputs.rs)."""
    return [n.op_type for n in model.graph.node if not n.name.endswith("/as_scalar")]


@pytest.mark.parametrize("condition_dims", [(), (1,)], ids=["scalar", "one"])
@pytest.mark.parametrize("target", PORTABLE)
def test_a_portable_target_writes_fixed_branches_as_wheres(target, condition_dims):
    model = if_model(condition_dims)
    static, report = static_model(model, "--target", target)
    assert "If" not in op_types(static) and op_types(static).count("Where") == 2, op_types(static)
    lines = [r["line"] for r in report["static"]["rewrites"] if r["kind"] == "fixed-branches"]
    assert lines == [f"fixed-shape branches: If -> y became both branches and a Where per output "
                     f"({target} takes no If)"]
    for condition in (True, False):
        x = feeds(condition, condition_dims)
        want = session(model, library=False).run(None, x)
        got = run_declared(session(static, library=False), x)
        for name, g, w in zip(("y", "n"), got, want):
            assert_exact(g, w, f"{target} c={condition} {name}")


def test_the_generic_target_keeps_the_if():
    static, _ = static_model(if_model(), "--target", "generic")
    assert op_types(static) == ["If"]


@pytest.mark.parametrize("target", PORTABLE)
@pytest.mark.parametrize("kept", ["other_dims", "nested", "one_over_scalar"])
def test_an_if_a_where_cannot_replace_is_kept(target, kept):
    model = {"other_dims": lambda: if_model(else_dims=(3, 3)),
             "nested": lambda: if_model(nested=True),
             "one_over_scalar": lambda: if_model((1,), scalar_output=True)}[kept]()
    static, report = static_model(model, "--target", target, "--allow-dynamic")
    assert op_types(static) == ["If"], op_types(static)
    assert not [r for r in report["static"]["rewrites"] if r["kind"] == "fixed-branches"]
    condition_dims = (1,) if kept == "one_over_scalar" else ()
    for condition in (True, False):
        x = feeds(condition, condition_dims)
        want = session(model, library=False).run(None, x)
        got = run_declared(session(static, library=False), x)
        for g, w in zip(got, want):
            assert_exact(g, w, f"{kept} {target} c={condition}")


@pytest.mark.parametrize("target", PORTABLE)
@pytest.mark.parametrize("exporter", ["ts17", "dynamo18"])
def test_the_exported_data_dependent_branch_is_flattened(target, exporter):
    """`y = x.clone(); if x.sum() > 0: y[m] += v` as torch exported it: the If's condition is
    computed, its then branch a masked write that --static makes a Where."""
    model = onnx.load(REAL / f"if_mask_add_{exporter}.onnx")
    static, _ = static_model(model, "--target", target, "--input-shape", "x=6,3", "--input-shape", "m=6")
    assert "If" not in op_types(static) and "NonZero" not in op_types(static), op_types(static)
    if host_cannot_load(model, static):  # 1.17.3: dynamo's IR 10, refused alike (asserted)
        return
    rng = np.random.default_rng(38)
    x = rng.integers(-9, 10, (6, 3)).astype(np.float32)
    for sign in (1, -1):  # x.sum() > 0 and not
        x = sign * np.abs(x)
        feed = {"x": x, "m": rng.random(6) < 0.5, "v": rng.integers(-9, 10, 3).astype(np.float32)}
        (want,) = session(model, library=False).run(None, feed)
        (got,) = session(static, library=False).run(None, feed)
        assert_exact(got, want, f"{exporter} {target} sign {sign}")
