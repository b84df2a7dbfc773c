"""Worker classes the tests hand to Ray. The workers cannot import this module by name (it is on
pytest's sys.path, not theirs): tests/ray/conftest.py has Ray pickle it by value."""

import os
import time

from nonzero_ort.ray import OnnxPredictor


def node_id():
    """The id (hex) of the Ray node this process runs on."""
    import ray

    return ray.get_runtime_context().get_node_id()


class ReportingPredictor(OnnxPredictor):
    """OnnxPredictor that reports its pid and node (a file named after the pid in `pid_dir`, one
    line "<rows> <node id>" written when a batch starts) and takes `delay` seconds more per batch,
    so that a test can kill it, or remove its node, mid-job."""

    def __init__(self, model, *, pid_dir, delay, **kwargs):
        super().__init__(model, **kwargs)
        self.pid_dir = pid_dir
        self.delay = delay
        self.node = node_id()

    def __call__(self, batch):
        with open(os.path.join(self.pid_dir, str(os.getpid())), "a") as f:
            f.write(f"{len(next(iter(batch.values())))} {self.node}\n")
        time.sleep(self.delay)
        return super().__call__(batch)


def reporting_server():
    """nonzero_ort.ray.ModelServer's replica class with a header on every reply that names the
    replica's actor (x-replica-actor) and node (x-replica-node), so that a client sees which
    replica served it. Made on first use: importing Ray Serve is left to the tests that serve."""
    import ray
    from nonzero_ort.ray import ModelServer

    class ReportingServer(ModelServer.func_or_class):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.actor = ray.get_runtime_context().get_actor_id()
            self.node = node_id()

        async def __call__(self, request):
            response = await super().__call__(request)
            response.headers["x-replica-actor"] = self.actor
            response.headers["x-replica-node"] = self.node
            return response

    return ReportingServer
