"""`--target rknn` and `--target litert` declare each rank-0 graph input `[1]` and reshape it to
a scalar inside (crates/emit-static/src/scalar_inputs.rs): rknn-toolkit2 2.5.0's simulator
cannot read a rank-0 input (IndexError in get_input_img, fed a scalar or a [1] array alike), and
onnx2tf 2.6.9's tf_converter gives one the shape_signature [-1]. Their form, fed `[1]`, must
equal the original fed the scalar, bit for bit; the report must say which input changed; the
generic and qnn forms keep rank 0."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import run_declared, session
from static_cases import run_static

SHAPE = (8, 32)


def mask_assign_model(scale_too=False):
    """`x[mask] = v` (v a float scalar input) as PyTorch's ts17 exporter writes it: NonZero,
    Transpose, ScatterND of v expanded to the count. With `scale_too`, a Loop of `trips` (a
    scalar input: not written out) multiplies the result by `s` (another), read from the outer
    scope."""
    nodes = [helper.make_node("NonZero", ["mask"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
             helper.make_node("Shape", ["idx"], ["idx_shape"], end=1),
             helper.make_node("Expand", ["v", "idx_shape"], ["updates"]),
             helper.make_node("ScatterND", ["x", "idx", "updates"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE)),
              helper.make_tensor_value_info("mask", TensorProto.BOOL, list(SHAPE)),
              helper.make_tensor_value_info("v", TensorProto.FLOAT, [])]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(SHAPE))]
    if scale_too:
        # `z = y * s ** trips`, `s` read from the outer scope.
        body = helper.make_graph(
            [helper.make_node("Mul", ["acc_in", "s"], ["acc_out"]),
             helper.make_node("Identity", ["cond_in"], ["cond_out"])],
            "times_s",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, list(SHAPE))],
            [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, list(SHAPE))])
        nodes.append(helper.make_node("Loop", ["trips", "", "y"], ["z"], body=body))
        inputs += [helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
                   helper.make_tensor_value_info("trips", TensorProto.INT64, [])]
        outputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, list(SHAPE)))
    graph = helper.make_graph(nodes, "mask_assign", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def declared(model):
    return {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}


def feeds(rng, case, scale_too):
    mask = {"random": rng.random(SHAPE) < 0.5, "none": np.zeros(SHAPE, bool), "all": np.ones(SHAPE, bool)}[case]
    out = {"x": rng.standard_normal(SHAPE).astype(np.float32), "mask": mask,
           "v": np.array(rng.standard_normal(), np.float32)}
    if scale_too:
        out["s"], out["trips"] = np.array(-1.5, np.float32), np.array(3, np.int64)
    return out


@pytest.mark.parametrize("target", ["rknn", "litert"])
@pytest.mark.parametrize("scale_too", [False, True], ids=["one scalar", "three scalars, one read in a Loop body"])
def test_scalar_inputs_are_declared_one_element(scale_too, target):
    model = mask_assign_model(scale_too)
    shapes = {"x": list(SHAPE), "mask": list(SHAPE), "v": []} | ({"s": [], "trips": []} if scale_too else {})
    rc, out, rknn, report = run_static(model, *[a for n, d in shapes.items()
                                                for a in ("--input-shape", f"{n}=" + ",".join(map(str, d)))],
                                       "--target", target)
    assert rc == 0, out
    scalars = ["v", "s", "trips"] if scale_too else ["v"]
    assert declared(rknn) == {"x": list(SHAPE), "mask": list(SHAPE), **{n: [1] for n in scalars}}
    lines = [r["line"] for r in report["static"]["rewrites"] if r["kind"] == "one-element-input"]
    assert len(lines) == len(scalars) and all(f"scalar input: {n} is declared [1]" in line
                                              for n, line in zip(scalars, lines)), lines
    # The Reshapes to a scalar come first; no node reads the [1] input but them.
    readers = [n for n in rknn.graph.node if set(n.input) & set(scalars)]
    assert [n.op_type for n in readers] == ["Reshape"] * len(scalars) == [n.op_type for n in rknn.graph.node[:len(scalars)]]
    rng = np.random.default_rng(7)
    original, made = session(model, library=False), session(rknn, library=False)
    for case in ("random", "none", "all"):
        f = feeds(rng, case, scale_too)
        want = original.run(None, f)
        got = run_declared(made, f)
        for w, g in zip(want, got):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert np.array_equal(g.view(np.uint32), w.view(np.uint32)), case
    if scale_too:  # the Loop stays, and its body reads the scalar, not the [1] input
        (loop,) = [n for n in rknn.graph.node if n.op_type == "Loop"]
        body_reads = {i for n in loop.attribute[0].g.node for i in n.input}
        assert "s" not in body_reads and "s/scalar" in body_reads, body_reads


@pytest.mark.parametrize("target", [None, "qnn"])
def test_other_targets_keep_scalar_inputs(target):
    args = ["--input-shape", f"x={SHAPE[0]},{SHAPE[1]}", "--input-shape", f"mask={SHAPE[0]},{SHAPE[1]}",
            "--input-shape", "v="] + (["--target", target] if target else [])
    rc, out, static, report = run_static(mask_assign_model(), *args)
    assert rc == 0, out
    assert declared(static)["v"] == []
    assert not [r for r in report["static"]["rewrites"] if r["kind"] == "one-element-input"]


@pytest.mark.parametrize("target", [None, "qnn", "litert", "rknn"])
def test_a_single_value_write_reads_no_running_count(target):
    """`x[mask] = v` of one value writes v wherever the mask is (crates/emit-static/src/writes.rs,
    a period of one element): the form reads no running count (no CumSum, Gather or Mod, which
    RKNN runs on the chip's CPU), and equals the original for v finite, infinite, NaN and -0.0
    (+0.0 where written: ONNX Runtime's Where drops the sign of a zero from its middle operand),
    on random, empty and full masks."""
    model = mask_assign_model()
    args = ["--input-shape", f"x={SHAPE[0]},{SHAPE[1]}", "--input-shape", f"mask={SHAPE[0]},{SHAPE[1]}",
            "--input-shape", "v="] + (["--target", target] if target else [])
    rc, out, static, _ = run_static(model, *args)
    assert rc == 0, out
    ops = [n.op_type for n in static.graph.node]
    assert sorted(set(ops)) == ["Reshape", "Where"], ops
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(11)
    for case in ("random", "none", "all"):
        for v in (-1.5, np.inf, np.nan, -0.0):
            f = feeds(rng, case, False)
            f["v"] = np.array(v, np.float32)
            (want,), (got,) = original.run(None, f), run_declared(made, f)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.array_equal(got, want, equal_nan=True), (case, v)
            # The elements not written keep their bits.
            assert np.array_equal(got[~f["mask"]].view(np.uint32), f["x"][~f["mask"]].view(np.uint32))
