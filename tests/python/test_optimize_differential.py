"""Issue 25, item 6: differential tests of `nonzero optimize` on generated graphs. Hypothesis
draws the chains exporters write around NonZero (chain_strategies.py: gathers, column reads,
coordinates as outputs, masked writes), with random shapes, element types, densities, opsets
and dim naming, masks shorter and longer than their data included. Each model is rewritten by
the CLI, and the rewritten model must give exactly the original's outputs (dtype, shape, values
bit for bit; NaN equal to NaN at the same positions), where the original, on ONNX Runtime's
built-in kernels, is the reference:

- on ONNX Runtime with the library registered (its kernels run the `nonzero` ops);
- on ONNX Runtime without it (the model-local fallback functions run);
- on onnx.reference.ReferenceEvaluator, against the original there.

What the rewriter did not fuse must be accounted for in its report: a NonZero left, or a gather
kept, with a reason code and text, or a reader of the coordinates listed in `coordinates_used`.

Where the original fails on an input (a selected coordinate out of the data's range: valid for
the original only when every one is in range), the rewritten model must fail too, with one
exception, for masked writes only: the original's ScatterND fails when its updates are shorter
than the count (`x.masked_scatter(m, s)` with too small an s, TorchScript's `y[m] = v`), and a
rewrite of the write to Where, which broadcasts or slices the updates itself, may run there.
That is accepted only when ONNX Runtime names the chain's ScatterND and its updates in the
original's error. Where ONNX Runtime refuses an original that onnx.reference runs (one case,
`differential` says which), ONNX's semantics decide.

CI runs a fixed profile: derandomized (the same examples every run), no example database
(nothing written to the tree), no deadline. NONZERO_DIFFERENTIAL_EXAMPLES sets the examples per
chain kind (docs/configuration.md); NONZERO_DIFFERENTIAL_SEED=N runs other examples than CI's."""

import json
import os
import pathlib
import subprocess
import tempfile

import numpy as np
import onnx
import onnx.inliner
import onnxruntime as ort
import pytest
from hypothesis import HealthCheck, given, seed, settings
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from chain_strategies import STRATEGIES
from conftest import session
from onnx_cases import CLI

EXAMPLES = int(os.environ.get("NONZERO_DIFFERENTIAL_EXAMPLES", "250"))
SEED = os.environ.get("NONZERO_DIFFERENTIAL_SEED")
PROFILE = settings(
    max_examples=EXAMPLES,
    derandomize=SEED is None,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Ops that onnx.reference lacks in this onnx version, and why the reference check is not made
# for a model that has them. Empty: every op the generator writes, and every fallback body, runs
# there (onnx 1.16.2 and 1.23.2).
REFERENCE_LACKS = {}


class Gather(OpRun):
    """onnx 1.23's reference Gather (np.take). onnx 1.16's returns shape (0,) for any empty
    indices, where ONNX (and ONNX Runtime) give data.shape[:axis] + indices.shape +
    data.shape[axis + 1:]; used only where this onnx's own Gather has that defect."""

    op_domain = ""

    def _run(self, x, indices, axis=None):
        return (np.take(x, indices.astype(np.int64), axis=axis),)


def reference_fixes():
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, None)
    i = onnx.helper.make_tensor_value_info("i", onnx.TensorProto.INT64, None)
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
    graph = onnx.helper.make_graph([onnx.helper.make_node("Gather", ["x", "i"], ["y"])], "g", [x, i], [y])
    probe = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
    got = ReferenceEvaluator(probe).run(None, {"x": np.zeros((0, 2), np.float32), "i": np.zeros(0, np.int64)})
    return [] if got[0].shape == (0, 2) else [Gather]


REFERENCE_FIXES = reference_fixes()


def function_attributes_work():
    """onnx 1.16's evaluator runs a model-local function's body without the caller's attributes
    (`ref_attr_name`: BooleanMaskAxis's `axis`) and without `new_ops`; 1.23's does both. Where
    they fail, the reference evaluates models with their local functions inlined (onnx.inliner,
    which resolves the references), the same ops."""
    h = onnx.helper
    ref = h.make_attribute_ref("axis", onnx.AttributeProto.INT)
    body = h.make_node("Gather", ["X", "I"], ["Y"])
    body.attribute.append(ref)
    f = h.make_function("probe", "G", ["X", "I"], ["Y"], [body], [h.make_opsetid("", 13)], attributes=["axis"])
    x = h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, None)
    i = h.make_tensor_value_info("i", onnx.TensorProto.INT64, None)
    y = h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
    graph = h.make_graph([h.make_node("G", ["x", "i"], ["y"], domain="probe", axis=1)], "g", [x, i], [y])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13), h.make_opsetid("probe", 1)], functions=[f])
    try:
        got = ReferenceEvaluator(model).run(None, {"x": np.arange(6, dtype=np.float32).reshape(2, 3), "i": np.array([2])})
    except Exception:  # noqa: BLE001 - the defect shows as an out-of-range index along axis 0
        return False
    return got[0].tolist() == [[2.0], [5.0]]


FUNCTION_ATTRIBUTES_WORK = function_attributes_work()


def optimize(model):
    """`nonzero optimize --report-json` through the CLI: the report and the rewritten model."""
    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        onnx.save(model, str(d / "in.onnx"))
        proc = subprocess.run([str(CLI), "optimize", str(d / "in.onnx"), str(d / "out.onnx"),
                               "--report-json", str(d / "report.json")], capture_output=True, text=True)
        assert proc.returncode == 0, f"nonzero optimize refused a valid model:\n{proc.stderr}"
        return json.loads((d / "report.json").read_text()), onnx.load(str(d / "out.onnx"))


def onnx_nodes(graph, op):
    return [n for n in graph.node if n.op_type == op and n.domain in ("", "ai.onnx")]


def assert_accounted(chain, report, rewritten):
    """Every NonZero left and every coordinate reader not fused has its reason in the report."""
    for entry in report["left_nodes"]:
        assert entry["reason"] and entry["text"], f"a node left without a reason: {entry}"
    left = {e["node"] for e in report["left_nodes"]}
    nonzero_left = onnx_nodes(rewritten.graph, "NonZero")
    assert report["nonzero"] == len(onnx_nodes(chain.model.graph, "NonZero"))
    assert report["left"] == len(nonzero_left), report
    for n in nonzero_left:
        assert n.name in left, f"NonZero {n.name} left with no entry in the report: {report}"
    used = report["coordinates_used"]
    nodes = {n.name: n for n in rewritten.graph.node}
    for name in chain.readers:
        node = nodes.get(name)
        if node is None or node.domain not in ("", "ai.onnx"):
            continue  # fused: the node is gone, or is the library's op in its place
        assert nonzero_left or name in left or any(u["reader"] == name for u in used), (
            f"{node.op_type} {name} still reads the coordinates, and the report says nothing of it: {report}")
    for name in chain.coordinate_outputs:
        assert nonzero_left or any(u["op"] == "output" for u in used), (
            f"graph output {name} holds the coordinates, and coordinates_used does not list it: {report}")
    library_ops = {n.op_type for n in rewritten.graph.node if n.domain == "nonzero"}
    assert library_ops <= {f.name for f in rewritten.functions if f.domain == "nonzero"}, (
        "a library op without its fallback function")


class Outcome:
    """Outputs, or the error raised while loading (`load`) or running (`run`) the model."""

    def __init__(self, make, feeds):
        self.failed, self.error, self.outputs = None, "", None
        try:
            runner = make()
        except Exception as e:  # noqa: BLE001 - any refusal is an outcome to compare
            self.failed, self.error = "load", f"{type(e).__name__}: {e}"
            return
        try:
            self.outputs = [np.asarray(o) for o in runner.run(None, feeds)]
        except Exception as e:  # noqa: BLE001
            self.failed, self.error = "run", f"{type(e).__name__}: {e}"


def assert_exact(got, want, what):
    assert len(got) == len(want), f"{what}: {len(got)} outputs, want {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"{what}, output {i}: dtype {g.dtype}, want {w.dtype}"
        assert g.shape == w.shape, f"{what}, output {i}: shape {g.shape}, want {w.shape}"
        if w.dtype.kind == "f":
            nan = np.isnan(w)
            assert np.array_equal(np.isnan(g), nan), f"{what}, output {i}: NaN at other places\n{g}\n{w}"
            # -0.0 and 0.0 apart: the values are copied, never computed, by every form.
            same = (g == w) & (np.signbit(g) == np.signbit(w))
            assert (same | nan).all(), f"{what}, output {i}: values differ\n{g}\nwant\n{w}"
        else:
            assert np.array_equal(g, w), f"{what}, output {i}: values differ\n{g}\nwant\n{w}"


def short_updates(chain, original):
    """The original failed in the chain's ScatterND because its updates are too short: the one
    failure a masked write's rewrite may run through (module docstring)."""
    return bool(chain.scatter) and f"Name:'{chain.scatter}'" in original.error and "updates" in original.error


def compare(want, got, what, may_run=False, may_fail=False):
    """`want`: the outputs the rewritten model must give, or None where it must fail.
    `may_run`: it may run where it should fail; `may_fail`: it may fail where it should run."""
    if got.failed:
        assert want is None or may_fail, f"{what}: the original runs, the rewritten fails: {got.error}"
        return
    assert want is not None or may_run, f"{what}: the original fails, the rewritten runs: {got.outputs}"
    if want is not None:
        assert_exact(got.outputs, want, what)


def reference(model, feeds, what):
    """The model on onnx.reference; None (no check) only where REFERENCE_LACKS says why."""
    if not FUNCTION_ATTRIBUTES_WORK and model.functions:
        model = onnx.inliner.inline_local_functions(model)
    try:
        evaluator = ReferenceEvaluator(model, new_ops=REFERENCE_FIXES)
    except Exception as e:  # noqa: BLE001
        lacking = {op: why for op, why in REFERENCE_LACKS.items() if op in str(e)}
        assert lacking, f"{what}: onnx.reference cannot load the model, and REFERENCE_LACKS names no op of it: {e}"
        return None
    return Outcome(lambda: evaluator, feeds)


def differential(chain):
    report, rewritten = optimize(chain.model)
    assert_accounted(chain, report, rewritten)
    feeds, where = chain.feeds, f"ONNX Runtime {ort.__version__}"
    original = Outcome(lambda: session(chain.model, library=False, threads=1), feeds)
    assert original.failed != "load", f"the generated original does not load on {where}: {original.error}"
    ref_original = reference(chain.model, feeds, "onnx.reference, original")
    want, may_run, may_fail = original.outputs, short_updates(chain, original), False
    if ref_original is not None and (original.failed is None) != (ref_original.failed is None):
        # ONNX Runtime runs no generated original that ONNX refuses: the generator clears the
        # out-of-range entries of masks over empty data, where its gathers check no coordinate
        # (chain_strategies.Builder.mask).
        assert original.failed, f"onnx.reference refuses the original ({ref_original.error}), {where} runs it"
        # ONNX Runtime's graph optimizer drops Expand(m, Shape(x)) where m's dim is 1 and x's
        # is 0 (x declared with numbers), so ScatterND gets m's coordinates and fails
        # ("indices must be empty when an indexed data dimension has size 0"); with
        # optimizations off it runs. A rewritten model that runs must give onnx.reference's.
        assert chain.scatter and f"Name:'{chain.scatter}'" in original.error, (
            f"{where} refuses the original ({original.error}), onnx.reference runs it")
        want, may_fail = ref_original.outputs, True
    elif ref_original is not None and original.failed is None:
        assert_exact(ref_original.outputs, original.outputs, f"onnx.reference vs {where}, original")
    for library in (True, False):
        got = Outcome(lambda: session(rewritten, library=library, threads=1), feeds)
        compare(want, got, f"{where} {'with' if library else 'without'} the library", may_run, may_fail)
    ref_rewritten = reference(rewritten, feeds, "onnx.reference, rewritten")
    if ref_original is not None and ref_rewritten is not None:
        compare(ref_original.outputs, ref_rewritten, "onnx.reference", may_run)


@pytest.mark.parametrize("kind", sorted(STRATEGIES))
def test_rewritten_chains_equal_the_original(kind):
    strategy = STRATEGIES[kind]()

    @PROFILE
    @given(chain=strategy)
    def check(chain):
        differential(chain)

    if SEED is not None:
        check = seed(int(SEED))(check)
    check()
