"""Ray Serve helpers of test_serve.py and test_node_loss.py: Serve started on the head at a free
port of 127.0.0.1, the request bodies and their expected replies, an HTTP client that may retry,
a load of N requests from several client threads, and the replicas from the GCS actor table."""

import contextlib
import http.client
import threading
import time

import numpy as np
from conftest import MODELS, same

import cluster
from nonzero_ort.ray import decode_response, encode_request, make_session

MODEL = str(MODELS / "threshold_filter_opset13" / "model.onnx")  # scores: float32 [N], threshold: float32 []
ROUTE = "/nonzero"
APP = "nonzero"


# Serve's own actors, which a shutdown kills after it returns.
SERVE_ACTORS = ("ServeController", "ProxyActor", "ServeReplica:")


@contextlib.contextmanager
def serving(app):
    """Serve with the proxy on the head only, at a free port of 127.0.0.1, running `app` at ROUTE;
    yields the port; Serve is shut down on exit, and its actors are gone before this returns:
    `serve.shutdown()` kills the proxy after it returns, and a `serve.start` in the same cluster
    before that got that dying proxy (ActorDiedError, "killed by ray.kill", seen on a loaded
    2-core machine)."""
    from ray import serve

    port = cluster.free_port()
    serve.start(proxy_location="HeadOnly", http_options={"host": "127.0.0.1", "port": port},
                logging_config={"enable_access_log": False})
    try:
        serve.run(app, name=APP, route_prefix=ROUTE)
        yield port
    finally:
        serve.shutdown()
        deadline = time.time() + 60
        while any(cluster.actors(name) for name in SERVE_ACTORS) and time.time() < deadline:
            time.sleep(0.2)


def inputs(count, n=1024):
    rng = np.random.default_rng(11)
    out = []
    for i in range(count):
        scores = rng.random(n, dtype=np.float32)
        scores[rng.random(n) < 0.5] = 0
        out.append({"scores": scores, "threshold": np.array(0.25 + 0.5 * (i % 3) / 3, dtype=np.float32)})
    return out


def make_cases(count=50):
    """(feeds, npz bodies, expected outputs, the in-process session that computed them)."""
    feeds = inputs(count)
    session = make_session(MODEL)
    names = [o.name for o in session.get_outputs()]
    expected = [session.run(names, f) for f in feeds]
    return feeds, [encode_request(f, "npz")[0] for f in feeds], expected, session


class Client:
    """One keep-alive connection; `post` retries (new connection, backoff) on a connection error
    or a 5xx, up to `attempts` times, and says how many attempts it took. `replica` is the
    x-replica-actor header of the last reply (workers.reporting_server's replicas send it)."""

    def __init__(self, port):
        self.port = port
        self.conn = None
        self.replica = None
        self.failed_tries = []  # why each try that was tried again failed: a status or an exception

    def request(self, method, body=b"", content_type="application/x-npz"):
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            self.conn.request(method, ROUTE, body=body, headers={"Content-Type": content_type})
            r = self.conn.getresponse()
            self.replica = r.getheader("x-replica-actor")
            return r.status, r.getheader("Content-Type"), r.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = None
            raise

    def post(self, body, content_type, attempts=1):
        for attempt in range(1, attempts + 1):
            try:
                status, ctype, data = self.request("POST", body, content_type)
                if status < 500 or attempt == attempts:
                    return status, ctype, data, attempt
                self.failed_tries.append(f"HTTP {status}")
            except (OSError, http.client.HTTPException) as e:
                if attempt == attempts:
                    raise
                self.failed_tries.append(type(e).__name__)
            time.sleep(0.1 * attempt)


def load(port, bodies, expected, total, clients, attempts=1, on_progress=None, served_by=None, failed_tries=None):
    """`total` requests from `clients` threads, request i with bodies[i % len]; returns latencies
    (s), requests that needed more than one attempt, and failures (wrong or lost answers).
    `served_by`, a dict, gets {replica actor id: requests it answered} (from x-replica-actor);
    `failed_tries`, a dict, gets {why: count} of the tries that were tried again."""
    latencies, retried, failures = [], [], []
    counter = iter(range(total))
    lock = threading.Lock()

    def worker():
        client = Client(port)
        while True:
            with lock:
                i = next(counter, None)
            if i is None:
                tally(client)
                return
            start = time.perf_counter()
            try:
                status, ctype, data, tries = client.post(bodies[i % len(bodies)], "application/x-npz", attempts)
            except Exception as e:
                with lock:
                    failures.append((i, repr(e)))
                continue
            try:
                ok = status == 200 and all(same(a, b) for a, b in zip(
                    decode_response(data, ctype).values(), expected[i % len(bodies)]))
            except Exception as e:  # an undecodable reply is a wrong answer, not a lost thread
                ok, data = False, repr(e).encode()
            with lock:
                latencies.append(time.perf_counter() - start)
                if tries > 1:
                    retried.append(i)
                if not ok:
                    failures.append((i, status, data[:200]))
                if served_by is not None:
                    served_by[client.replica] = served_by.get(client.replica, 0) + 1
                if on_progress:
                    on_progress(len(latencies))

    def tally(client):
        with lock:
            for why in client.failed_tries if failed_tries is not None else ():
                failed_tries[why] = failed_tries.get(why, 0) + 1

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "the load did not finish within 600 s"
    return latencies, retried, failures


def replicas():
    """{actor id: {"pid", "node"}} of the live Serve replicas."""
    return cluster.actors("ServeReplica:")


def replica_pids():
    return sorted(r["pid"] for r in replicas().values())


def running_replicas():
    from ray import serve

    app = serve.status().applications[APP]
    return next(iter(app.deployments.values())).replica_states.get("RUNNING", 0)
