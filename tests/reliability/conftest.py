import os
import pathlib
import shutil
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))


@pytest.fixture(scope="session")
def fault_injection_lib():
    """A libnonzero_ort.so with the `fault-injection` cargo feature (NONZERO_ORT_INJECT_PANIC),
    which the shipped library lacks. NONZERO_ORT_FAULT_LIB names a prebuilt one; otherwise it is
    built here, CPU-only (the panic path does not involve the GPU), in its own target directory so
    that target/release keeps the shipped library."""
    prebuilt = os.environ.get("NONZERO_ORT_FAULT_LIB")
    if prebuilt:
        return pathlib.Path(prebuilt)
    target = ROOT / "target/fault-injection"
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "-p", "nonzero-ort", "--no-default-features",
         "--features", "fault-injection", "--target-dir", str(target)],
        cwd=ROOT, check=True,
    )
    lib = target / "release/libnonzero_ort.so"
    assert lib.exists(), f"cargo built no {lib}"
    return lib
