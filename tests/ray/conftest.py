"""A real Ray cluster on this machine (scripts/ray/cluster.py): 2 nodes of one CPU each, every
node on 127.0.0.1, per test module. Run by the ray stage of scripts/test, in .venv-ray."""

import contextlib
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "ray"))
import cluster  # noqa: E402 (sets Ray's environment before ray is imported)

cluster.use_loopback()
MODELS = ROOT / "models"


@contextlib.contextmanager
def started_cluster(nodes, system_config=None):
    """cluster.local_cluster with what the tests need: workers.py pickled by value, Ray Data quiet
    and waiting up to 120 s for its actors."""
    import logging

    with cluster.local_cluster(nodes, system_config=system_config) as c:
        import ray.cloudpickle
        import ray.data
        import workers

        ray.cloudpickle.register_pickle_by_value(workers)

        logging.getLogger("ray.data").setLevel(logging.WARNING)
        ray.data.DataContext.get_current().wait_for_min_actors_s = 120
        yield c


@pytest.fixture(scope="module")
def ray_cluster():
    with started_cluster(2) as c:
        yield c


def random_rows(rng, count, shape=(3, 4)):
    """`count` float32 arrays with half their elements zero (some rows all zero)."""
    rows = []
    for i in range(count):
        x = rng.standard_normal(shape).astype(np.float32)
        x[rng.random(shape) < (1.0 if i % 17 == 0 else 0.5)] = 0
        rows.append(x)
    return rows


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def report(name, text):
    """Prints a measured figure and appends it to build/ray/report.txt (read for the docs)."""
    print(f"\n[{name}] {text}")
    out = ROOT / "build" / "ray"
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "report.txt", "a") as f:
        f.write(f"{name}: {text}\n")


