"""Qualcomm's QNN execution provider with its HTP backend (the x86_64 emulator that
onnxruntime-qnn ships), as a user sets it up on ONNX Runtime 1.32 (issue 38): the plugin library
registered, the HTP backend and a soc_model chosen per session, CPU fallback disabled, and where
each node went recorded. Run in .venv-deploy-qnn. Imports no pytest."""

import functools
import os

import numpy as np
import onnxruntime as ort

# The soc_models the stage tries, oldest first; sessions run at DEFAULT_SOC.
SOC_MODELS = ("30", "36", "43", "57", "60", "69")
DEFAULT_SOC = "57"
QNN = "QNNExecutionProvider"
# ONNX Runtime 1.32 refuses to run a session whose every node went to QNN while fallback is
# disabled, for some graphs (the bare NonZero and ArgWhere static forms): creating it says this.
# It is not a fallback: with fallback allowed, every node is still on QNN (assignment() tells).
CONFLICT = "Conflicting session configuration: explicitly added the CPU EP to the session, but also disabled fallback"


@functools.lru_cache(maxsize=None)
def _devices():
    import onnxruntime_qnn

    library = onnxruntime_qnn.get_library_path()
    ort.register_execution_provider_library(QNN, library)
    devices = [d for d in ort.get_ep_devices() if d.ep_name == QNN]
    assert devices, "onnxruntime-qnn registered no device"
    return devices, os.path.join(os.path.dirname(library), "libQnnHtp.so")


def session(path, soc=DEFAULT_SOC, fallback=False):
    """An InferenceSession of the model at `path` on QNN HTP at `soc` (the soc_model option),
    CPU fallback disabled unless `fallback`; graph assignment recorded. ONNX Runtime's graph
    optimizations run first, as a user's session has them: they fold the Shape and Expand of
    fixed shapes that the static forms still hold, which QNN does not take."""
    devices, htp = _devices()
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 2
    if not fallback:
        so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    so.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    so.add_provider_for_devices(devices, {"backend_path": htp, "soc_model": soc})
    sess = ort.InferenceSession(str(path), so)
    # onnxruntime's Python session otherwise reruns a failed run on the CPU EP alone, printing
    # "Falling back to ['CPUExecutionProvider'] and retrying": a QNN failure must fail.
    sess.disable_fallback()
    return sess


def assignment(sess):
    """{execution provider: [op type of each node it took]}."""
    out = {}
    for subgraph in sess.get_provider_graph_assignment_info():
        out.setdefault(subgraph.ep_name, []).extend(n.op_type for n in subgraph.get_nodes())
    return out


def run(sess, feeds):
    """{output name: array}. A scalar feed for an input the model declares [1] goes in as [1]:
    the rknn and litert forms declare rank-0 inputs so (docs/static.md, "Targets")."""
    declared = {i.name: i.shape for i in sess.get_inputs()}
    feeds = {k: v.reshape(1) if np.ndim(v) == 0 and declared.get(k) == [1] else v for k, v in feeds.items()}
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


class Placed:
    """A model's session on HTP with fallback disabled: `sess`, `nodes` (assignment()), and
    `conflict`: ONNX Runtime refused to run it for CONFLICT, and with fallback allowed every node
    still went to QNN (then the session is that one). A session refused because nodes would go
    to the CPU EP raises AssertionError naming them (read off a session with fallback allowed)."""

    def __init__(self, path, soc=DEFAULT_SOC):
        self.path, self.soc, self.conflict = path, soc, False
        try:
            self.sess = session(path, soc)
        except Exception as e:  # noqa: BLE001 (ONNX Runtime's own exception types)
            if "fallback to CPU EP has been explicitly disabled" not in str(e):
                raise
            off = [(ep, op) for ep, ops in assignment(session(path, soc, fallback=True)).items() if ep != QNN
                   for op in ops]
            raise AssertionError(f"not on QNN: {off}") from e
        self.nodes = assignment(self.sess)

    def run(self, feeds):
        try:
            return run(self.sess, feeds)
        except Exception as e:  # noqa: BLE001
            if CONFLICT not in str(e) or self.conflict:
                raise
        self.conflict = True
        self.sess = session(self.path, self.soc, fallback=True)
        self.nodes = assignment(self.sess)
        assert not self.off_qnn(), f"with fallback allowed, not on QNN: {self.off_qnn()}"
        return run(self.sess, feeds)

    def off_qnn(self):
        """[(provider, op type)] of the nodes not on QNN."""
        return [(ep, op) for ep, ops in self.nodes.items() if ep != QNN for op in ops]

    def on_qnn(self):
        return len(self.nodes.get(QNN, []))

    def assigned(self):
        """Every node assigned (after ONNX Runtime's graph optimizations)."""
        return sum(len(ops) for ops in self.nodes.values())


def reference(path):
    """The original model (its inputs fixed: models.fixed_original) on the same HTP with CPU
    fallback allowed: its NonZero chain goes to the CPU EP."""
    return session(path, fallback=True)


def cpu(path):
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.intra_op_num_threads = 2
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def is_float(value):
    return np.asarray(value).dtype.kind == "f"
