"""A lost node loses nothing (issue 39, item 2): a cluster of three one-CPU nodes (the head and two
workers), where a worker node is removed as a crash would remove it (`Cluster.remove_node` with
allow_graceful=False: SIGKILL to its raylet, object store and so every worker process on it):

- while a map_batches job over 2,000 rows runs: every row comes back exactly once, equal to one
  in-process session's result;
- while 8 clients send 1,000 requests to Serve, the node of a replica: no request is lost (a
  client retries once when its request fails), the retries are counted, and Serve serves again
  from a new replica on another node.

The GCS declares a node dead after HEALTH's checks fail (about 2.5 s here; Ray's defaults are
longer). The model reaches every actor as a path every node can read: a restarted actor on
another node opens it again, and nothing depends on an object the lost node held. Before each test
the cluster is brought back to three nodes, as an autoscaler would replace the lost one."""

import threading
import time
import warnings

import numpy as np
import pytest
from conftest import MODELS, random_rows, report, same, started_cluster
from serving import MODEL, load, make_cases, replicas, running_replicas, serving

import cluster
from workers import ReportingPredictor, reporting_server

from nonzero_ort.ray import make_session
from nonzero_ort.ray.data import MAX_TASK_RETRIES

FLOAT = str(MODELS / "nonzero_opset13_float" / "model.onnx")  # x: float32 [3, 4] -> y
NODES = 3
# The GCS's health checks of each raylet (Ray's _system_config): one every 500 ms, a check that
# takes over 1 s fails, and 5 failed checks in a row make the node dead.
HEALTH = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500,
          "health_check_timeout_ms": 1000, "health_check_failure_threshold": 5}


@pytest.fixture(scope="module")
def three_nodes():
    with started_cluster(NODES, system_config=HEALTH) as c:
        yield c


@pytest.fixture
def full_cluster(three_nodes):
    """The module's cluster with three live nodes again (one is added per node a test removed)."""
    import ray

    while len(three_nodes.worker_nodes) < NODES - 1:
        three_nodes.add_node(**cluster.NODE_ARGS)
    deadline = time.time() + 60
    while sum(n["Alive"] for n in ray.nodes()) != NODES and time.time() < deadline:
        time.sleep(0.2)
    assert sum(n["Alive"] for n in ray.nodes()) == NODES, ray.nodes()
    return three_nodes


def remove_node_of(c, node_id):
    """Removes the worker node with that id as a crash would (every process on it SIGKILLed);
    returns the time it took."""
    node = next((n for n in c.worker_nodes if n.node_id == node_id), None)
    assert node is not None, f"node {node_id} is the head or not in the cluster"
    started = time.time()
    c.remove_node(node, allow_graceful=False)
    return time.time() - started


def test_a_worker_node_removed_mid_job_loses_no_row(full_cluster, tmp_path):
    """A pool of two map_batches workers on three nodes. The first worker to report from a node
    other than the head loses its node mid-job: Ray restarts the worker on the free node
    (max_restarts) and runs its batches again (max_task_retries); outputs held on the lost node are
    made again from their lineage."""
    import ray.data

    rows = random_rows(np.random.default_rng(39), 2000)
    reference = make_session(FLOAT)
    expected = [reference.run(None, {"x": x})[0] for x in rows]
    head = full_cluster.head_node.node_id
    ds = ray.data.from_items([{"id": i, "x": x} for i, x in enumerate(rows)], override_num_blocks=40)
    with warnings.catch_warnings():  # as map_model: Ray 2.60 has no other way to set the actor options
        warnings.filterwarnings("ignore", message="`ray_remote_args` is deprecated")
        out = ds.map_batches(
            ReportingPredictor,
            # The model as a path: each worker, and each restart of one, opens the file itself.
            fn_constructor_kwargs={"model": FLOAT, "pid_dir": str(tmp_path), "delay": 0.1, "worker_column": "pid"},
            batch_size=25, batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=2),
            num_cpus=1, max_restarts=2, max_task_retries=MAX_TASK_RETRIES,
        )
    result, errors = [], []

    def consume():
        try:
            result.extend(out.take_all())
        except Exception as e:  # the assertion below shows it
            errors.append(e)

    def reported():
        """{pid: node id} of the workers that started a batch."""
        return {int(p.name): p.read_text().split()[-1] for p in tmp_path.iterdir() if p.read_text().strip()}

    started = time.time()
    thread = threading.Thread(target=consume, daemon=True)
    thread.start()
    victim = None
    while victim is None and thread.is_alive() and time.time() - started < 120:
        victim = next(((pid, node) for pid, node in reported().items() if node != head), None)
        time.sleep(0.05)
    assert victim is not None, f"no worker reported from a worker node within 120 s; the job: {errors or 'running'}"
    removed_at = time.time() - started
    assert thread.is_alive(), "the job ended before the node was removed"
    rows_before = sum(int(line.split()[0]) for p in tmp_path.iterdir() for line in p.read_text().splitlines())
    removal = remove_node_of(full_cluster, victim[1])
    thread.join(timeout=300)
    assert not thread.is_alive(), "the job did not finish within 300 s of the node's removal"
    seconds = time.time() - started
    assert not errors, f"the job failed after the node's removal: {errors[0]!r}"
    ids = sorted(int(r["id"]) for r in result)
    assert ids == list(range(len(rows))), "every row must come back exactly once"
    for r in result:
        assert same(r["y"], expected[int(r["id"])])
    workers = reported()
    nodes = set(workers.values())
    # The lost worker's batches ran again in its restart, on another node, which opened the model itself.
    assert len(workers) >= 3 and len(nodes) >= 2, workers
    report("data-node-loss", f"{len(rows)} rows, 2 workers on 3 one-CPU nodes: the node of worker {victim[0]} "
           f"removed (SIGKILL, {removal:.1f} s) {removed_at:.1f} s into the job, after {rows_before} rows had "
           f"started; every row back once, equal; the job took {seconds:.1f} s; {len(workers)} worker processes "
           f"on {len(nodes)} nodes ran batches")


def test_the_node_of_a_serve_replica_removed_under_load_loses_no_request(full_cluster):
    from nonzero_ort.ray import ModelServer

    _, bodies, expected, _ = make_cases(50)
    head = full_cluster.head_node.node_id
    # serve_app's options, with a replica class that names itself in each reply; the model is a path.
    app = ModelServer.options(
        func_or_class=reporting_server(), num_replicas=2, ray_actor_options={"num_cpus": 1},
        max_ongoing_requests=8, health_check_period_s=2.0, health_check_timeout_s=10.0,
    ).bind(MODEL)
    with serving(app) as port:
        before = replicas()
        assert len(before) == 2, before
        victim = next(aid for aid, r in before.items() if r["node"] != head)  # one CPU a node: one on a worker
        removed = threading.Event()
        removal = []

        def remove_on(done):
            if done == 200 and not removed.is_set():
                removed.set()

        def remover():
            if removed.wait(timeout=300):
                removal.append(remove_node_of(full_cluster, before[victim]["node"]))

        thread = threading.Thread(target=remover)
        thread.start()
        total = 1000
        started = time.time()
        why = {}
        latencies, retried, failures = load(port, bodies, expected, total, clients=8, attempts=2,
                                            on_progress=remove_on, failed_tries=why)
        seconds = time.time() - started
        removed.set()
        thread.join()
        assert removal, "the node was not removed (the load ended before 200 answers)"
        assert not failures, failures[:3]
        assert len(latencies) == total
        print(f"\n{len(retried)} of {total} requests were retried once by their client after the node's "
              f"removal; their first tries: {why or 'none'}")

        deadline = time.time() + 120
        while (running_replicas() < 2 or victim in replicas()) and time.time() < deadline:
            time.sleep(0.5)
        after = replicas()
        assert running_replicas() == 2 and victim not in after and len(after) == 2, after
        new = set(after) - set(before)
        assert len(new) == 1, (before, after)
        # Serving after the loss: every answer right, none from the lost replica, and the new one
        # among those that answer. The proxy learns of the new replica a little after the
        # controller reports it running, so the requests go in rounds of 100, at most 10.
        served, rounds = {}, 0
        while not new & set(served) and rounds < 10:
            rounds += 1
            _, again_retried, again_failures = load(port, bodies, expected, 100, clients=8, served_by=served)
            assert not again_failures and not again_retried, again_failures[:3]
        assert victim not in served and set(served) <= set(after), (served, after)
        assert new & set(served), f"the new replica {new} served none of {rounds * 100} requests: {served}"
    report("serve-node-loss", f"the node of replica {victim[:8]} removed (SIGKILL, {removal[0]:.1f} s) after 200 of "
           f"{total} answers (8 clients, one retry each): 0 lost, {len(retried)} retried (first tries: "
           f"{', '.join(f'{n} x {w}' for w, n in sorted(why.items())) or 'none'}); {seconds:.1f} s for the "
           f"{total}; then Serve ran a new replica on another node, which answered {served[next(iter(new))]} of "
           f"{rounds * 100} requests sent once it was running")
