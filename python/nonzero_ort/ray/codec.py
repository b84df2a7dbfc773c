"""The HTTP bodies of ``nonzero_ort.ray.serve``: named arrays as npz or JSON. Needs numpy only, so
a client imports it without Ray.

**npz** (``Content-Type: application/x-npz``): what ``np.savez(f, x=..., mask=...)`` writes, a zip
with one ``<name>.npy`` per array. The server reads it with ``np.load(..., allow_pickle=False)``
after checking each member's header: numeric, bool or fixed-width unicode (``<U``) dtypes in
native byte order, no object arrays (pickles), and the declared shape times the itemsize equal to
the bytes the member holds. The reply is an npz of the outputs.

**JSON** (``Content-Type: application/json``)::

    {"inputs": {"x": {"dtype": "float32", "shape": [2, 3], "data": [1, 0, 2, 0, 0, 3]}}}

``data`` is the flat list of the elements in row-major order (``len == prod(shape)``), or
``"b64": "<base64>"`` holds their raw little-endian bytes (``len == prod(shape) * itemsize``);
strings (``"dtype": "str"``) take ``data`` only. The reply is ``{"outputs": {...}}`` in the same
form, with ``b64`` when any input used it. Non-finite floats in ``data`` are the tokens ``NaN``,
``Infinity`` and ``-Infinity`` (Python's json); use ``b64`` for a strict JSON parser.

Every refusal is a ``BadRequest`` with an HTTP status (400, 413 too large, 415 unknown type) and
a message naming the array and the rule.
"""

import base64
import io
import json
import math
import sys
import threading
import zipfile

import numpy as np

NPZ = "application/x-npz"
JSON = "application/json"
CONTENT_TYPES = (NPZ, JSON)
# The element types a body may carry (numpy names; "str" is unicode text).
DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float16", "float32", "float64", "str")
MAX_RANK = 64
# numpy reads each .npy header with ast.literal_eval, and CPython 3.11's AST construction is not
# safe across threads: two at once can raise "SystemError: AST constructor recursion depth
# mismatch" (python/cpython#106905). A server decodes requests, and a client replies, in several
# threads, so every npz parse holds this lock; it covers headers and arrays of a few KB, not inference.
_NPY_PARSE = threading.Lock()


class BadRequest(ValueError):
    """A request the server refuses: ``status`` is the HTTP status, ``str(e)`` the message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def encode_request(arrays, fmt="npz"):
    """``(body, content_type)`` for ``{name: array}``; ``fmt``: "npz", "json" or "json-b64"."""
    return _encode(arrays, fmt, "inputs")


def decode_response(body, content_type):
    """``{name: array}`` from a reply of the server."""
    return _decode(body, content_type, "outputs", max_bytes=None)[0]


def decode_request(body, content_type, max_bytes):
    """``({name: array}, reply format)`` from a request body; BadRequest when it breaks a rule.
    ``max_bytes`` bounds the arrays' total size once decoded (an npz may be compressed)."""
    return _decode(body, content_type, "inputs", max_bytes)


def encode_response(arrays, fmt):
    """``(body, content_type)`` of the outputs in the reply format ``decode_request`` gave."""
    return _encode(arrays, fmt, "outputs")


def _encode(arrays, fmt, key):
    if fmt == "npz":
        buffer = io.BytesIO()
        np.savez(buffer, **{name: np.asarray(a) for name, a in arrays.items()})
        return buffer.getvalue(), NPZ
    if fmt not in ("json", "json-b64"):
        raise ValueError(f"unknown body format {fmt!r}: npz, json, json-b64")
    out = {}
    for name, value in arrays.items():
        a = np.asarray(value)
        dtype = "str" if a.dtype.kind == "U" else a.dtype.name
        entry = {"dtype": dtype, "shape": list(a.shape)}
        if fmt == "json-b64" and dtype != "str":
            entry["b64"] = base64.b64encode(np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<")).tobytes()).decode()
        else:
            entry["data"] = a.ravel().tolist()
        out[name] = entry
    return json.dumps({key: out}).encode(), JSON


def _decode(body, content_type, key, max_bytes):
    media = (content_type or "").split(";")[0].strip().lower()
    if media == NPZ:
        return _decode_npz(body, max_bytes), "npz"
    if media == JSON:
        return _decode_json(body, key, max_bytes)
    raise BadRequest(415, f"Content-Type {content_type!r} is not one of {', '.join(CONTENT_TYPES)}")


def _decode_npz(body, max_bytes):
    with _NPY_PARSE:
        return _decode_npz_unlocked(body, max_bytes)


def _decode_npz_unlocked(body, max_bytes):
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as e:
        raise BadRequest(400, f"the body is not an npz archive (a zip of .npy files): {e}") from None
    if not members:
        raise BadRequest(400, "the npz archive holds no arrays")
    names = [m.filename[:-4] for m in members if m.filename.endswith(".npy")]
    if len(names) != len(members):
        raise BadRequest(400, "every member of the npz archive must be <name>.npy, got "
                         + ", ".join(repr(m.filename) for m in members if not m.filename.endswith(".npy")))
    if len(set(names)) != len(names):
        raise BadRequest(400, "the npz archive holds an array name twice")
    total = sum(m.file_size for m in members)
    if max_bytes is not None and total > max_bytes:
        raise BadRequest(413, f"the npz archive's arrays hold {total} bytes, more than the limit of {max_bytes}")
    for member, name in zip(members, names):
        try:
            with archive.open(member) as f:
                version = np.lib.format.read_magic(f)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(f)
                elif version == (2, 0):
                    shape, _, dtype = np.lib.format.read_array_header_2_0(f)
                else:
                    raise ValueError(f"npy format version {version} is not supported")
                payload = member.file_size - f.tell()
        except (ValueError, SyntaxError, EOFError, zipfile.BadZipFile, OSError) as e:
            raise BadRequest(400, f"array {name!r}: not a valid .npy member: {e}") from None
        _check_dtype(name, dtype)
        _check_size(name, shape, dtype.itemsize, payload)
    try:
        with np.load(io.BytesIO(body), allow_pickle=False) as npz:
            return {name: npz[name] for name in names}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as e:
        raise BadRequest(400, f"the npz archive could not be read: {e}") from None


def _check_dtype(name, dtype):
    if dtype.hasobject:
        raise BadRequest(400, f"array {name!r}: object arrays (pickled Python objects) are refused")
    if dtype.kind == "U":
        if dtype.itemsize == 0:
            raise BadRequest(400, f"array {name!r}: a zero-width string dtype")
    elif dtype.name not in DTYPES or dtype.fields is not None or dtype.subdtype is not None:
        raise BadRequest(400, f"array {name!r}: dtype {dtype.str} is refused; allowed: {', '.join(DTYPES)}")
    if dtype.byteorder not in ("=", "|") and dtype.byteorder != ("<" if sys.byteorder == "little" else ">"):
        raise BadRequest(400, f"array {name!r}: dtype {dtype.str} is not in native byte order")


def _check_shape(name, shape):
    if not isinstance(shape, (list, tuple)) or len(shape) > MAX_RANK or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise BadRequest(400, f"array {name!r}: shape must be a list of at most {MAX_RANK} ints >= 0, got {shape!r}")
    return math.prod(shape)


def _check_size(name, shape, itemsize, payload):
    count = _check_shape(name, shape)
    if count * itemsize != payload:
        raise BadRequest(400, f"array {name!r}: declared shape {list(shape)} x itemsize {itemsize} = "
                         f"{count * itemsize} bytes, but the payload holds {payload} bytes")


def _decode_json(body, key, max_bytes):
    try:
        doc = json.loads(body)
    except (UnicodeDecodeError, ValueError) as e:
        raise BadRequest(400, f"the body is not JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get(key), dict) or not doc[key]:
        raise BadRequest(400, f'the JSON body must be {{"{key}": {{name: {{"dtype", "shape", "data" or "b64"}}}}}}')
    arrays, b64 = {}, False
    total = 0
    for name, entry in doc[key].items():
        if not isinstance(entry, dict):
            raise BadRequest(400, f"array {name!r}: expected an object with dtype, shape and data or b64")
        dtype_name = entry.get("dtype")
        if dtype_name not in DTYPES:
            raise BadRequest(400, f"array {name!r}: dtype {dtype_name!r} is refused; allowed: {', '.join(DTYPES)}")
        shape = entry.get("shape")
        count = _check_shape(name, shape)
        if ("data" in entry) == ("b64" in entry):
            raise BadRequest(400, f"array {name!r}: give exactly one of data and b64")
        if "b64" in entry:
            if dtype_name == "str" or not isinstance(entry["b64"], str):
                raise BadRequest(400, f"array {name!r}: b64 must be a base64 string of a numeric or bool array")
            dtype = np.dtype(dtype_name).newbyteorder("<")
            try:
                raw = base64.b64decode(entry["b64"], validate=True)
            except ValueError as e:
                raise BadRequest(400, f"array {name!r}: b64 is not base64: {e}") from None
            _check_size(name, shape, dtype.itemsize, len(raw))
            array = np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="), copy=True).reshape(shape)
            b64 = True
        else:
            data = entry["data"]
            if not isinstance(data, list) or len(data) != count:
                got = len(data) if isinstance(data, list) else type(data).__name__
                raise BadRequest(400, f"array {name!r}: data must be a flat list of prod(shape) = {count} "
                                 f"elements, got {got}")
            array = _from_list(name, data, dtype_name).reshape(shape)
        total += array.nbytes
        if max_bytes is not None and total > max_bytes:
            raise BadRequest(413, f"the arrays hold more than the limit of {max_bytes} bytes")
        arrays[name] = array
    return arrays, "json-b64" if b64 else "json"


def _from_list(name, data, dtype_name):
    kinds = {"str": (str,), "bool": (bool,)}.get(dtype_name)
    if kinds is None:
        kinds = (int,) if dtype_name[0] in "iu" else (int, float)
    if not all(isinstance(v, kinds) and (dtype_name == "bool" or not isinstance(v, bool)) for v in data):
        raise BadRequest(400, f"array {name!r}: every element of data must be {' or '.join(k.__name__ for k in kinds)} "
                         f"for dtype {dtype_name}")
    try:
        with np.errstate(over="raise"):
            return np.array(data, dtype=np.str_ if dtype_name == "str" else np.dtype(dtype_name))
    except (OverflowError, ValueError, FloatingPointError) as e:
        raise BadRequest(400, f"array {name!r}: data does not fit {dtype_name}: {e}") from None
