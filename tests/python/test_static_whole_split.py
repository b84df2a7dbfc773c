"""Issue 37: a traced loop's Split of a selection (emit-static's padding/split.rs and
whole_split.rs). transformers' Mixtral loops over the experts hit; the trace unrolls the loop
for the experts it saw, as a Split of `experts_hit.nonzero()` into one row each. ONNX's Split
needs its sizes to add up to the axis, so the original runs only where exactly that many are
selected; the static model splits the first rows of the padded list there, and must equal the
original exactly. models/real/mixtral_ts17 in tests/static and test_static_real_exports.py
are the real case.

Each model: `mask` [N] bool -> NonZero -> Transpose -> Split into S single rows -> each row
Squeezed, its index read from `data` by Gather; the S picks are the outputs."""

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


def split_model(n, parts, opset):
    """The sizes are Split's input from opset 13 and its `split` attribute before."""
    inits = [helper.make_tensor("sizes", TensorProto.INT64, [parts], [1] * parts),
             helper.make_tensor("data", TensorProto.FLOAT, [n], [10.0 * i + 0.5 for i in range(n)])]
    rows = [f"row{i}" for i in range(parts)]
    if opset >= 13:
        split = helper.make_node("Split", ["rows", "sizes"], rows, axis=0)
    else:
        split = helper.make_node("Split", ["rows"], rows, axis=0, split=[1] * parts)
    nodes = [helper.make_node("NonZero", ["mask"], ["coords"]),
             helper.make_node("Transpose", ["coords"], ["rows"], perm=[1, 0]), split]
    outputs = []
    for i, row in enumerate(rows):
        if opset >= 13:
            inits.append(helper.make_tensor(f"axes{i}", TensorProto.INT64, [1], [1]))
            nodes.append(helper.make_node("Squeeze", [row, f"axes{i}"], [f"index{i}"]))
        else:
            nodes.append(helper.make_node("Squeeze", [row], [f"index{i}"], axes=[1]))
        nodes.append(helper.make_node("Gather", ["data", f"index{i}"], [f"pick{i}"], axis=0))
        outputs.append(helper.make_tensor_value_info(f"pick{i}", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "split", [helper.make_tensor_value_info("mask", TensorProto.BOOL, [n])],
                              outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def make_static(model, n, *extra):
    """The static model and report, or the failed run's stderr."""
    with tempfile.TemporaryDirectory(prefix="nz-static-split-") as work:
        src, out, rep = (os.path.join(work, name) for name in ("in.onnx", "out.onnx", "report.json"))
        onnx.save(model, src)
        done = subprocess.run([str(CLI), "optimize", "--static", "--input-shape", f"mask={n}",
                               "--report-json", rep, *extra, src, out], capture_output=True, text=True)
        if done.returncode != 0:
            assert not os.path.exists(out)
            return None, done.stderr
        with open(rep) as f:
            return onnx.load(out), json.load(f)


@pytest.mark.parametrize("opset", [11, 13, 17])
@pytest.mark.parametrize("n,parts", [(5, 4), (4, 4), (7, 1)])
def test_the_split_rows_equal_the_originals_wherever_it_runs(n, parts, opset):
    model = split_model(n, parts, opset)
    static, report = make_static(model, n)
    assert static is not None, report
    ops = [node.op_type for node in static.graph.node]
    assert "NonZero" not in ops and "Split" in ops, ops
    assert not unread_nodes(static)
    lines = [r["line"] for r in report["static"]["rewrites"] if r["kind"] == "whole-split"]
    assert len(lines) == 1 and f"splits {parts} rows" in lines[0], report["static"]["rewrites"]
    assert f"first {parts} of the {n} padded rows" in lines[0], lines
    original, made = session(model, library=False), session(static, library=False)
    rng = np.random.default_rng(n * 100 + parts * 10 + opset)
    # Every mask with exactly `parts` set (the only ones the original runs), at most 40.
    masks = []
    for _ in range(40):
        mask = np.zeros(n, dtype=bool)
        mask[rng.choice(n, parts, replace=False)] = True
        masks.append(mask)
    for mask in masks:
        expected = original.run(None, {"mask": mask})
        for _ in range(2):  # a session's later runs too
            got = made.run(None, {"mask": mask})
            for g, e in zip(got, expected):
                assert_exact(g, e, f"mask {mask.astype(int)}")
    # Any other count fails the original: the static model's parts are then not defined.
    with pytest.raises(Exception, match="(?i)split"):
        original.run(None, {"mask": np.ones(n, dtype=bool) if parts < n else np.zeros(n, dtype=bool)})


def test_a_capacity_under_the_split_rows_is_an_error_naming_both():
    static, stderr = make_static(split_model(6, 4, 13), 6, "--capacity", "3")
    assert static is None
    assert "splits 4 rows" in stderr and "at most 3" in stderr and "--capacity to 4" in stderr, stderr


def test_a_split_into_even_parts_stays_dynamic_named():
    """Split with `num_outputs` (opset 18) runs on any count: not a traced loop."""
    model = split_model(6, 2, 17)
    split = next(node for node in model.graph.node if node.op_type == "Split")
    split.input.pop()
    split.attribute.append(helper.make_attribute("num_outputs", 2))
    model.opset_import[0].version = 18
    static, stderr = make_static(model, 6)
    assert static is None and "padding-unsafe" in stderr and "Split" in stderr, stderr
