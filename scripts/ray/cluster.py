"""A Ray cluster for `scripts/run-models --ray` and tests/ray: local nodes of one CPU each
(`ray.cluster_utils.Cluster`, a real multi-node cluster on one machine), or an existing cluster.

The settings of the issue that asked for this (27): no usage stats, no dashboard, one CPU a node,
temp files under one directory of /tmp that is removed at the end, and everything on 127.0.0.1.
"""

import contextlib
import os
import shutil
import socket
import sys
import tempfile

# Read by Ray when it is imported and when its processes start: set before `import ray`.
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_DEDUP_LOGS", "0")
# Ray Data's progress bars and Serve's access log would be most of the output.
os.environ.setdefault("RAY_DATA_DISABLE_PROGRESS_BARS", "1")


def use_loopback():
    """Every node of a local cluster on 127.0.0.1, before `import ray`. Ray takes the machine's
    own address otherwise, and passing node_ip_address=127.0.0.1 to the nodes alone leaves the GCS
    client on that address (it timed out here). This switch makes Ray use the loopback address,
    as it does on macOS and Windows (ray/_private/services.py, get_node_ip_address)."""
    if "ray" in sys.modules:
        raise RuntimeError("use_loopback() must run before ray is imported")
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def ray_tmpdir():
    """RAY_TMPDIR (where Ray writes sessions, sockets and logs) under a fresh /tmp directory, kept
    short: Unix socket paths are limited to 107 bytes. Removed on exit unless it was set before."""
    if os.environ.get("RAY_TMPDIR"):
        yield os.environ["RAY_TMPDIR"]
        return
    path = tempfile.mkdtemp(prefix="nz-ray-", dir="/tmp")
    os.environ["RAY_TMPDIR"] = path
    try:
        yield path
    finally:
        os.environ.pop("RAY_TMPDIR", None)
        shutil.rmtree(path, ignore_errors=True)


NODE_ARGS = {"num_cpus": 1, "include_dashboard": False, "object_store_memory": 200 << 20}


@contextlib.contextmanager
def local_cluster(nodes, runtime_env=None, system_config=None):
    """A head and `nodes - 1` more nodes, one CPU each, with the driver connected; shut down on exit.
    `system_config`: the head's `_system_config` (Ray's internal settings, such as the GCS's
    node health checks), which the whole cluster follows."""
    if nodes < 1:
        raise ValueError(f"a cluster needs at least 1 node, got {nodes}")
    with ray_tmpdir():
        import ray
        from ray.cluster_utils import Cluster

        head_args = dict(NODE_ARGS, **({"_system_config": system_config} if system_config else {}))
        cluster = Cluster(initialize_head=True, head_node_args=head_args)
        try:
            for _ in range(nodes - 1):
                cluster.add_node(**NODE_ARGS)
            cluster.wait_for_nodes()
            ray.init(address=cluster.address, runtime_env=runtime_env, log_to_driver=False)
            try:
                _check_nodes(ray, nodes)
                yield cluster
            finally:
                ray.shutdown()
        finally:
            cluster.shutdown()


@contextlib.contextmanager
def existing_cluster(address, runtime_env=None):
    import ray

    ray.init(address=address, runtime_env=runtime_env, log_to_driver=False)
    try:
        yield None
    finally:
        ray.shutdown()


def _check_nodes(ray, nodes):
    alive = [n for n in ray.nodes() if n["Alive"]]
    cpus = sum(n["Resources"].get("CPU", 0) for n in alive)
    if len(alive) != nodes or cpus != nodes:
        raise RuntimeError(f"the local cluster has {len(alive)} nodes and {cpus} CPUs, expected {nodes} of each")


def actors(class_prefix):
    """{actor id: {"pid", "node"}} of the live actors whose class name starts with `class_prefix`,
    from the GCS actor table (no dashboard needed); "node" is the node's id (hex)."""
    from ray._private import state

    return {aid: {"pid": a["Pid"], "node": a["Address"]["NodeID"]} for aid, a in state.actors().items()
            if a["ActorClassName"].startswith(class_prefix) and a["State"] == "ALIVE" and a.get("Pid")}


def actor_pids(class_prefix):
    """{actor id: pid} of the live actors whose class name starts with `class_prefix`."""
    return {aid: a["pid"] for aid, a in actors(class_prefix).items()}


def main():
    """`python scripts/ray/cluster.py N`: a local cluster of N nodes for another process to use
    (`run-models --address`); prints its address, and shuts it down when stdin closes."""
    use_loopback()
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    with local_cluster(nodes) as c:
        print(c.address, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
