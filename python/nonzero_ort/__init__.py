"""ONNX's NonZero as an ONNX Runtime custom-op library.

    import onnxruntime as ort, nonzero_ort
    so = ort.SessionOptions()
    so.register_custom_ops_library(nonzero_ort.get_library_path())

or, with the device chosen in one call, ``nonzero_ort.register(so, device="gpu")``.

Importing this package does not import onnxruntime: the library is a plain shared object that
ONNX Runtime loads itself, and ``register`` only looks onnxruntime up when it is called.
"""

import os as _os
import sys as _sys

__version__ = "0.1.0"
__all__ = [
    "DEVICES", "DEVICE_CONFIG_KEY", "ONNX_DOMAIN_CONFIG_KEY", "get_library_path", "optimize", "register",
    "__version__",
]

#: The session config entry the library reads to choose where NonZero runs.
DEVICE_CONFIG_KEY = "custom_op.NonZero.device"
#: The session config entry the library reads when it is registered: "0" registers its
#: ``nonzero`` domain only, leaving ONNX Runtime's NonZero and released-opset check untouched.
ONNX_DOMAIN_CONFIG_KEY = "nonzero.onnx_domain"
#: The values ``register`` accepts for ``device``.
DEVICES = ("cpu", "gpu")

# The shared object maturin puts next to this file: `_nonzero_ort.abi3.so` on Linux (the
# extension-module suffix is maturin's naming; Python never imports it, ONNX Runtime dlopens it).
_LIB_STEM = "_nonzero_ort."
_LIB_SUFFIXES = (".so", ".dylib", ".pyd", ".dll")


def get_library_path() -> str:
    """The absolute path of the custom-op library shipped in this package, for
    ``SessionOptions.register_custom_ops_library``."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    found = sorted(
        name
        for name in _os.listdir(here)
        if name.startswith(_LIB_STEM) and name.endswith(_LIB_SUFFIXES)
    )
    if not found:
        raise FileNotFoundError(
            f"nonzero_ort: no {_LIB_STEM}* library in {here}; the package is installed incompletely"
        )
    return _os.path.join(here, found[0])


def register(session_options, device="cpu", onnx_domain=True):
    """Registers the NonZero library on ``session_options`` (an ``onnxruntime.SessionOptions``)
    and sets the session config entry ``custom_op.NonZero.device`` to ``device`` ("cpu" or "gpu").

    ``onnx_domain=False`` registers the library's ``nonzero`` domain only (session config entry
    ``nonzero.onnx_domain`` = "0"): ONNX-domain NonZero nodes then run on ONNX Runtime's own
    kernel, and ONNX Runtime keeps refusing models stamped with an unreleased opset, exactly as
    without the library. Models rewritten by ``optimize(..., nonzero_domain=True)`` still run on
    the library's kernels. See docs/deployment.md.

    Returns ``session_options``. Raises TypeError when ``session_options`` is not an
    ``onnxruntime.SessionOptions`` or ``onnx_domain`` is not a bool, and ValueError for an
    unknown device; in each case nothing is changed on the options.
    """
    if not _is_session_options(session_options):
        raise TypeError(
            "nonzero_ort.register: expected an onnxruntime.SessionOptions, got "
            f"{type(session_options).__module__}.{type(session_options).__qualname__}"
        )
    value = device.strip().lower() if isinstance(device, str) else None
    if value not in DEVICES:
        raise ValueError(
            f"nonzero_ort.register: unknown device {device!r}; valid devices: "
            + ", ".join(repr(d) for d in DEVICES)
        )
    if not isinstance(onnx_domain, bool):
        raise TypeError(f"nonzero_ort.register: onnx_domain must be True or False, got {onnx_domain!r}")
    if not onnx_domain:
        # Read by the library while it registers, so it must be set before.
        session_options.add_session_config_entry(ONNX_DOMAIN_CONFIG_KEY, "0")
    # The entry goes in first: ONNX Runtime hosts older than 1.24 only let the library see it
    # while registering (later ones show it to every kernel either way).
    session_options.add_session_config_entry(DEVICE_CONFIG_KEY, value)
    session_options.register_custom_ops_library(get_library_path())
    return session_options


def _is_session_options(obj) -> bool:
    # A SessionOptions can only come from an onnxruntime that is already imported, so look it up
    # in sys.modules rather than importing it (which would be slow, and fail where it is absent).
    ort = _sys.modules.get("onnxruntime")
    session_options = getattr(ort, "SessionOptions", None)
    return isinstance(session_options, type) and isinstance(obj, session_options)


def optimize(model, report=False, nonzero_domain=False, provider="cpu", fallback=True, static=False,
             input_shapes=None, capacity=None, allow_dynamic=False, target=None):
    """Rewrites the NonZero chains that PyTorch, tf2onnx and paddle2onnx emit (NonZero ->
    Transpose -> GatherND / Gather / ScatterND) into the library's ``nonzero``-domain ArgWhere,
    BooleanMask, BooleanMaskAxis, MaskedFill and MaskedScatter ops, where the graph proves them
    equivalent; see docs/optimize.md. The rewritten model runs the library's kernels where the
    library is registered, and the model-local fallback functions elsewhere (``fallback=False``
    leaves those out). Same implementation as ``nonzero optimize`` (the Rust crate, in this
    package's shared library).

    ``model``: the serialized model (bytes) or a path (str / os.PathLike). Returns the new
    model's bytes (the input unchanged when there is nothing to rewrite), or with
    ``report=True`` a pair ``(bytes, dict)``: the same report as ``nonzero optimize
    --report-json`` (counts, each rewrite with the shape facts it relied on, each node left with
    its reason). ``nonzero_domain=True`` also moves every remaining NonZero of known rank >= 1
    to the ``nonzero`` domain (``--nonzero-domain``). ``provider="cuda"`` rewrites nothing and
    says why in the report's ``note``. Every ``nonzero`` op written comes with a model-local
    function of standard ops, so the model also runs where the library is not registered;
    ``fallback=False`` leaves them out (``--no-fallback``).

    ``static=True`` is ``nonzero optimize --static`` (docs/static.md): standard ONNX ops only and
    no data-dependent shape. ``input_shapes`` maps input names to fixed shapes (``--input-shape``),
    each a sequence of ints (anything ``operator.index`` takes, NumPy integers included; not a bool,
    a float or a string); ``capacity`` bounds each data-dependent output (``--capacity N``): an int
    of at least 1, or a dict from graph output names to such ints, each capping the selections that
    reach that output of the main graph (``--capacity NAME=N``). A bad type raises TypeError, a size below 0 or a
    capacity below 1 ValueError, a value past int64 OverflowError, each naming the argument and
    the value. ``allow_dynamic=True``
    returns the model even when nodes stay dynamic (the report lists them); otherwise that, or an
    input without a fixed shape, raises ValueError naming each. Raises ValueError when the input is
    not an ONNX model, is an invalid one (the message names the node and the name), or the
    provider is unknown, TypeError for another argument type.

    ``target`` is ``--target``: ``"cpu"`` or ``"cuda"``, ONNX Runtime's execution providers
    (``provider`` is its old name), or with ``static=True`` ``"generic"`` (the default forms),
    ``"qnn"``, ``"litert"`` or ``"rknn"``: forms those NPU toolchains take (docs/static.md,
    "Targets"). Another name raises ValueError.
    """
    import ctypes
    import json

    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
    elif isinstance(model, (str, _os.PathLike)):
        with open(model, "rb") as f:
            data = f.read()
    else:
        raise TypeError(
            "nonzero_ort.optimize: expected bytes or a path, got "
            f"{type(model).__module__}.{type(model).__qualname__}"
        )
    static_target = None
    if target is not None:
        if target in _PROVIDERS:
            provider = target
        elif target in _TARGETS:
            static_target = target
        else:
            raise ValueError(f"nonzero_ort.optimize: target must be one of {list(_PROVIDERS + _TARGETS)}, "
                             f"got {target!r}")
    if provider not in _PROVIDERS:
        raise ValueError(f"nonzero_ort.optimize: provider must be one of {sorted(_PROVIDERS)}, got {provider!r}")
    for name, flag in (("report", report), ("nonzero_domain", nonzero_domain), ("fallback", fallback)):
        if not isinstance(flag, bool):
            raise TypeError(f"nonzero_ort.optimize: {name} must be True or False, got {flag!r}")
    for name, flag in (("static", static), ("allow_dynamic", allow_dynamic)):
        if not isinstance(flag, bool):
            raise TypeError(f"nonzero_ort.optimize: {name} must be True or False, got {flag!r}")
    shapes = _input_shapes(input_shapes)
    capacity = _capacity(capacity)
    # The options travel as one JSON object (nonzero_optimize::Options::from_json), so that
    # options the Rust side grows need no new C ABI. Static-only keys go only when set, so that
    # the Rust side's "applies only with static" check names what the caller passed.
    fields = {"nonzero_domain": nonzero_domain, "provider": provider, "no_fallback": not fallback}
    if static:
        fields["static"] = True
    if shapes:
        fields["input_shapes"] = shapes
    if isinstance(capacity, dict):
        fields["output_capacities"] = capacity
    elif capacity is not None:
        fields["capacity"] = capacity
    if allow_dynamic:
        fields["allow_dynamic"] = True
    if static_target not in (None, "generic"):
        fields["target"] = static_target
    options = json.dumps(fields)
    lib = _native()
    out = ctypes.POINTER(ctypes.c_ubyte)()
    out_len = ctypes.c_size_t()
    summary = ctypes.c_void_p()
    error = ctypes.c_void_p()
    status = lib.nonzero_ort_optimize(
        data, len(data), options.encode("utf-8"), ctypes.byref(out), ctypes.byref(out_len),
        ctypes.byref(summary), ctypes.byref(error)
    )
    if status == 0:
        try:
            rewritten = ctypes.string_at(out, out_len.value)
            details = json.loads(ctypes.string_at(summary).decode("utf-8"))
        finally:
            lib.nonzero_ort_free(out, out_len)
            lib.nonzero_ort_free_string(summary)
        return (rewritten, details) if report else rewritten
    if status == 1:
        try:
            message = ctypes.string_at(error).decode("utf-8", "replace")
        finally:
            lib.nonzero_ort_free_string(error)
        raise ValueError(f"nonzero_ort.optimize: {message}")
    raise RuntimeError(f"nonzero_ort.optimize: the library refused the call (status {status})")


_INT64_MAX = 2**63 - 1


def _integer(value, what):
    """``value`` as an int, as ``operator.index`` takes it (NumPy integers included), never a
    bool, a float or a string; TypeError otherwise, OverflowError past int64. ``what`` names it."""
    import operator

    numpy_bool = type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool")
    if isinstance(value, bool) or numpy_bool:
        raise TypeError(f"nonzero_ort.optimize: {what} must be an int, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(f"nonzero_ort.optimize: {what} must be an int, got {value!r}") from None
    if not -_INT64_MAX - 1 <= number <= _INT64_MAX:
        raise OverflowError(f"nonzero_ort.optimize: {what} is {number}, past int64 (at most {_INT64_MAX})")
    return number


def _input_shapes(input_shapes):
    """``input_shapes``: a dict from input names to sequences of ints, each 0 or more."""
    from collections.abc import Mapping

    if input_shapes is None:
        return {}
    if not isinstance(input_shapes, Mapping):
        raise TypeError(
            "nonzero_ort.optimize: input_shapes must be a dict from input names to sequences of ints, "
            f"got {input_shapes!r}"
        )
    shapes = {}
    for name, dims in input_shapes.items():
        if not isinstance(name, str):
            raise TypeError(f"nonzero_ort.optimize: input_shapes keys are input names (str), got {name!r}")
        what = f"input_shapes[{name!r}]"
        # A string is a sequence too, of characters: "453" is not [4, 5, 3].
        if isinstance(dims, (str, bytes, bytearray, memoryview, Mapping, set, frozenset)):
            raise TypeError(f"nonzero_ort.optimize: {what} must be a sequence of ints, got {dims!r}")
        try:
            items = list(dims)
        except TypeError:
            raise TypeError(f"nonzero_ort.optimize: {what} must be a sequence of ints, got {dims!r}") from None
        sizes = [_integer(d, f"{what}[{i}]") for i, d in enumerate(items)]
        for i, d in enumerate(sizes):
            if d < 0:
                raise ValueError(f"nonzero_ort.optimize: {what}[{i}] must be 0 or more, got {d}")
        shapes[name] = sizes
    return shapes


def _capacity(capacity):
    """``capacity``: None, an int of at least 1, or a dict from graph output names to such ints."""
    from collections.abc import Mapping

    if capacity is None:
        return None
    if isinstance(capacity, Mapping):
        caps = {}
        for name, value in capacity.items():
            if not isinstance(name, str):
                raise TypeError(f"nonzero_ort.optimize: capacity keys are graph output names (str), got {name!r}")
            caps[name] = _capacity_value(value, f"capacity[{name!r}]")
        return caps or None
    try:
        return _capacity_value(capacity, "capacity")
    except TypeError:
        raise TypeError(
            "nonzero_ort.optimize: capacity must be an int, a dict from graph output names to ints, "
            f"or None, got {capacity!r}"
        ) from None


def _capacity_value(value, what):
    number = _integer(value, what)
    if number < 1:
        raise ValueError(f"nonzero_ort.optimize: {what} must be at least 1, got {number}")
    return number


# The providers nonzero_optimize::Provider knows.
_PROVIDERS = ("cpu", "cuda")
# The static forms' toolchains nonzero_emit_static::Target knows.
_TARGETS = ("generic", "qnn", "litert", "rknn")
_NATIVE = None


def _native():
    """The package's shared library through ctypes, with the optimize functions' signatures."""
    global _NATIVE
    if _NATIVE is None:
        import ctypes

        lib = ctypes.CDLL(get_library_path())
        byte_ptr = ctypes.POINTER(ctypes.c_ubyte)
        lib.nonzero_ort_optimize.argtypes = [
            ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(byte_ptr),
            ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p),
        ]
        lib.nonzero_ort_optimize.restype = ctypes.c_int
        lib.nonzero_ort_free.argtypes = [byte_ptr, ctypes.c_size_t]
        lib.nonzero_ort_free.restype = None
        lib.nonzero_ort_free_string.argtypes = [ctypes.c_void_p]
        lib.nonzero_ort_free_string.restype = None
        _NATIVE = lib
    return _NATIVE
