"""Worker classes the tests hand to Ray. The workers cannot import this module by name (it is on
pytest's sys.path, not theirs): tests/ray/conftest.py has Ray pickle it by value."""

import os
import time

from nonzero_ort.ray import OnnxPredictor


class ReportingPredictor(OnnxPredictor):
    """OnnxPredictor that reports its pid (a file named after it in `pid_dir`, written when a batch
    starts) and takes `delay` seconds more per batch, so that a test can kill it mid-job."""

    def __init__(self, model, *, pid_dir, delay, **kwargs):
        super().__init__(model, **kwargs)
        self.pid_dir = pid_dir
        self.delay = delay

    def __call__(self, batch):
        with open(os.path.join(self.pid_dir, str(os.getpid())), "a") as f:
            f.write(f"{len(next(iter(batch.values())))}\n")
        time.sleep(self.delay)
        return super().__call__(batch)
