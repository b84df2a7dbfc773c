"""The opt-in GPU path: `custom_op.NonZero.device` = "gpu" in a session's config entries.

ONNX Runtime 1.24+ shows a custom op its session's config (KernelInfo_GetConfigEntries): there
the conformance pack must pass on the GPU, and the library's own log line (NONZERO_ORT_LOG_DEVICE=1
makes every compute log "NonZero node '<name>' ran on gpu (<adapter>)" at WARNING level through
ONNX Runtime's logger) proves that it ran there. Older hosts (1.17) cannot read the entry: the
node must run on the CPU, say why in a warning, and stay exact.

A missing GPU adapter (no GPU, no lavapipe) fails the tests that expect the GPU path; outside CI,
NONZERO_GPU_ALLOW_SKIP=1 turns that into a skip, as for the nonzero-gpu crate's tests.
"""

import os
import pathlib

import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto

from conftest import (
    CAN_FEED_BF16,
    COMPLEX,
    LIB,
    ORT_VERSION,
    assert_exact,
    bf16_via_cast,
    case_dirs,
    ensure_pack,
    load_case,
    run,
)

KEY = "custom_op.NonZero.device"
# KernelInfo_GetConfigEntries is C API version 24 (ONNX Runtime 1.24).
CONFIG_READABLE = ORT_VERSION >= (1, 24)
CASES = case_dirs(ensure_pack())
NO_GPU = "the GPU was requested but cannot be used"
UNREADABLE = f"the session config entry {KEY} = \"gpu\" cannot be read by custom ops on ONNX Runtime {ort.__version__}"


def gpu_session(model, device=None, entry_after_registration=False):
    """A CPU-provider session with the library; `device` goes into the session config entry."""
    so = ort.SessionOptions()
    so.log_severity_level = 2  # WARNING: the level of the library's device log lines
    if device is not None and not entry_after_registration:
        so.add_session_config_entry(KEY, device)
    so.register_custom_ops_library(str(LIB))
    if device is not None and entry_after_registration:
        so.add_session_config_entry(KEY, device)
    if isinstance(model, onnx.ModelProto):
        model = model.SerializeToString()
    elif isinstance(model, pathlib.Path):
        model = str(model)
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def run_case(model_path, inputs, **session_args):
    """conftest.run_case_model with our session (bfloat16 via Cast on hosts that need it)."""
    if any(t.data_type == TensorProto.BFLOAT16 for t, _ in inputs) and not CAN_FEED_BF16:
        model, feeds = bf16_via_cast(model_path, inputs)
        return gpu_session(model, **session_args).run(None, feeds)
    return run(gpu_session(model_path, **session_args), inputs)


@pytest.fixture
def device_log(monkeypatch, capfd):
    """Turns on the library's per-compute device log and returns a reader of the captured
    stderr (ONNX Runtime's logger writes to file descriptor 2)."""
    monkeypatch.setenv("NONZERO_ORT_LOG_DEVICE", "1")
    monkeypatch.delenv("NONZERO_ORT_DEVICE", raising=False)
    capfd.readouterr()
    return lambda: capfd.readouterr().err


def require_gpu_ran(log: str, what: str):
    if "ran on gpu (" in log:
        return
    if NO_GPU in log and os.environ.get("CI") != "true" and os.environ.get("NONZERO_GPU_ALLOW_SKIP") == "1":
        pytest.skip(f"no GPU adapter (NONZERO_GPU_ALLOW_SKIP=1): {log.strip()}")
    pytest.fail(f"{what}: the GPU path did not run (install lavapipe: crates/gpu-kernel/setup-lavapipe.sh); log:\n{log}")


def test_pack_is_not_empty():
    assert len(CASES) >= 50, f"only {len(CASES)} conformance cases"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_pack_with_device_gpu(case, device_log):
    model, inputs, expected = load_case(case)
    t, _ = inputs[0]
    if t.data_type in COMPLEX:
        # ONNX Runtime has no complex tensor type (see test_conformance.py): same assertion.
        try:
            (got,) = run_case(model, inputs, device="gpu")
        except Exception as e:
            assert "complex" in str(e), e
            return
    else:
        (got,) = run_case(model, inputs, device="gpu")
    assert_exact(got, expected[0], case.name)
    log = device_log()
    if not CONFIG_READABLE:
        # The entry was added before registration, so the library saw it and says it cannot
        # honour it on this host; the node runs on the CPU.
        assert UNREADABLE in log, log
        assert "ran on cpu" in log and "ran on gpu" not in log, log
    elif t.data_type == TensorProto.STRING:
        assert "ran on cpu" in log and "ran on gpu" not in log, log  # strings never go to the GPU
    else:
        require_gpu_ran(log, case.name)
        assert "ran on cpu" not in log, log


def small_model():
    node = onnx.helper.make_node("NonZero", ["x"], ["y"], name="nz_gpu_option")
    graph = onnx.helper.make_graph(
        [node], "g",
        [onnx.helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
        [onnx.helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model


def small_run(**session_args):
    import numpy as np

    x = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, -0.0, 5]], np.float32)
    (got,) = gpu_session(small_model(), **session_args).run(None, {"x": x})
    assert_exact(got, np.array([[0, 0, 1, 2], [1, 3, 0, 3]], np.int64))


@pytest.mark.parametrize("device", [None, "cpu", "CPU"])
def test_cpu_is_the_default(device, device_log):
    small_run(device=device)
    log = device_log()
    assert "NonZero node 'nz_gpu_option' ran on cpu" in log, log


@pytest.mark.skipif(not CONFIG_READABLE, reason="the session config is readable by custom ops from ONNX Runtime 1.24")
def test_entry_added_after_registration_is_honoured(device_log):
    small_run(device="gpu", entry_after_registration=True)
    require_gpu_ran(device_log(), "entry added after register_custom_ops_library")


@pytest.mark.skipif(CONFIG_READABLE, reason="hosts before ONNX Runtime 1.24 only")
def test_old_host_falls_back_to_the_cpu_with_a_warning(device_log):
    small_run(device="gpu")
    log = device_log()
    assert f"NonZero node 'nz_gpu_option': {UNREADABLE}" in log, log
    assert "set NONZERO_ORT_DEVICE=gpu" in log, log
    assert "NonZero node 'nz_gpu_option' ran on cpu" in log, log


def test_environment_variable_selects_the_gpu_without_a_session_entry(device_log, monkeypatch):
    monkeypatch.setenv("NONZERO_ORT_DEVICE", "gpu")
    small_run()
    require_gpu_ran(device_log(), "NONZERO_ORT_DEVICE=gpu")


@pytest.mark.skipif(not CONFIG_READABLE, reason="the session entry wins only where it is readable")
def test_session_entry_wins_over_the_environment_variable(device_log, monkeypatch):
    monkeypatch.setenv("NONZERO_ORT_DEVICE", "gpu")
    small_run(device="cpu")
    assert "NonZero node 'nz_gpu_option' ran on cpu" in device_log()


@pytest.mark.parametrize("value", ["cuda", "", "gpu0"])
def test_unknown_device_is_a_clear_error(value):
    # On 1.24+ kernel creation (session creation) fails; on older hosts registration sees the
    # entry (added first) and fails. Either way the message names the key, the value and the
    # valid values.
    with pytest.raises(Exception) as e:
        small_run(device=value)
    message = str(e.value)
    assert f'{KEY} = "{value}" is not a valid NonZero device' in message, message
    assert '"cpu"' in message and '"gpu"' in message, message


def test_unknown_environment_value_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("NONZERO_ORT_DEVICE", "tpu")
    with pytest.raises(Exception, match='NONZERO_ORT_DEVICE = "tpu" is not a valid NonZero device'):
        small_run()
