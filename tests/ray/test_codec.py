"""nonzero_ort.ray.codec, the HTTP bodies of the Serve deployment, in this process: every dtype
round-trips exactly in each format, and every broken rule is refused with its status and message."""

import base64
import io
import json
import pickle
import zipfile

import numpy as np
import pytest

from nonzero_ort.ray.codec import BadRequest, decode_request, decode_response, encode_request, encode_response

LIMIT = 1 << 20


def arrays_of_every_type():
    rng = np.random.default_rng(7)
    out = {}
    for name in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
        info = np.iinfo(name)
        out[name] = rng.integers(info.min, info.max, (2, 3), dtype=name, endpoint=True)
    for name in ("float16", "float32", "float64"):
        a = rng.standard_normal(7).astype(name)
        a[:4] = [np.nan, -0.0, np.inf, -np.inf]
        out[name] = a
    out["bool"] = rng.random((3, 1, 2)) < 0.5
    out["str"] = np.array([["", "a"], ["zß", "long text"]])
    out["scalar"] = np.array(2.5, dtype=np.float32)
    out["empty"] = np.zeros((2, 0), dtype=np.int64)
    return out


@pytest.mark.parametrize("fmt", ["npz", "json", "json-b64"])
def test_every_dtype_round_trips_exactly(fmt):
    arrays = arrays_of_every_type()
    body, content_type = encode_request(arrays, fmt)
    got, reply = decode_request(body, content_type, LIMIT)
    assert reply == fmt
    assert sorted(got) == sorted(arrays)
    for name, a in arrays.items():
        b = got[name]
        assert (b.dtype, b.shape) == (a.dtype, a.shape), name
        assert (b == a).all() if a.dtype.kind == "U" else b.tobytes() == a.tobytes(), name
    body, content_type = encode_response(got, reply)
    back = decode_response(body, content_type)
    assert all(back[n].tobytes() == arrays[n].tobytes() for n in arrays if arrays[n].dtype.kind != "U")


def npz_member(name, header_shape, dtype, payload):
    """A zip with one .npy member whose header says `header_shape` and whose data is `payload`."""
    npy = io.BytesIO()
    np.lib.format.write_array_header_1_0(npy, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                              "fortran_order": False, "shape": header_shape})
    npy.write(payload)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(name + ".npy", npy.getvalue())
    return out.getvalue()


def object_npz():
    out = io.BytesIO()
    np.savez(out, x=np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    return out.getvalue()


def json_body(entry):
    return json.dumps({"inputs": {"x": entry}}).encode()


NPZ, JSON = "application/x-npz", "application/json"
REFUSED = [
    (b"\x00garbage bytes", NPZ, 400, "the body is not an npz archive"),
    (pickle.dumps({"x": np.zeros(3)}), NPZ, 400, "the body is not an npz archive"),
    (object_npz(), NPZ, 400, "object arrays (pickled Python objects) are refused"),
    (npz_member("x", (10**12,), "float32", b"\0" * 16), NPZ, 400,
     "declared shape [1000000000000] x itemsize 4 = 4000000000000 bytes, but the payload holds 16 bytes"),
    (npz_member("x", (3,), "float32", b"\0" * 16), NPZ, 400, "= 12 bytes, but the payload holds 16 bytes"),
    (npz_member("x", (2,), "complex64", b"\0" * 16), NPZ, 400, "dtype <c8 is refused"),
    (npz_member("x", (2,), ">f4", b"\0" * 8), NPZ, 400, "is not in native byte order"),
    (npz_member("x", (LIMIT,), "float32", b"\0" * 4 * LIMIT), NPZ, 413, "more than the limit of 1048576"),
    (io.BytesIO().getvalue(), NPZ, 400, "the body is not an npz archive"),
    (b"{not json", JSON, 400, "the body is not JSON"),
    (b'{"outputs": {}}', JSON, 400, 'the JSON body must be {"inputs"'),
    (json_body({"dtype": "float32", "shape": [10**9], "data": [1.0]}), JSON, 400,
     "data must be a flat list of prod(shape) = 1000000000 elements, got 1"),
    (json_body({"dtype": "float32", "shape": [10**9, 10**9], "b64": "AAAAAA=="}), JSON, 400,
     "declared shape [1000000000, 1000000000] x itemsize 4"),
    (json_body({"dtype": "object", "shape": [1], "data": [1]}), JSON, 400, "dtype 'object' is refused"),
    (json_body({"dtype": "int8", "shape": [1], "data": [300]}), JSON, 400, "data does not fit int8"),
    (json_body({"dtype": "int32", "shape": [1], "data": [1.5]}), JSON, 400, "must be int for dtype int32"),
    (json_body({"dtype": "int32", "shape": [-1], "data": []}), JSON, 400, "shape must be a list of at most 64 ints >= 0"),
    (json_body({"dtype": "int32", "shape": [1], "b64": "%%%"}), JSON, 400, "b64 is not base64"),
    (json_body({"dtype": "int32", "shape": [1]}), JSON, 400, "give exactly one of data and b64"),
    (b"x=1", "text/plain", 415, "is not one of application/x-npz, application/json"),
]


@pytest.mark.parametrize("body, content_type, status, message", REFUSED)
def test_broken_rules_are_refused_with_status_and_message(body, content_type, status, message):
    with pytest.raises(BadRequest) as e:
        decode_request(body, content_type, LIMIT)
    assert e.value.status == status
    assert message in str(e.value)


def test_b64_is_little_endian_bytes():
    body = json_body({"dtype": "int32", "shape": [2], "b64": base64.b64encode(b"\x01\0\0\0\xff\xff\xff\xff").decode()})
    got, fmt = decode_request(body, JSON, LIMIT)
    assert fmt == "json-b64" and got["x"].dtype == np.int32 and got["x"].tolist() == [1, -1]


def test_npz_bodies_decode_exactly_from_many_threads_at_once():
    # A server decodes requests, and a load client replies, in several threads; numpy's .npy
    # header parser (ast.literal_eval) raced on CPython 3.11 in CI (python/cpython#106905).
    import sys
    import threading

    arrays = arrays_of_every_type()
    body, content_type = encode_request(arrays, "npz")
    errors, lock = [], threading.Lock()

    def decode_many():
        for _ in range(200):
            try:
                got = decode_response(body, content_type)
                assert list(got) == list(arrays)
                for name, a in arrays.items():
                    assert got[name].dtype == a.dtype and got[name].shape == a.shape
                    assert np.array_equal(got[name], a, equal_nan=a.dtype.kind == "f")
            except Exception as e:  # collected: an exception in a thread would not fail the test
                with lock:
                    errors.append(repr(e))
                return

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often, inside the parser too
    try:
        threads = [threading.Thread(target=decode_many) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not errors, errors[:3]
