"""Issue 37's chains for the static property test (test_static_differential.py; they are not
fused by the library target, so test_optimize_differential.py does not draw them):

- `chained_selection`: a selection of a selection, `y = x[m]; z = y[y[:, j] > t]`, as
  torchvision's score filter then `remove_small_boxes` write it: NonZero -> Transpose ->
  GatherND(x), then a column of the rows compared with a threshold -> NonZero -> Transpose ->
  GatherND(rows), with the first rows also an output or not;
- `rows_mlp_index_add`: an MoE expert as TorchScript writes it: the tokens one mask selects
  (NonZero -> Transpose -> Gather column), their rows through Gemm and an activation, weighted by
  their own gate (`w[idx]`), written back with `index_add_` (ScatterElements into zeros at the
  column expanded to the rows' shape, then Add);
- `points_off_border`: a keypoint detector's tail as dynamo writes SuperPoint's: the points of a
  2-D mask, one axis of them (a Gather of NonZero's own layout, or a Slice of width one then a
  Squeeze) compared with bounds (`lo <= r < hi`, the first as Not(r < lo)) -> NonZero ->
  Transpose, then GatherND of the points' rows (int64 coordinates) and of their values at it;
- `unbound_coordinates`: TorchScript's `i, j = m.nonzero().unbind(1)` (Longformer's global
  attention indices): SplitToSequence of the transposed coordinates into unit parts (the split
  absent, the scalar 1, or a list of ones whose parts keep the axis, then a Squeeze), each read
  by a SequenceAt at a position from the start or the end; then `x[i, j]` (the linear index over
  Flatten, reshaped to the rows) or `w[i, j] = v` (ScatterND at the columns side by side).

Shapes, densities, opsets and dim naming are drawn as chain_strategies.Builder draws them."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from onnx import numpy_helper

from chain_strategies import Builder

FLOATS = st.floats(-4, 4, width=32, allow_nan=False)


def float_const(b, name, values):
    b.inits.append(numpy_helper.from_array(np.asarray(values, np.float32), name))
    return name


@st.composite
def chained_selection(draw):
    b = Builder(draw, mismatch_ok=False)
    n, width = draw(st.integers(0, 6)), draw(st.integers(1, 3))
    b.mask("m", "bool", [n], ["n"])
    b.add_input("x", draw(hnp.arrays(np.float32, (n, width), elements=FLOATS)), ["n", "w"])
    rows = b.node("GatherND", ["x", b.transpose(b.node("NonZero", ["m"], "nz"))], "rows")
    column = b.node("Gather", [rows, b.const("j", draw(st.integers(0, width - 1)), scalar=True)], "column", axis=1)
    keep = b.node("Greater", [column, float_const(b, "threshold", draw(st.sampled_from([-1.0, 0.0, 1.5])))], "keep")
    t2 = b.node("Transpose", [b.node("NonZero", [keep], "nz2")], "t2", perm=[1, 0])
    b.node("GatherND", [rows, t2], "y")
    b.output("y", "float32")
    if draw(st.booleans()):
        b.output(rows, "float32")
    return b.chain("chained_selection", ["GatherND_rows", "GatherND_y"])


@st.composite
def rows_mlp_index_add(draw):
    b = Builder(draw, mismatch_ok=False)
    n, width, hidden = draw(st.integers(0, 6)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    b.mask("m", "bool", [n], ["n"])
    b.add_input("x", draw(hnp.arrays(np.float32, (n, width), elements=FLOATS)), ["n", "w"])
    b.add_input("gate", draw(hnp.arrays(np.float32, (n,), elements=FLOATS)), ["n"])
    weight = draw(hnp.arrays(np.float32, (hidden, width), elements=FLOATS))
    bias = draw(hnp.arrays(np.float32, (hidden,), elements=FLOATS))
    t = b.transpose(b.node("NonZero", ["m"], "nz"))
    idx = b.node("Gather", [t, b.const("zero", 0, scalar=True)], "idx", axis=1)
    tokens = b.node("Gather", ["x", idx], "tokens", axis=0)
    h = b.node("Gemm", [tokens, float_const(b, "weight", weight), float_const(b, "bias", bias)], "h", transB=1)
    act = b.node(draw(st.sampled_from(["Relu", "Sigmoid", "Tanh"])), [h], "act")
    weights = b.axes_op("Unsqueeze", b.node("Gather", ["gate", idx], "gates", axis=0), "gates_col", [1])
    scaled = b.node("Mul", [act, weights], "scaled")
    index = b.node("Expand", [b.axes_op("Unsqueeze", idx, "idx_col", [1]), b.node("Shape", [scaled], "scaled_shape")],
                   "index")
    zeros = float_const(b, "zeros", np.zeros((n, hidden), np.float32))
    written = b.node("ScatterElements", [zeros, index, scaled], "written", axis=0)
    b.node("Add", [zeros, written], "y")
    b.output("y", "float32")
    return b.chain("rows_mlp_index_add", ["Gather_tokens", "ScatterElements_written"])


@st.composite
def points_off_border(draw):
    b = Builder(draw, mismatch_ok=False)
    h, w = draw(st.integers(0, 5)), draw(st.integers(1, 5))
    b.mask("m", "bool", [h, w], ["h", "w"])
    b.add_input("x", draw(hnp.arrays(np.float32, (h, w), elements=FLOATS)), ["h", "w"])
    nz = b.node("NonZero", ["m"], "nz")
    points = b.node("Transpose", [nz], "points", perm=[1, 0])
    axis = draw(st.integers(0, 1))
    if draw(st.booleans()):
        along = b.node("Gather", [nz, b.const("axis_index", axis, scalar=True)], "along", axis=0)
    else:
        row = b.node("Slice", [nz, b.const("start", [axis]), b.const("end", [axis + 1]), b.const("slice_axes", [0])],
                     "row")
        along = b.axes_op("Squeeze", row, "along", [0])
    low, high = sorted(draw(st.lists(st.integers(-1, 6), min_size=2, max_size=2)))
    # `r >= low` as Not(r < low): GreaterOrEqual needs opset 12, and opsets from 11 are drawn.
    above = b.node("Not", [b.node("Less", [along, b.const("low", low, scalar=True)], "under")], "above")
    inside = b.node("And", [above, b.node("Less", [along, b.const("high", high, scalar=True)], "below")], "inside")
    kept = b.node("Transpose", [b.node("NonZero", [inside], "nz2")], "kept", perm=[1, 0])
    b.node("GatherND", [points, kept], "y")
    b.output("y", "int64")
    if draw(st.booleans()):
        b.node("GatherND", [b.node("GatherND", ["x", points], "values"), kept], "z")
        b.output("z", "float32")
    return b.chain("points_off_border", ["GatherND_y"])


@st.composite
def unbound_coordinates(draw):
    b = Builder(draw, mismatch_ok=False)
    rows, cols, depth = draw(st.integers(1, 4)), draw(st.integers(1, 5)), draw(st.integers(1, 3))
    b.mask("m", "bool", [rows, cols], ["r", "c"])
    t = b.transpose(b.node("NonZero", ["m"], "nz"))
    split = draw(st.sampled_from(["absent", "scalar", "ones"]))
    parts = [t] if split == "absent" else [t, b.const("split", 1 if split == "scalar" else [1, 1], scalar=split == "scalar")]
    seq = b.node("SplitToSequence", parts, "seq", axis=1, keepdims=0)
    columns = []
    for k, name in enumerate(("i", "j")):
        position = b.const(f"{name}_at", k - 2 if draw(st.booleans()) else k, scalar=True)
        part = b.node("SequenceAt", [seq, position], f"{name}_part")
        columns.append(b.axes_op("Squeeze", part, name, [1]) if split == "ones" else part)
    i, j = columns
    if draw(st.booleans()):
        b.add_input("x", draw(hnp.arrays(np.float32, (rows, cols, depth), elements=FLOATS)), ["r", "c", "d"])
        linear = b.node("Add", [j, b.node("Mul", [i, b.const("cols", cols, scalar=True)], "row_start")], "linear")
        picked = b.node("Gather", [b.node("Flatten", ["x"], "flat", axis=2), linear], "picked", axis=0)
        shape = b.node("Concat", [b.node("Shape", [linear], "n"), b.const("depth", [depth])], "picked_shape", axis=0)
        b.node("Reshape", [picked, shape], "y")
        b.output("y", "float32")
        return b.chain("unbound_coordinates", ["Gather_picked"])
    b.add_input("w", draw(hnp.arrays(np.float32, (rows, cols), elements=FLOATS)), ["r", "c"])
    b.add_input("v", draw(hnp.arrays(np.float32, (), elements=FLOATS)), [])
    ij = b.node("Concat", [b.axes_op("Unsqueeze", i, "i_col", [1]), b.axes_op("Unsqueeze", j, "j_col", [1])], "ij",
                axis=-1)
    updates = b.node("Expand", ["v", b.node("Shape", [i], "updates_shape")], "updates")
    b.node("ScatterND", ["w", ij, updates], "y")
    b.output("y", "float32")
    return b.chain("unbound_coordinates", ["ScatterND_y"], scatter="ScatterND_y")


STATIC_STRATEGIES = {s.__name__: s for s in (chained_selection, rows_mlp_index_add, points_off_border,
                                             unbound_coordinates)}
