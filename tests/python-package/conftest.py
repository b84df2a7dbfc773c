"""The nonzero-ort wheel, installed into a fresh virtual environment.

The wheel is $NONZERO_WHEEL (scripts/test builds it) or, without it, one built here with the
maturin of .venv-build. The environment is made with `python -m venv` in a temporary directory
and gets the wheel plus requirements/ort-1.31.txt (or $NONZERO_PACKAGE_REQUIREMENTS) from PyPI.
Everything that touches the package runs in that environment's interpreter, in a scratch
directory, with `-I` (isolated mode), so nothing from this checkout can be imported instead.

The environment is made by this interpreter, or by $NONZERO_PACKAGE_PYTHON: the platforms stage
passes an aarch64 CPython (a script that runs it under qemu-user, scripts/platforms/python.sh),
so that pip picks that platform's wheels and the tests run there.

This conftest must not import onnxruntime or nonzero_ort: the tests run with the main .venv's
pytest only to drive the fresh environment.
"""

import json
import os
import pathlib
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
# The onnxruntime/numpy/onnx/pytest pins of the fresh venv (the package stage also runs 1.17.3).
REQUIREMENTS = ROOT / os.environ.get("NONZERO_PACKAGE_REQUIREMENTS", "requirements/ort-1.31.txt")
# The onnxruntime version those pins install, which the tests check they ran on.
ORT_PINNED = next(
    line.split("==")[1].strip() for line in REQUIREMENTS.read_text().splitlines() if line.startswith("onnxruntime==")
)
# The interpreter that makes the environment.
BASE_PYTHON = os.environ.get("NONZERO_PACKAGE_PYTHON", sys.executable)
# Case IO shared with the end-to-end suite; it imports neither onnxruntime nor nonzero_ort.
SHARED = ROOT / "tests/python"
sys.path.insert(0, str(SHARED))
from onnx_cases import case_dirs, ensure_pack  # noqa: E402


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> pathlib.Path:
    given = os.environ.get("NONZERO_WHEEL")
    if given:
        path = pathlib.Path(given).resolve()
        assert path.is_file() and path.suffix == ".whl", f"NONZERO_WHEEL={given} is not a wheel"
        return path
    maturin = ROOT / ".venv-build/bin/maturin"
    if not maturin.exists():
        pytest.fail(
            "no wheel: set NONZERO_WHEEL, or create .venv-build with requirements/build.txt "
            "(scripts/test does both)"
        )
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [str(maturin), "build", "--release", "-m", str(ROOT / "python/Cargo.toml"), "-o", str(out)],
        env={**os.environ, "CARGO_TARGET_DIR": str(ROOT / "python/target")},  # see python/README.md
        check=True,
    )
    (path,) = out.glob("nonzero_ort-*.whl")
    return path


class Venv:
    """A fresh virtual environment with the wheel installed."""

    def __init__(self, root: pathlib.Path, scratch: pathlib.Path):
        self.root = root
        self.python = root / "bin/python"
        self.scratch = scratch  # the working directory of every command: not this checkout

    def run(self, args, env=None, check=True) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [str(self.python), "-I", *map(str, args)],
            cwd=self.scratch,
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{args} exited with {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
            )
        return proc

    def code(self, source: str, *args, **kw) -> subprocess.CompletedProcess:
        return self.run(["-c", source, *args], **kw)

    def json(self, source: str, *args) -> object:
        """Runs `source`, which must print one JSON document as its last line of output."""
        return json.loads(self.code(source, *args).stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def venv(wheel, tmp_path_factory) -> Venv:
    root = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([BASE_PYTHON, "-m", "venv", str(root)], check=True)
    subprocess.run(
        [
            str(root / "bin/python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
            str(wheel), "-r", str(REQUIREMENTS),
        ],
        check=True,
    )
    return Venv(root, tmp_path_factory.mktemp("scratch"))


@pytest.fixture(scope="session")
def workspace_version() -> str:
    with open(ROOT / "Cargo.toml", "rb") as f:
        return tomllib.load(f)["workspace"]["package"]["version"]


@pytest.fixture(scope="session")
def models():
    return case_dirs(ROOT / "models")


# Complex inputs are left out: ONNX Runtime has no complex tensor type, so no custom op can receive
# one (tests/python/test_conformance.py asserts that host limitation against the workspace build).
SAMPLE_EVERY = 5


@pytest.fixture(scope="session")
def conformance_sample():
    """Every SAMPLE_EVERY-th case of each element type of the pack (its names start with the
    type: float_op13_..., bfloat16_op9_...), complex excepted: about a fifth of the pack."""
    by_type = {}
    for case in case_dirs(ensure_pack()):
        by_type.setdefault(case.name.split("_op")[0], []).append(case)
    types = sorted(t for t in by_type if not t.startswith("complex"))
    assert len(types) >= 14, f"the pack has only the element types {sorted(by_type)}"
    sample = [c for t in types for c in by_type[t][::SAMPLE_EVERY]]
    assert len(sample) >= 60, len(sample)
    return sample
