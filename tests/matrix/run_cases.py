"""Runs inside one matrix venv (tests/matrix/matrix.py): every case directory given on the command
line (ONNX's test-case layout) through that venv's onnxruntime with the custom-op library LIB
registered, compared exactly with the stored outputs; then the released-opset probe, and the
library's nonzero-domain-only registration (session config entry nonzero.onnx_domain = 0), which
must leave the released-opset check and ONNX's backend node suite exactly as without the library.

    python -I run_cases.py TESTS_PYTHON_DIR LIB CASE... [--nonzero-domain-only CASE...]

Cases after --nonzero-domain-only run with the library's nonzero domain only registered (their
models were rewritten by `nonzero optimize --nonzero-domain`).

Then the fallback probe: each rewritten model, whose `nonzero` ops carry model-local functions
of standard ops, runs once per registration (library with the ONNX domain, library with the
nonzero domain only, no library), and ONNX Runtime's profile says which ran: the library's
kernel with it, the standard-op body without it (or the built-in kernel's NOT_IMPLEMENTED for the
types it lacks, such as double).

Prints one JSON document: {"ort", "numpy", "passed": [...], "bf16_via_cast": [...],
"failed": {case: message}, "opsets": {...}, "domain_only": {...}, "fallback": {...}}. Releases that cannot feed bfloat16 from Python
(before 1.18) get it from a Cast node, as in the end-to-end suite (tests/python/conftest.py)."""

import json
import os
import pathlib
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, sys.argv[1])
from backend_compare import compare, onnx_opset  # noqa: E402
from conftest import CAN_FEED_BF16, bf16_via_cast  # noqa: E402
from onnx_cases import assert_exact, load_case, nodes_that_ran, run  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

LIB = sys.argv[2]


def session(model, with_library=True, onnx_domain=True, profile=False):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.enable_profiling = profile
    if with_library and not onnx_domain:
        so.add_session_config_entry("nonzero.onnx_domain", "0")
    if with_library:
        so.register_custom_ops_library(LIB)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def run_case(case: pathlib.Path, onnx_domain=True):
    model, inputs, expected = load_case(case)
    if not CAN_FEED_BF16 and any(t.data_type == TensorProto.BFLOAT16 for t, _ in inputs):
        cast_model, feeds = bf16_via_cast(model, inputs)
        got = session(cast_model.SerializeToString(), onnx_domain=onnx_domain).run(None, feeds)
        via_cast.append(case.name)
    else:
        got = run(session(str(model), onnx_domain=onnx_domain), inputs)
    assert len(got) == len(expected), f"{len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        assert_exact(g, e, f"output {i}")


def abs_model(opset: int) -> bytes:
    graph = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["y"])], "abs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8).SerializeToString()


def loads(opset: int, with_library: bool, onnx_domain=True) -> str:
    """'ok', 'released-only' (the host's unreleased-opset guard) or 'no-op' (no schema)."""
    try:
        sess = session(abs_model(opset), with_library, onnx_domain)
        (y,) = sess.run(None, {"x": np.array([-1, 2], np.float32)})
        assert y.tolist() == [1, 2], y
        return "ok"
    except Exception as e:  # the host's error text decides which of its checks refused the model
        msg = str(e)
        if "official released onnx opset versions" in msg:
            return "released-only"
        if "No Op registered for Abs" in msg:
            return "no-op"
        raise


def opset_probe():
    """The newest opset a single Abs node loads at without the library (released), the newest
    with ALLOW_RELEASED_ONNX_OPSET_ONLY=0 (newest), and the outcome of released + 1 and + 2
    without and with the library (see docs/compatibility.md)."""
    released = max(o for o in range(7, 40) if loads(o, False) == "ok")
    # ONNX Runtime reads its switch at every model load: the newest opset it knows at all.
    os.environ["ALLOW_RELEASED_ONNX_OPSET_ONLY"] = "0"
    newest = max(o for o in range(7, 40) if loads(o, False) == "ok")
    del os.environ["ALLOW_RELEASED_ONNX_OPSET_ONLY"]
    return {
        "released": released,
        "newest": newest,
        "above": {
            str(o): {"without": loads(o, False), "with": loads(o, True)} for o in (released + 1, released + 2)
        },
    }


def domain_only_probe(released: int):
    """The nonzero-domain-only registration: Abs at released - 1 to released + 2 loads as without
    the library, and every backend node case at an opset the host releases gives the same
    outputs or the same error."""
    from onnx.backend.test.case.node import collect_testcases

    opsets = {
        str(o): {"without": loads(o, False), "domain_only": loads(o, True, onnx_domain=False)}
        for o in range(released - 1, released + 3)
    }
    cases = [c for c in collect_testcases(None) if onnx_opset(c.model) <= released][::BACKEND_EVERY]
    differ, ran_ok = compare(cases, lambda model, lib: session(model, lib, onnx_domain=False))
    return {"opsets": opsets, "backend_compared": len(cases), "backend_ran": ran_ok, "backend_differ": differ}


def fallback_probe(cases):
    """Which kernels ran for each rewritten case, per registration; failures by case. A library
    node keeps its name in the profile; an inlined body's nodes get new ones (nonzero.NonZero's
    body is an ONNX NonZero, so the op type alone cannot tell)."""
    checked, failed = 0, {}
    for case in map(pathlib.Path, cases):
        model, inputs, expected = load_case(case)
        ours = {n.name for n in onnx.load(str(model)).graph.node if n.domain == "nonzero"}
        if not ours or (not CAN_FEED_BF16 and any(t.data_type == TensorProto.BFLOAT16 for t, _ in inputs)):
            continue
        assert all(ours), f"{case.name}: a nonzero node without a name"
        checked += 1
        for label, library, onnx_domain in (("library", True, True), ("domain only", True, False), ("no library", False, True)):
            try:
                s = session(str(model), library, onnx_domain, profile=True)
                got = run(s, inputs)
                ran = nodes_that_ran(s)
                for i, (g, e) in enumerate(zip(got, expected)):
                    assert_exact(g, e, f"output {i}")
                names = {n for n, _ in ran}
                if library:
                    assert ours <= names, f"the library's nodes {sorted(ours)} did not run: {sorted(ran)}"
                else:
                    # The bodies ran (MaskedFill's is a Where: no NonZero), never our nodes.
                    assert not ours & names and ran, f"ran {sorted(ran)}"
            except Exception as e:
                if not library and "NOT_IMPLEMENTED" in str(e):
                    continue  # the built-in NonZero lacks this type; the body cannot run here
                failed[f"{case.name} ({label})"] = f"{type(e).__name__}: {e}"
    return {"checked": checked, "failed": failed}


via_cast = []
# Every N-th backend case per release (default: every case; the whole suite, two sessions a case,
# takes about 8 s per release on a quiet machine).
BACKEND_EVERY = int(os.environ.get("NONZERO_MATRIX_BACKEND_EVERY", "1"))


def main(args):
    split = args.index("--nonzero-domain-only") if "--nonzero-domain-only" in args else len(args)
    runs = [(c, True) for c in args[:split]] + [(c, False) for c in args[split + 1:]]
    passed, failed = [], {}
    for case, onnx_domain in runs:
        case = pathlib.Path(case)
        label = case.name if onnx_domain else f"{case.name} (nonzero domain only)"
        try:
            run_case(case, onnx_domain)
            passed.append(label)
        except Exception as e:
            failed[label] = f"{type(e).__name__}: {e}"
    opsets = opset_probe()
    rewritten = args[split + 1:]
    print(json.dumps({
        "fallback": fallback_probe(rewritten),
        "ort": ort.__version__, "numpy": np.__version__, "passed": passed, "bf16_via_cast": via_cast,
        "failed": failed, "opsets": opsets, "domain_only": domain_only_probe(opsets["released"]),
    }))


if __name__ == "__main__":
    main(sys.argv[3:])
