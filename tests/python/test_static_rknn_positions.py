"""`--target rknn` computes the compacted positions on RKNN's NPU where the mask has at most
2048 elements (emit-static's positions.rs, `on_npu`): a prefix sum as a MatMul with a constant
triangle, the slots as Relu(1 - |slot - j|), the positions as a MatMul of those one-hot columns,
all in float, which RKNN runs on the NPU in float16 (exact to 2048), and the coordinates as a
MatMul of the same columns by a constant grid, and the count saturated at the capacity by a
float Min. Past 2048 the scatter form and the grid's Gather
stay. On ONNX Runtime both must give NonZero's exact coordinates and `x[mask]`'s exact values,
with -1 and +0 past the count, at and around the bound, under a capacity too. The deploy_rknn
stage runs the same forms on rknn-toolkit2's simulator."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import session
from static_cases import make_static

MASKS = ("random", "none", "all", "one", "last")


def select_model(shape):
    """Inputs x [*shape, 2] float and mask [*shape] bool; outputs `coords` = NonZero(mask) and
    `y` = x[mask] (GatherND of the transposed coordinates)."""
    nodes = [helper.make_node("NonZero", ["mask"], ["coords"]),
             helper.make_node("Transpose", ["coords"], ["rows"], perm=[1, 0]),
             helper.make_node("GatherND", ["x", "rows"], ["y"])]
    graph = helper.make_graph(
        nodes, "select",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [*shape, 2]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, list(shape))],
        [helper.make_tensor_value_info("coords", TensorProto.INT64, None),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def mask_of(shape, kind, rng):
    if kind == "random":
        return rng.random(shape) < 0.5
    mask = np.full(shape, kind == "all")
    if kind in ("one", "last"):
        mask.flat[rng.integers(mask.size) if kind == "one" else -1] = True
    return mask


@pytest.mark.parametrize(("shape", "capacity", "npu"), [
    ((3, 7), None, True), ((2048,), None, True), ((8, 256), 100, True), ((2049,), None, False),
    ((4, 5), 3, True)])
def test_rknn_positions_are_exact_on_both_sides_of_the_bound(tmp_path, shape, capacity, npu):
    path = tmp_path / "select.onnx"
    onnx.save(select_model(shape), str(path))
    code, text, static, report = make_static(path, {"x": [*shape, 2], "mask": list(shape)},
                                             capacity=capacity, target="rknn")
    assert code == 0, text
    graph = onnx.load(str(static)).graph
    ops = {n.op_type for n in graph.node}
    int32_constants = {i.name for i in graph.initializer if i.data_type == TensorProto.INT32}
    grid_gathers = [n.name for n in graph.node if n.op_type == "Gather" and n.input[0] in int32_constants]
    if npu:
        assert {"MatMul", "Relu"} <= ops and not ops & {"CumSum", "ScatterElements"}, sorted(ops)
        # The coordinates too: a MatMul of the one-hot rows, no Gather of the constant grid.
        assert not grid_gathers, grid_gathers
    else:
        assert {"CumSum", "ScatterElements"} <= ops and "Relu" not in ops, sorted(ops)
        assert grid_gathers, "past 2048 the coordinates are gathered from the grid"
    numel = int(np.prod(shape))
    cap = numel if capacity is None else min(capacity, numel)
    if npu and cap < numel:
        # The count saturated at the capacity in float (a Min), not by int64 arithmetic.
        assert "Min" in ops, sorted(ops)
    sess = session(static)
    rng = np.random.default_rng(len(shape) * 7919 + numel)
    for kind in MASKS:
        mask = mask_of(shape, kind, rng)
        x = rng.standard_normal((*shape, 2)).astype(np.float32)
        got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, {"x": x, "mask": mask})))
        want_coords = np.array(np.nonzero(mask), dtype=np.int64)[:, :cap]
        count = want_coords.shape[1]
        assert got["coords_count"].dtype == np.int64 and int(got["coords_count"]) == count, kind
        assert got["coords"].shape == (len(shape), cap), kind
        np.testing.assert_array_equal(got["coords"][:, :count], want_coords, err_msg=kind)
        assert (got["coords"][:, count:] == -1).all(), kind
        assert int(got["y_count"]) == count and got["y"].shape == (cap, 2), kind
        np.testing.assert_array_equal(got["y"][:count], x[mask][:cap], err_msg=kind)
        pad = got["y"][count:]
        assert (pad == 0).all() and not np.signbit(pad).any(), kind
