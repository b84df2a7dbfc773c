"""A write at a selection's coordinates paired with whole axes, as TorchScript writes
`x[i, :, j, :] = v` for `i, j = m.nonzero().unbind(1)` (Longformer's `global_attn_scores[...] =
finfo.min` at the slots without a global token): each column reshaped to `[n, 1, 1]`, each
sliced axis a Range reshaped to its own place, all expanded to their common shape and
concatenated, the fill expanded alike. The written positions are m's true ones with every
position of the whole axes, so under `--static` the write is `Where(m[:, None, :, None], v, x)`
(nonzero-rewrite-match's writes/grid.rs, emit-static's grid_writes.rs) and the NonZero goes.
Columns on separate grid axes write their cross product instead, which that form is not: those
keep their ScatterND. Each static model must equal the original on ONNX Runtime exactly."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import assert_exact
from static_cases import run_static

B, W, S, D = 3, 2, 4, 5


def column_write_model(paired=True):
    """`y = x; y[i, :, j, :] = v` over x [B, W, S, D], `i, j` the columns of m's NonZero (m [B,
    S]): a grid [n, W, D]. `paired=False` gives i and j grid axes of their own instead, a grid
    [n, W, n, D]: the cross product of i and j (`x[i[:, None, None], :, j[:, None], :]`)."""
    inits = [numpy_helper.from_array(np.array(v, np.int64), name) for name, v in (
        ("zero", 0), ("one", 1), ("width", W), ("depth", D), ("minus_one", [-1]))]
    shapes = {"i": [-1, 1, 1], "w": [W, 1], "j": [-1, 1, 1]} if paired else \
        {"i": [-1, 1, 1, 1], "w": [W, 1, 1], "j": [-1, 1]}
    inits += [numpy_helper.from_array(np.array(shape, np.int64), f"{name}_shape") for name, shape in shapes.items()]
    nodes = [
        helper.make_node("NonZero", ["m"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["at"], perm=[1, 0]),
        helper.make_node("Gather", ["at", "zero"], ["i"], axis=1),
        helper.make_node("Gather", ["at", "one"], ["j"], axis=1),
        helper.make_node("Reshape", ["i", "i_shape"], ["i_grid"]),
        helper.make_node("Reshape", ["j", "j_shape"], ["j_grid"]),
        helper.make_node("Range", ["zero", "width", "one"], ["w_range"]),
        helper.make_node("Reshape", ["w_range", "w_shape"], ["w_grid"]),
        helper.make_node("Range", ["zero", "depth", "one"], ["d_grid"]),
        helper.make_node("Add", ["i_grid", "w_grid"], ["s1"]),
        helper.make_node("Add", ["s1", "j_grid"], ["s2"]),
        helper.make_node("Add", ["s2", "d_grid"], ["s3"]),
        helper.make_node("Shape", ["s3"], ["grid"]),
    ]
    parts = []
    for name in ("i_grid", "w_grid", "j_grid", "d_grid"):
        nodes += [helper.make_node("Expand", [name, "grid"], [f"{name}_full"]),
                  helper.make_node("Unsqueeze", [f"{name}_full", "minus_one"], [f"{name}_part"])]
        parts.append(f"{name}_part")
    nodes += [helper.make_node("Concat", parts, ["indices"], axis=-1),
              helper.make_node("Expand", ["v", "grid"], ["updates"]),
              helper.make_node("ScatterND", ["x", "indices", "updates"], ["y"])]
    graph = helper.make_graph(
        nodes, "column_write",
        [helper.make_tensor_value_info("m", TensorProto.BOOL, [B, S]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, W, S, D]),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def masks(seed):
    rng = np.random.default_rng(seed)
    out = [np.zeros((B, S), bool), np.ones((B, S), bool)]
    return out + [rng.random((B, S)) < p for p in (0.2, 0.5, 0.8) for _ in range(3)]


@pytest.mark.parametrize("paired", [True, False], ids=["paired", "cross"])
def test_a_write_at_a_selections_coordinates_with_whole_axes_equals_the_originals(paired):
    model = column_write_model(paired)
    returncode, text, static, _ = run_static(model, "--allow-dynamic")
    assert returncode == 0, text
    ops = [n.op_type for n in static.graph.node]
    if paired:
        # The write as a Where of m: no NonZero, no ScatterND left.
        assert "grid write" in text and "the coordinates of m" in text, text
        assert "NonZero" not in ops and "ScatterND" not in ops, ops
    else:
        assert "the coordinates of m" not in text, text
        assert "ScatterND" in ops, ops
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(3)
    for mask in masks(int(paired)):
        feeds = {"m": mask, "x": rng.standard_normal((B, W, S, D)).astype(np.float32),
                 "v": np.array(rng.standard_normal(), np.float32)}
        (want,) = original.run(None, feeds)
        (got,) = made.run(None, feeds)
        assert_exact(got, want, f"mask {mask.astype(int)}")
