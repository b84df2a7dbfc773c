"""Loading the library changes nothing but NonZero (issue 13).

1. ONNX's backend node suite (regenerated with onnx.backend.test.case.node.collect_testcases, so
   every op ONNX tests, not only NonZero) runs through this ONNX Runtime with and without the
   library, in both of its registrations: every case must give byte-identical outputs, or fail
   with the identical error.
2. The released-opset check, with a single Abs node. Without the library ONNX Runtime refuses a
   model stamped above its newest released opset. With ANY custom-op library that registers an op
   in the ONNX domain it does not: ONNX Runtime registers every custom-op domain's schemas for
   opsets 1 to 1000 (CreateCustomRegistry in onnxruntime/core/session/custom_ops.cc) and takes the
   maximum over registries as "released" (SchemaRegistryManager::GetLastReleasedOpsetVersions).
   The op's own version range plays no part (checked with NonZero-13 ending at 26: same result).
   The test asserts that host behaviour exactly, so that a release which changes it fails here
   and the docs (deployment.md, "The released-opset check") get updated.
   With the session config entry nonzero.onnx_domain = 0 (the library registers its own domain
   only) the check is exactly as without the library.
3. NonZero itself runs on the library at every opset the host accepts (13 to its newest), with a
   type the built-in kernel does not implement (double), so a version range that left an opset
   to the built-in kernel would fail.

Backend cases stamped above the host's released opset are left out of 1: the host refuses them
without the library (2 covers that). NONZERO_BACKEND_EVERY=N runs every N-th case (default 1).
"""

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from backend_compare import compare, onnx_opset
from conftest import backend_node_cases, session

EVERY = int(os.environ.get("NONZERO_BACKEND_EVERY", "1"))


def outcome(model, with_library, onnx_domain=True):
    """'ok', 'released-only' or 'no-op' for a single Abs model."""
    try:
        sess = session(model, library=with_library, onnx_domain=onnx_domain)
        (y,) = sess.run(None, {"x": np.array([-1, 2], np.float32)})
        assert y.tolist() == [1, 2], y
        return "ok"
    except Exception as e:
        msg = str(e)
        if "official released onnx opset versions" in msg:
            return "released-only"
        if "No Op registered for Abs" in msg:
            return "no-op"
        raise


def abs_model(opset):
    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"])], "abs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def released_and_newest():
    released = max(o for o in range(7, 40) if outcome(abs_model(o), False) == "ok")
    os.environ["ALLOW_RELEASED_ONNX_OPSET_ONLY"] = "0"  # read by ONNX Runtime at every load
    try:
        newest = max(o for o in range(7, 40) if outcome(abs_model(o), False) == "ok")
    finally:
        del os.environ["ALLOW_RELEASED_ONNX_OPSET_ONLY"]
    return released, newest


RELEASED, NEWEST = released_and_newest()


def test_released_opset_check_as_onnx_runtime_has_it():
    assert RELEASED >= 20 and NEWEST >= RELEASED, (RELEASED, NEWEST)
    for opset in range(RELEASED - 2, RELEASED + 3):
        without = outcome(abs_model(opset), False)
        with_library = outcome(abs_model(opset), True)
        if opset <= RELEASED:
            assert without == with_library == "ok", (opset, without, with_library)
            continue
        assert without == "released-only", (opset, without)
        # ONNX Runtime's own behaviour with any ONNX-domain custom op (see the module doc): the
        # check is off, so an opset the host knows loads, and a newer one finds no schema.
        assert with_library == ("ok" if opset <= NEWEST else "no-op"), (opset, with_library)


def test_the_nonzero_domain_alone_keeps_the_released_opset_check():
    """nonzero.onnx_domain = 0: nothing in the ONNX domain, so the host's check stays on."""
    for opset in range(RELEASED - 1, RELEASED + 3):
        without = outcome(abs_model(opset), False)
        domain_only = outcome(abs_model(opset), True, onnx_domain=False)
        assert without == domain_only == ("ok" if opset <= RELEASED else "released-only"), (
            opset, without, domain_only)


def test_nonzero_runs_on_the_library_at_every_opset_the_host_accepts():
    x = np.array([[0.0, 1.5], [-0.0, np.nan]], dtype=np.float64)
    for opset in [9, 11, 12] + list(range(13, NEWEST + 1)):
        graph = helper.make_graph(
            [helper.make_node("NonZero", ["x"], ["y"])], "nz",
            [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [2, 2])],
            [helper.make_tensor_value_info("y", TensorProto.INT64, [2, None])],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
        if opset > RELEASED:
            os.environ["ALLOW_RELEASED_ONNX_OPSET_ONLY"] = "0"
        try:
            (y,) = session(model).run(None, {"x": x})
        finally:
            os.environ.pop("ALLOW_RELEASED_ONNX_OPSET_ONLY", None)
        assert y.dtype == np.int64 and y.tolist() == [[0, 1], [1, 1]], (opset, y)


@pytest.mark.parametrize("onnx_domain", [True, False], ids=["onnx-domain", "nonzero-domain-only"])
def test_backend_node_suite_is_unchanged_by_the_library(onnx_domain):
    cases = backend_node_cases()
    assert len(cases) > 1000, len(cases)
    runnable = [c for c in cases if onnx_opset(c.model) <= RELEASED][::EVERY]
    assert len(runnable) > 200, len(runnable)
    differ, ran_ok = compare(
        runnable, lambda model, with_library: session(model, library=with_library, onnx_domain=onnx_domain))
    assert not differ, f"{len(differ)} of {len(runnable)} backend cases differ:\n" + "\n".join(differ[:20])
    # Most cases run on this host; a suite that errors everywhere would compare equal too.
    assert ran_ok > len(runnable) // 2, (ran_ok, len(runnable))
    nonzero = [c for c in runnable if c.name.startswith("test_nonzero")]
    assert EVERY > 1 or nonzero, "the NonZero backend case must be among those compared"
    print(f"\nbackend node suite: {len(runnable)} cases at opset <= {RELEASED} compared "
          f"({ran_ok} run, {len(runnable) - ran_ok} fail identically), onnx {onnx.__version__}, "
          f"onnxruntime {ort.__version__}")


@pytest.fixture(autouse=True)
def _no_leaked_switch():
    yield
    assert "ALLOW_RELEASED_ONNX_OPSET_ONLY" not in os.environ
