"""Ray Serve: nonzero_ort.ray.serve_app on the 2-node cluster, two replicas, the proxy on the head
only, on 127.0.0.1 at a free port. Bounded load from 8 clients, a replica killed during load,
and bad requests, each checked against one in-process session, exactly."""

import json
import os
import signal
import statistics
import time

import numpy as np
import pytest
from conftest import MODELS, report, same
from serving import MODEL, Client, load, make_cases, replica_pids, running_replicas, serving

from nonzero_ort.ray import decode_response, encode_request

LIMIT = 1 << 20


@pytest.fixture(scope="module")
def server(ray_cluster):
    from nonzero_ort.ray import serve_app

    with serving(serve_app(MODEL, num_replicas=2, max_body_bytes=LIMIT)) as port:
        yield port


@pytest.fixture(scope="module")
def cases():
    return make_cases(50)


def test_bounded_load_from_8_clients_has_no_error(server, cases):
    feeds, bodies, expected, session = cases
    total = 2000
    started = time.perf_counter()
    latencies, retried, failures = load(server, bodies, expected, total, clients=8)
    seconds = time.perf_counter() - started
    assert not failures, failures[:3]
    assert len(latencies) == total and not retried
    # The same inputs through one session in this process, one at a time.
    started = time.perf_counter()
    for i in range(total):
        session.run(None, feeds[i % len(feeds)])
    local = time.perf_counter() - started
    q = statistics.quantiles(latencies, n=100)
    report("serve-load", f"{total} requests (npz, 1024 float32 scores), 8 clients, 2 replicas: 0 errors; "
           f"p50 {q[49] * 1e3:.1f} ms, p99 {q[98] * 1e3:.1f} ms, {total / seconds:.0f} requests/s; one in-process "
           f"session: {total / local:.0f} runs/s ({total / seconds / (total / local):.3f}x of it)")


def test_a_replica_killed_during_load_loses_no_request(server, cases):
    _, bodies, expected, _ = cases
    before = replica_pids()
    assert len(before) == 2, before
    killed = []

    def kill_once(done):
        if done == 200 and not killed:
            killed.append(before[0])
            os.kill(before[0], signal.SIGKILL)

    total = 1000
    latencies, retried, failures = load(server, bodies, expected, total, clients=8, attempts=10,
                                        on_progress=kill_once)
    assert killed, "the replica was not killed (the load ended before 200 answers)"
    assert not failures, failures[:3]
    assert len(latencies) == total
    deadline = time.time() + 120
    while running_replicas() < 2 and time.time() < deadline:
        time.sleep(0.5)
    after = replica_pids()
    assert running_replicas() == 2 and before[0] not in after and len(after) == 2, after
    report("serve-kill", f"replica {killed[0]} SIGKILLed after 200 of {total} answers (8 clients): 0 lost, "
           f"{len(retried)} needed a retry by the client; Serve replaced it ({len(after)} replicas running)")


def good(client, cases, fmt="npz"):
    feeds, _, expected, _ = cases
    body, ctype = encode_request(feeds[0], fmt)
    status, reply_type, data = client.request("POST", body, ctype)
    assert status == 200, data
    assert all(same(a, b) for a, b in zip(decode_response(data, reply_type).values(), expected[0]))


def bad_cases(cases):
    feeds = cases[0]
    scores, threshold = feeds[0]["scores"], feeds[0]["threshold"]
    import pickle

    from test_codec import npz_member

    return [
        ("missing input", encode_request({"scores": scores}, "npz"), 400, "missing input 'threshold'"),
        ("unknown input", encode_request({**feeds[0], "x": scores}, "npz"), 400, "unknown input 'x'"),
        ("wrong dtype", encode_request({"scores": scores.astype(np.float64), "threshold": threshold}, "npz"), 400,
         "input 'scores': dtype float64, the model takes float32"),
        ("wrong rank", encode_request({"scores": scores.reshape(2, -1), "threshold": threshold}, "json-b64"), 400,
         "input 'scores': shape [2, 512], the model takes rank 1"),
        ("garbage bytes", (np.random.default_rng(5).bytes(64), "application/x-npz"), 400, "the body is not an npz archive"),
        ("a pickle", (pickle.dumps(feeds[0]), "application/x-npz"), 400, "the body is not an npz archive"),
        ("huge declared shape", (npz_member("scores", (1 << 40,), "float32", b"\0" * 64), "application/x-npz"),
         400, "declared shape [1099511627776] x itemsize 4"),
        ("body over the limit", (b"\0" * (LIMIT + 1), "application/x-npz"), 413, "more than the limit of 1048576"),
        ("another content type", (b"scores=1", "text/plain"), 415, "is not one of"),
    ]


def test_bad_requests_get_a_4xx_with_a_message_and_the_replicas_keep_serving(server, cases):
    client = Client(server)
    before = replica_pids()
    for what, (body, ctype), status, message in bad_cases(cases):
        got, reply_type, data = client.request("POST", body, ctype)
        assert got == status, (what, got, data[:300])
        assert reply_type == "application/json" and message in json.loads(data)["error"], (what, data[:300])
        good(client, cases, "npz" if what != "wrong rank" else "json")
    got, _, data = client.request("PUT", b"")
    assert got == 405 and "POST the inputs" in json.loads(data)["error"]
    got, _, data = client.request("GET")
    described = json.loads(data)
    assert got == 200 and [i["name"] for i in described["inputs"]] == ["scores", "threshold"]
    assert described["max_body_bytes"] == LIMIT
    good(client, cases, "json-b64")
    assert replica_pids() == before, "a replica was restarted"
    report("serve-bad", f"{len(bad_cases(cases)) + 1} kinds of bad request answered 4xx with a message; "
           "the same replica processes went on serving")


def test_the_replica_class_takes_the_library_options_and_limits():
    """ModelServer's class, in this process: onnx_domain=False reaches the registration (an
    ONNX-domain NonZero on double is then ONNX Runtime's, which has none), and bad limits are refused."""
    from nonzero_ort.ray import ModelServer

    replica_class = ModelServer.func_or_class
    double = str(MODELS / "nonzero_opset13_double" / "model.onnx")
    assert [i["name"] for i in replica_class(double).describe()["inputs"]] == ["x"]
    with pytest.raises(Exception, match="NOT_IMPLEMENTED"):
        replica_class(double, onnx_domain=False)
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        replica_class(double, device="tpu")
    with pytest.raises(ValueError, match="max_body_bytes must be an int > 0, got 0"):
        replica_class(double, max_body_bytes=0)
