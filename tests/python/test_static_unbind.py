"""TorchScript's `unbind` of coordinates (`i, j = mask.nonzero().unbind(1)`; Longformer's global
attention indices): SplitToSequence of the `[n, 2]` coordinates into unit parts, each read by a
SequenceAt at a constant position (emit-static's sequences.rs reads each as a Gather of one
column). Then `x[i, j]` (the linear index over Flatten, as TorchScript writes it) and
`w[i, j] = 0` (ScatterND at the columns put back side by side) become fully static.

Both split forms ONNX Runtime gives different shapes: a scalar split of 1 with keepdims=0 (each
part squeezed, as TorchScript writes it) and a 1-D split of ones (each part keeps the axis,
then a Squeeze). The static model must equal the original exactly on ONNX Runtime, cut to its
counts, with +0 past them."""


import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import assert_exact, unread_nodes
from static_cases import run_static, static_model

ROWS, COLS, DEPTH = 4, 5, 3


def unbind_model(split):
    """`x[i, j]` and `w[i, j] = 0` with `i, j` the unbound coordinates of m."""
    inits = [numpy_helper.from_array(np.array(COLS, np.int64), "cols"),
             numpy_helper.from_array(np.array([DEPTH], np.int64), "depth"),
             numpy_helper.from_array(np.array(0, np.int64), "first"),
             numpy_helper.from_array(np.array(1, np.int64), "second"),
             numpy_helper.from_array(np.array([-1], np.int64), "last_axis"),
             numpy_helper.from_array(np.array(0.0, np.float32), "zero")]
    parts = ["t"]
    if split == "scalar":
        inits.append(numpy_helper.from_array(np.array(1, np.int64), "split"))
        parts.append("split")
    else:
        inits.append(numpy_helper.from_array(np.array([1, 1], np.int64), "split"))
        parts.append("split")
    nodes = [
        helper.make_node("NonZero", ["m"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["t"], perm=[1, 0]),
        helper.make_node("SplitToSequence", parts, ["seq"], axis=1, keepdims=0),
        helper.make_node("SequenceAt", ["seq", "first"], ["i_part"]),
        helper.make_node("SequenceAt", ["seq", "second"], ["j_part"]),
    ]
    if split == "scalar":
        nodes += [helper.make_node("Identity", ["i_part"], ["i"]),
                  helper.make_node("Identity", ["j_part"], ["j"])]
    else:
        inits.append(numpy_helper.from_array(np.array([1], np.int64), "part_axis"))
        nodes += [helper.make_node("Squeeze", ["i_part", "part_axis"], ["i"]),
                  helper.make_node("Squeeze", ["j_part", "part_axis"], ["j"])]
    nodes += [
        # x[i, j]: the row-major linear index over Flatten(x, 2), then [n, DEPTH].
        helper.make_node("Mul", ["i", "cols"], ["row_start"]),
        helper.make_node("Add", ["j", "row_start"], ["linear"]),
        helper.make_node("Flatten", ["x"], ["flat"], axis=2),
        helper.make_node("Gather", ["flat", "linear"], ["picked"], axis=0),
        helper.make_node("Shape", ["linear"], ["n"]),
        helper.make_node("Concat", ["n", "depth"], ["picked_shape"], axis=0),
        helper.make_node("Reshape", ["picked", "picked_shape"], ["y"]),
        # w[i, j] = 0: ScatterND at the columns side by side.
        helper.make_node("Unsqueeze", ["i", "last_axis"], ["i_col"]),
        helper.make_node("Unsqueeze", ["j", "last_axis"], ["j_col"]),
        helper.make_node("Concat", ["i_col", "j_col"], ["ij"], axis=-1),
        helper.make_node("Shape", ["i"], ["updates_shape"]),
        helper.make_node("Expand", ["zero", "updates_shape"], ["zeros"]),
        helper.make_node("ScatterND", ["w", "ij", "zeros"], ["z"]),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, COLS, DEPTH]),
              helper.make_tensor_value_info("w", TensorProto.FLOAT, [ROWS, COLS]),
              helper.make_tensor_value_info("m", TensorProto.BOOL, [ROWS, COLS])]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, None) for name in ("y", "z")]
    graph = helper.make_graph(nodes, "unbind", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("split", ["scalar", "ones"])
def test_unbound_coordinates_read_and_written_equal_the_originals(split):
    model = unbind_model(split)
    static, report = static_model(model)
    assert report["left_nodes"] == [] and not unread_nodes(static), report["left_nodes"]
    ops = {n.op_type for n in static.graph.node}
    assert not ops & {"NonZero", "SplitToSequence", "SequenceAt"}, ops
    kinds = [r["kind"] for r in report["static"]["rewrites"]]
    assert kinds[0] == "unbind" and "linear-index" in kinds and "masked-write" in kinds, kinds
    names = [o.name for o in static.graph.output]
    assert names == ["y", "z", "y_count"], names
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(len(split))
    masks = [np.zeros((ROWS, COLS), bool), np.ones((ROWS, COLS), bool)]
    masks += [rng.random((ROWS, COLS)) < p for p in (0.1, 0.5, 0.9) for _ in range(4)]
    for mask in masks:
        feeds = {"x": rng.standard_normal((ROWS, COLS, DEPTH)).astype(np.float32),
                 "w": rng.standard_normal((ROWS, COLS)).astype(np.float32), "m": mask}
        want_y, want_z = original.run(None, feeds)
        for _ in range(2):
            got = dict(zip(names, made.run(None, feeds)))
            count = int(got["y_count"])
            assert count == mask.sum()
            assert_exact(got["y"][:count], want_y, f"y, mask {mask.astype(int)}")
            rest = got["y"][count:]
            assert (rest == 0).all() and not np.signbit(rest).any(), rest
            assert_exact(got["z"], want_z, f"z, mask {mask.astype(int)}")
