"""Issue 25, item 3: a rewritten model runs without the library. `nonzero optimize` writes a
model-local function (domain `nonzero`, standard-op body) for every library op it uses; ONNX
Runtime without the library inlines the body, and with the library (either registration) runs
the library's kernel. Which one ran is read from ONNX Runtime's profile, not assumed."""

import re

import onnx
import onnxruntime as ort
import pytest

from conftest import LIB, assert_exact, session
from onnx_cases import nodes_that_ran
import real_exports as rx
from test_real_exports import OLD_HOST, OLD_HOST_REWRITE_REFUSALS
from test_optimize import EXPORTED, MODELS, optimize, random_inputs

# The exported models whose rewrite writes library ops (each rewrites at least one chain).
REWRITTEN = [p for p in MODELS if p.parent == EXPORTED]


def profiled_ops(model_bytes, feeds, library, onnx_domain=True):
    """The op types of the nodes ONNX Runtime's profiler saw run, and the outputs."""
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.enable_profiling = True
    if library:
        if not onnx_domain:
            so.add_session_config_entry("nonzero.onnx_domain", "0")
        so.register_custom_ops_library(str(LIB))
    s = ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])
    outputs = s.run(None, feeds)
    return {op for _, op in nodes_that_ran(s)}, outputs


def ir_too_new_for_host(model_bytes):
    try:
        session(model_bytes, library=False)
        return False
    except Exception as e:  # noqa: BLE001 - only this host limit is accepted
        if "Unsupported model IR version" in str(e):
            return True
        raise


@pytest.mark.parametrize("path", REWRITTEN, ids=lambda p: p.name)
def test_rewritten_exports_run_without_the_library_and_on_its_kernels_with_it(path, tmp_path):
    proc, out = optimize(path, tmp_path)
    assert proc.returncode == 0, proc.stderr
    rewritten = onnx.load(str(out))
    library_ops = {n.op_type for g in [rewritten.graph] for n in g.node if n.domain == "nonzero"}
    assert library_ops, "every export here rewrites a chain"
    assert {f.name for f in rewritten.functions if f.domain == "nonzero"} >= library_ops
    assert 8 <= rewritten.ir_version <= max(9, onnx.load(str(path)).ir_version)
    data = rewritten.SerializeToString()
    original = onnx.load(str(path))
    if ir_too_new_for_host(original.SerializeToString()):
        # ONNX Runtime 1.17 reads IR 9 at most; the rewrite keeps the dynamo exports' IR 10.
        with pytest.raises(Exception, match="Unsupported model IR version"):
            session(data, library=False)
        return
    feeds = random_inputs(original, 0)
    want = session(original, library=False).run(None, feeds)
    without, got = profiled_ops(data, feeds, library=False)
    assert not without & library_ops, f"{without} ran without the library"
    assert "NonZero" in without
    for i, (g, w) in enumerate(zip(got, want)):
        assert_exact(g, w, f"{path.name} without the library, output {i}")
    for onnx_domain in (True, False):
        ran, got = profiled_ops(data, feeds, library=True, onnx_domain=onnx_domain)
        assert library_ops <= ran, f"onnx_domain={onnx_domain}: the library's kernels did not run: {ran}"
        assert "GatherND" not in ran and "Compress" not in ran, ran
        for i, (g, w) in enumerate(zip(got, want)):
            assert_exact(g, w, f"{path.name} with the library (onnx_domain={onnx_domain}), output {i}")


def test_no_fallback_leaves_the_functions_out_and_the_host_refuses_the_model(tmp_path):
    path = EXPORTED / "x_mask_ts17.onnx"
    proc, out = optimize(path, tmp_path, "--no-fallback")
    assert proc.returncode == 0, proc.stderr
    rewritten = onnx.load(str(out))
    assert not rewritten.functions
    with pytest.raises(Exception, match="BooleanMask"):
        session(rewritten, library=False)


def test_opset_10_falls_back_to_compress(tmp_path):
    """At opsets 9-10 (no GatherND) BooleanMask's body is Compress along axis 0."""
    path = EXPORTED.parent / "rewrite-variants" / "where_gather_opset9.onnx"
    proc, out = optimize(path, tmp_path)
    assert proc.returncode == 0, proc.stderr
    rewritten = onnx.load(str(out))
    (f,) = [f for f in rewritten.functions if f.name == "BooleanMask"]
    assert [n.op_type for n in f.node] == ["Compress"]
    original = onnx.load(str(path))
    feeds = random_inputs(original, 1)
    want = session(original, library=False).run(None, feeds)
    ran, got = profiled_ops(rewritten.SerializeToString(), feeds, library=False)
    assert "Compress" in ran
    for i, (g, w) in enumerate(zip(got, want)):
        assert_exact(g, w, f"output {i}")


@pytest.mark.parametrize("entry", rx.EXPORTS, ids=lambda e: e["file"])
def test_rewritten_real_exports_run_without_the_library(entry, tmp_path):
    """models/real rewritten as exported: on ONNX Runtime's built-in kernels alone (the fallback
    bodies inlined), every output equals the original's."""
    original = onnx.load(str(rx.REAL / entry["file"]))
    proc, rewritten = rx.optimize(original, tmp_path)[:2]
    assert proc.returncode == 0, proc.stderr
    assert {f.name for f in rewritten.functions if f.domain == "nonzero"} >= {
        n.op_type for g in rx.graphs(rewritten) for n in g.node if n.domain == "nonzero"}
    if ir_too_new_for_host(original.SerializeToString()):
        with pytest.raises(Exception, match="Unsupported model IR version"):
            session(rewritten, library=False)
        return
    if OLD_HOST and entry["file"] in OLD_HOST_REWRITE_REFUSALS:
        # test_real_exports.py says why ONNX Runtime 1.17 refuses this rewrite; the same here.
        with pytest.raises(Exception, match=re.escape(OLD_HOST_REWRITE_REFUSALS[entry["file"]])):
            session(rewritten, library=False)
        return
    feeds = rx.inputs(original, 0)
    want = session(original, library=False).run(None, feeds)
    got = session(rewritten, library=False).run(None, feeds)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_exact(g, w, f"{entry['file']} without the library, output {i}")
