"""Two selections of one count, each one's rows written at the other's coordinates, as HF
Longformer writes its global attention: the global tokens `NonZero(m)` and the local slots
`NonZero(arange(S) < s[:, None])`, `s = m.sum(1)`, hold as many elements by the mask's
arithmetic. `slots[local] = x[global]`, then `x[global] = f(slots)[local]`. Under `--static`
both are padded to one capacity and compacted together (emit-static's partners.rs), each
write's padded rows dropped by the selection whose coordinates it writes at. The rows on their
way back are regrouped by a Reshape to a constant shape and back, as TorchScript traces
`view(len(i), -1)` with `len(i)` a constant. Each static model must equal the original on ONNX
Runtime exactly, for masks with every count per row."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import session
from onnx_cases import assert_exact
from static_cases import run_static

B, S, D = 2, 6, 3


def round_trip_model(regrouped):
    """`slots = zeros(B, S, D); slots[local] = x[global]; y = x; y[global] = (2 * slots)[local]`
    over x [B, S, D]; `regrouped` sends the rows back through `view(D, -1)` and
    `view(len(global), D)`."""
    inits = [numpy_helper.from_array(np.array(v, np.int64), name) for name, v in (
        ("one", [1]), ("zero_scalar", 0), ("one_scalar", 1), ("length", S), ("zero", [0]), ("depth", [D]),
        ("regroup", [D, -1]))]
    inits.append(numpy_helper.from_array(np.zeros((B, S, D), np.float32), "zeros"))
    nodes = [
        helper.make_node("Cast", ["m"], ["m_int"], to=TensorProto.INT64),
        helper.make_node("ReduceSum", ["m_int", "one"], ["s"], keepdims=0),
        helper.make_node("Range", ["zero_scalar", "length", "one_scalar"], ["positions"]),
        helper.make_node("Unsqueeze", ["s", "one"], ["s_col"]),
        helper.make_node("Less", ["positions", "s_col"], ["slots_mask"]),
        helper.make_node("NonZero", ["m"], ["global"]),
        helper.make_node("NonZero", ["slots_mask"], ["local"]),
        helper.make_node("Transpose", ["global"], ["global_at"], perm=[1, 0]),
        helper.make_node("Transpose", ["local"], ["local_at"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "global_at"], ["rows"]),
        helper.make_node("ScatterND", ["zeros", "local_at", "rows"], ["filled"]),
        helper.make_node("Add", ["filled", "filled"], ["doubled"]),
        helper.make_node("GatherND", ["doubled", "local_at"], ["back"]),
    ]
    if regrouped:
        nodes += [
            helper.make_node("Reshape", ["back", "regroup"], ["grouped"]),
            helper.make_node("Shape", ["rows"], ["global_shape"]),
            helper.make_node("Slice", ["global_shape", "zero", "one"], ["count"]),
            helper.make_node("Concat", ["count", "depth"], ["rows_shape"], axis=0),
            helper.make_node("Reshape", ["grouped", "rows_shape"], ["updates"]),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["back"], ["updates"]))
    nodes.append(helper.make_node("ScatterND", ["x", "global_at", "updates"], ["y"]))
    graph = helper.make_graph(
        nodes, "round_trip",
        [helper.make_tensor_value_info("m", TensorProto.BOOL, [B, S]),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, S, D])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def masks(rng):
    """Every count per row, 0 to S, paired with others; one true element in all."""
    out = []
    for first in range(S + 1):
        counts = (first, rng.integers(0, S + 1))
        mask = np.zeros((B, S), bool)
        for row, count in enumerate(counts):
            mask[row, rng.choice(S, count, replace=False)] = True
        out.append(mask)
    return out


@pytest.mark.parametrize("regrouped", [False, True], ids=["rows", "regrouped"])
def test_rows_written_at_each_others_coordinates_equal_the_originals(regrouped):
    model = round_trip_model(regrouped)
    returncode, text, static, report = run_static(model)
    assert returncode == 0, text
    assert not report["left_nodes"], text
    compacted = [r["line"] for r in report["static"]["rewrites"] if r["kind"] == "fixed-capacity"]
    assert len(compacted) == 2 and all(f"[2, {B * S}]" in line for line in compacted), compacted
    assert "NonZero" not in [n.op_type for n in static.graph.node]
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(5)
    for mask in masks(rng):
        # The second row's count may be 0 where the first's is: the original's Reshape of no
        # rows to `[D, -1]` fails (as Longformer's does with no global token).
        if regrouped and not mask.any():
            continue
        feeds = {"m": mask, "x": rng.standard_normal((B, S, D)).astype(np.float32)}
        (want,) = original.run(None, feeds)
        (got,) = made.run(None, feeds)
        assert_exact(got, want, f"mask {mask.astype(int)}")
