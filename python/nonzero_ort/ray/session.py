"""One ONNX Runtime session with the library registered, made from picklable settings (a Ray
worker receives these, not an ``onnxruntime.SessionOptions``, which does not pickle)."""

import os

import numpy as np

import nonzero_ort

# ONNX Runtime's tensor type strings -> numpy dtypes (the types numpy has; bfloat16 has none).
ORT_DTYPES = {
    "tensor(bool)": np.dtype(np.bool_),
    "tensor(int8)": np.dtype(np.int8),
    "tensor(uint8)": np.dtype(np.uint8),
    "tensor(int16)": np.dtype(np.int16),
    "tensor(uint16)": np.dtype(np.uint16),
    "tensor(int32)": np.dtype(np.int32),
    "tensor(uint32)": np.dtype(np.uint32),
    "tensor(int64)": np.dtype(np.int64),
    "tensor(uint64)": np.dtype(np.uint64),
    "tensor(float16)": np.dtype(np.float16),
    "tensor(float)": np.dtype(np.float32),
    "tensor(double)": np.dtype(np.float64),
    "tensor(string)": np.dtype(np.str_),
}
PROVIDERS = ("CPUExecutionProvider",)


def make_session(model, *, intra_op_threads=1, providers=PROVIDERS, device="cpu", onnx_domain=True,
                 session_options=None, session_config=None, library=True):
    """An ``onnxruntime.InferenceSession`` of ``model`` (a path or the model's bytes).

    - ``intra_op_threads``: ``SessionOptions.intra_op_num_threads`` (1 by default: on Ray each
      worker holds one CPU, and more threads than that only contend).
    - ``providers``: ONNX Runtime's execution providers, in order.
    - ``device``, ``onnx_domain``: passed to ``nonzero_ort.register``.
    - ``session_options``: other ``SessionOptions`` attributes, ``{"inter_op_num_threads": 1}``
      (plain values: a Ray worker receives them pickled).
    - ``session_config``: session config entries, ``{"session.intra_op.allow_spinning": "0"}``.
    - ``library=False`` makes the same session without the library (ONNX Runtime's built-in
      kernels), for comparisons.

    Raises TypeError/ValueError for a bad setting, before any session is made.
    """
    import onnxruntime as ort

    if not isinstance(model, (str, bytes, os.PathLike)):
        raise TypeError(f"nonzero_ort.ray: model must be a path or the model's bytes, got {type(model).__name__}")
    if not isinstance(intra_op_threads, int) or isinstance(intra_op_threads, bool) or intra_op_threads < 0:
        raise ValueError(f"nonzero_ort.ray: intra_op_threads must be an int >= 0, got {intra_op_threads!r}")
    if isinstance(providers, str) or not all(isinstance(p, str) for p in providers):
        raise TypeError(f"nonzero_ort.ray: providers must be a list of names, got {providers!r}")
    available = ort.get_available_providers()
    missing = [p for p in providers if p not in available]
    if missing:
        raise ValueError(f"nonzero_ort.ray: providers {missing} are not in this ONNX Runtime ({available})")
    so = ort.SessionOptions()
    so.intra_op_num_threads = intra_op_threads
    for name, value in (session_options or {}).items():
        if name.startswith("_") or not hasattr(so, name) or callable(getattr(so, name)):
            raise ValueError(f"nonzero_ort.ray: SessionOptions has no setting {name!r}")
        if name == "graph_optimization_level" and isinstance(value, int):
            value = ort.GraphOptimizationLevel(value)
        elif name == "execution_mode" and isinstance(value, int):
            value = ort.ExecutionMode(value)
        setattr(so, name, value)
    for key, value in (session_config or {}).items():
        so.add_session_config_entry(str(key), str(value))
    if library:
        nonzero_ort.register(so, device=device, onnx_domain=onnx_domain)
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    return ort.InferenceSession(model, sess_options=so, providers=list(providers))


def input_specs(session):
    """``{name: (numpy dtype or None, shape)}`` of the session's inputs; the shape holds ints for
    fixed dimensions and None for symbolic ones."""
    specs = {}
    for arg in session.get_inputs():
        shape = tuple(d if isinstance(d, int) else None for d in arg.shape) if arg.shape is not None else None
        specs[arg.name] = (ORT_DTYPES.get(arg.type), shape)
    return specs


def check_feed(name, value, spec):
    """``value`` as the array the model input ``name`` takes, or ValueError saying what is wrong
    (no silent casts: a float64 row for a float32 input is an error, not a conversion)."""
    dtype, shape = spec
    array = np.asarray(value)
    if dtype is not None:
        if dtype.kind == "U":
            if array.dtype.kind not in "UO":
                raise ValueError(f"input {name!r}: dtype {array.dtype}, the model takes strings")
        elif array.dtype != dtype:
            raise ValueError(f"input {name!r}: dtype {array.dtype}, the model takes {dtype}")
    if shape is not None:
        if array.ndim != len(shape):
            raise ValueError(f"input {name!r}: shape {list(array.shape)}, the model takes rank {len(shape)} "
                             f"({_show(shape)})")
        for got, want in zip(array.shape, shape):
            if want is not None and got != want:
                raise ValueError(f"input {name!r}: shape {list(array.shape)}, the model takes {_show(shape)}")
    if not array.flags.c_contiguous:
        array = np.ascontiguousarray(array)
    return array


def _show(shape):
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"
