"""Issue 38: under `--static --target qnn|litert|rknn`, a Loop of the main graph with a constant
trip count over fixed-shape work becomes its body written out once per iteration
(emit-static's fixed/loops.rs): QNN HTP runs no Loop, onnx2tf writes one as a WHILE without
data or fails on it, and rknn-toolkit2 refuses it. The form must equal the Loop exactly (dtype,
shape, values): carried values, scan outputs stacked on a new first axis (Unsqueeze as an
attribute before opset 13, an input from it), the iteration number read as data. The generic
target keeps the Loop, and so does every target where writing out could change the result or
the size: an early exit, a trip count that is not a constant or is past 256, a carried value
that changes dims."""

import pathlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import run_declared, session
from onnx_cases import assert_exact
from static_cases import run_static, static_model
from test_real_exports import host_cannot_load

PORTABLE = ("qnn", "litert", "rknn")
REAL = pathlib.Path(__file__).parents[2] / "models" / "real" / "torch_patterns"
ROWS = 5


def loop_model(opset=13, trips=ROWS, early_exit=False, trips_input=False, growing=False, cond_input=True):
    """for i in range(trips): row = x[i % ROWS]; total = total * 0.5 + row; count += (row > 0).sum();
    scan out total; written as torch writes a `for` loop (trip count, condition true, the
    body's condition an Identity of it). `early_exit`: the body's condition is `i < 2`;
    `growing`: the carried total is concatenated with itself (its dims change)."""
    body_nodes = [
        helper.make_node("Mod", ["i", "rows"], ["at"]),
        helper.make_node("Gather", ["x", "at"], ["row"], axis=0),
        helper.make_node("Mul", ["total_in", "half"], ["halved"]),
        helper.make_node("Add", ["halved", "row"], ["total_out"]),
        helper.make_node("Greater", ["row", "zero"], ["positive"]),
        helper.make_node("Cast", ["positive"], ["ones"], to=TensorProto.INT64),
        helper.make_node("ReduceSum", ["ones"], ["hits"], keepdims=0),
        helper.make_node("Add", ["count_in", "hits"], ["count_out"]),
        helper.make_node("Identity", ["total_out"], ["scanned"]),
    ]
    if early_exit:
        body_nodes.append(helper.make_node("Less", ["i", "two"], ["cond_out"]))
    else:
        body_nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    if growing:
        body_nodes[3] = helper.make_node("Concat", ["halved", "halved"], ["total_out"], axis=0)
    body = helper.make_graph(
        body_nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("total_in", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("count_in", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("total_out", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("count_out", TensorProto.INT64, []),
         helper.make_tensor_value_info("scanned", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half"),
         numpy_helper.from_array(np.array(2, np.int64), "two")])
    nodes = [helper.make_node("Constant", [], ["keep_going"], value=numpy_helper.from_array(np.array(True)))]
    inits = [numpy_helper.from_array(np.array(ROWS, np.int64), "rows"),
             numpy_helper.from_array(np.array(0, np.float32), "zero"),
             numpy_helper.from_array(np.zeros(3, np.float32), "total0"),
             numpy_helper.from_array(np.array(0, np.int64), "count0")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [ROWS, 3])]
    if trips_input:
        inputs.append(helper.make_tensor_value_info("trips", TensorProto.INT64, []))
    else:
        inits.append(numpy_helper.from_array(np.array(trips, np.int64), "trips"))
    nodes.append(helper.make_node("Loop", ["trips", "keep_going" if cond_input else "", "total0", "count0"],
                                  ["total", "count", "totals"], body=body))
    outputs = [helper.make_tensor_value_info(name, t, None)
               for name, t in (("total", TensorProto.FLOAT), ("count", TensorProto.INT64),
                               ("totals", TensorProto.FLOAT))]
    graph = helper.make_graph(nodes, "fixed_loops", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def feeds(model, trips=ROWS):
    rng = np.random.default_rng(38)
    x = {"x": rng.integers(-9, 10, (ROWS, 3)).astype(np.float32)}
    if any(i.name == "trips" for i in model.graph.input):
        x["trips"] = np.array(trips, np.int64)
    return x


def op_types(model):
    return [n.op_type for n in model.graph.node]


def assert_same_run(model, static, what, trips=ROWS):
    x = feeds(model, trips)
    want = session(model, library=False).run(None, x)
    got = run_declared(session(static, library=False), x)
    assert len(got) == len(want)
    for name, g, w in zip([o.name for o in model.graph.output], got, want):
        assert_exact(g, w, f"{what} {name}")


@pytest.mark.parametrize("opset", [11, 13, 17])
@pytest.mark.parametrize("target", PORTABLE)
def test_a_portable_target_writes_the_loop_out(target, opset):
    model = loop_model(opset)
    static, report = static_model(model, "--target", target)
    ops = op_types(static)
    assert "Loop" not in ops and ops.count("Gather") == ROWS and ops.count("Concat") == 1, ops
    lines = [r["line"] for r in report["static"]["rewrites"] if r["kind"] == "unrolled-loop"]
    assert lines == [f"fixed-shape loop: Loop -> total became its body written out {ROWS} times "
                     f"({target} takes no Loop)"]
    read = {i for n in static.graph.node for i in n.input}
    assert [t.name for t in static.graph.initializer if t.name not in read] == []  # the trip count's too
    assert_same_run(model, static, f"{target} opset {opset}")


@pytest.mark.parametrize("trips", [1, 7])
def test_every_iteration_is_written_with_its_number(trips):
    """Trip counts other than the rows: one iteration, and more than the rows (i % ROWS wraps)."""
    model = loop_model(trips=trips)
    static, _ = static_model(model, "--target", "qnn")
    assert "Loop" not in op_types(static) and op_types(static).count("Gather") == trips
    assert_same_run(model, static, f"{trips} trips")


def test_a_loop_without_a_condition_input_is_written_out():
    model = loop_model(cond_input=False)
    static, _ = static_model(model, "--target", "litert")
    assert "Loop" not in op_types(static)
    assert_same_run(model, static, "no condition input")


def declared_dims(model, name):
    (out,) = [o for o in model.graph.output if o.name == name]
    return [d.dim_value for d in out.type.tensor_type.shape.dim]


def test_the_generic_target_keeps_the_loop_and_proves_its_scan_output():
    """A Loop that runs a known number of times stacks that many rows: the inference proves
    the scan output `[trips, 3]` (rewrite-analysis's exact_trips), so the generic form is
    static with the Loop kept."""
    model = loop_model()
    static, _ = static_model(model, "--target", "generic")
    assert op_types(static).count("Loop") == 1
    assert declared_dims(static, "totals") == [ROWS, 3]
    assert_same_run(model, static, "generic")


@pytest.mark.parametrize("case", ["early_exit", "trips_input"])
def test_a_scan_output_of_an_unknown_length_stays_dynamic(case):
    returncode, text, _, _ = run_static(loop_model(**{case: True}), "--target", "generic")
    assert returncode != 0 and "'totals'" in text and "shape-not-fixed" in text, text


@pytest.mark.parametrize("target", PORTABLE)
@pytest.mark.parametrize("kept", ["early_exit", "trips_input", "too_many_trips", "growing"])
def test_a_loop_that_writing_out_could_change_is_kept(target, kept):
    model = {"early_exit": lambda: loop_model(early_exit=True),
             "trips_input": lambda: loop_model(trips_input=True),
             "too_many_trips": lambda: loop_model(trips=257),
             "growing": lambda: loop_model(growing=True)}[kept]()
    static, report = static_model(model, "--target", target, "--allow-dynamic")
    assert op_types(static).count("Loop") == 1, op_types(static)
    assert not [r for r in report["static"]["rewrites"] if r["kind"] == "unrolled-loop"]
    if kept != "growing":  # a growing total's scan output is ragged: ONNX Runtime refuses to stack it
        assert_same_run(model, static, f"{kept} {target}", trips=4)


@pytest.mark.parametrize("target", PORTABLE)
@pytest.mark.parametrize("name,shapes", [
    ("loop_count_ts17", ["x=6,3"]),
    ("loop_masked_write_ts17", ["x=6,3", "m=6,3"]),
])
def test_the_exported_loops_are_written_out(target, name, shapes):
    """`for i in range(n)` as torch's TorchScript exporter wrote it, n fixed by the input shape:
    a count of each row's nonzeros, and a masked write per row."""
    model = onnx.load(REAL / f"{name}.onnx")
    args = [a for s in shapes for a in ("--input-shape", s)]
    static, _ = static_model(model, "--target", target, *args)
    assert "Loop" not in op_types(static) and "NonZero" not in op_types(static), op_types(static)
    if host_cannot_load(model, static):  # an ONNX Runtime refusing the export's IR (asserted alike)
        return
    rng = np.random.default_rng(38)
    for trial in range(3):
        feed = {"x": rng.integers(-9, 10, (6, 3)).astype(np.float32)}
        if name == "loop_masked_write_ts17":
            feed["m"] = rng.random((6, 3)) < [0.0, 0.5, 1.0][trial]
        want = session(model, library=False).run(None, feed)
        got = session(static, library=False).run(None, feed)
        for g, w in zip(got, want):
            assert_exact(g, w, f"{name} {target} trial {trial}")
