"""The docs stage (issue 36): the instructions work as written.

Every `sh` and `python` block of DOCS runs, in order, as a reader would run them one after the
other: in a fresh virtual environment (build/docs/venv, made anew; `pip` and `python` on PATH are
its own) and one working directory (build/docs/work) that holds links to the checkout's top-level
entries, so that `./python`, `crates/cli` and `requirements/` resolve while what the blocks write
(`model.onnx`, `.venv-build`, `build/wheels`) stays out of the checkout. `cargo install` installs
into build/docs/cargo (on PATH). The environment reuses the release build (CARGO_TARGET_DIR is the
checkout's target/) and pip's download cache; nothing else is set for the blocks.

A block is skipped only where a `<!-- docs-stage: skip (reason) -->` marker says why
(tests/python-package/doc_blocks.py: the full suite, the GPU, another platform, Ray); the stage
prints each skip with its reason. Blocks in another language (`text`, `cpp`, `toml`, `rust`) are
shown, not run.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/python-package"))
from doc_blocks import blocks  # noqa: E402

# In reading order: the package's install comes first, the examples of optimize.md make the
# model.onnx that static.md's use.
DOCS = ["python/README.md", "docs/optimize.md", "docs/static.md", "docs/deployment.md"]
WORK = ROOT / "build/docs"
BLOCK_TIMEOUT = 900


@pytest.fixture(scope="session")
def reader():
    """The environment and working directory every block runs in."""
    shutil.rmtree(WORK, ignore_errors=True)
    work = WORK / "work"
    work.mkdir(parents=True)
    tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split()
    for top in sorted({p.split("/")[0] for p in tracked} | {"target"}):
        if (ROOT / top).exists():
            (work / top).symlink_to(ROOT / top)
    venv = WORK / "venv"
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    print(f"\nfresh venv {venv.relative_to(ROOT)} in {time.monotonic() - start:.0f} s", flush=True)
    cargo_root = WORK / "cargo"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(
        PATH=f"{venv / 'bin'}:{cargo_root / 'bin'}:{env['PATH']}",
        VIRTUAL_ENV=str(venv),
        CARGO_TARGET_DIR=str(ROOT / "target"),
        CARGO_INSTALL_ROOT=str(cargo_root),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    return work, env


def run_block(block, work, env):
    where = block.where(ROOT)
    script = WORK / "blocks" / f"{where.replace('/', '_').replace(':', '_')}.{block.kind}"
    script.parent.mkdir(exist_ok=True)
    script.write_text(block.text)
    cmd = ["bash", "-e", "-o", "pipefail", str(script)] if block.kind == "sh" else ["python", str(script)]
    print(f"running {where} ({block.kind}, {len(block.text.splitlines())} lines)...", flush=True)
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=BLOCK_TIMEOUT)
    took = time.monotonic() - start
    if proc.returncode != 0:
        pytest.fail(
            f"{where} exited with {proc.returncode} after {took:.0f} s\n--- block\n{block.text}"
            f"--- stdout (last 4000 characters)\n{proc.stdout[-4000:]}\n"
            f"--- stderr (last 4000 characters)\n{proc.stderr[-4000:]}"
        )
    promised = promised_output(block)
    if promised is not None:
        assert proc.stdout == promised, f"{where} printed\n{proc.stdout}\nbut its comment promises\n{promised}"
    print(f"... done in {took:.0f} s", flush=True)
    return proc


def promised_output(block):
    """What a python block that ends with `print(...)` and then `# ` comment lines promises to
    print (python/README.md's example), or None."""
    if block.kind != "python":
        return None
    lines = block.text.rstrip("\n").split("\n")
    tail = []
    while lines and lines[-1].startswith("# "):
        tail.insert(0, lines.pop()[2:])
    if not tail or not lines or not lines[-1].startswith("print("):
        return None
    return "\n".join(tail) + "\n"


@pytest.mark.parametrize("doc", DOCS)
def test_blocks_run_as_written(doc, reader):
    work, env = reader
    found = blocks(ROOT / doc)
    ran = [b for b in found if b.kind and b.skip is None]
    for b in found:
        if b.skip is not None:
            print(f"SKIPPED {b.where(ROOT)} ({b.lang}): {b.skip}")
    shown = sorted({b.lang for b in found if b.kind is None})
    print(f"{doc}: {len(ran)} blocks to run, {sum(b.skip is not None for b in found)} skipped, "
          f"{sum(b.kind is None for b in found)} shown only ({', '.join(shown) or 'none'})")
    assert ran, f"{doc} has no block to run"
    for b in ran:
        run_block(b, work, env)


def test_what_the_blocks_made(reader):
    """The blocks used what they installed: the package in the fresh venv, `nonzero` from
    `cargo install`, and the rewrites happened."""
    work, env = reader
    where = subprocess.run(["python", "-c", "import nonzero_ort; print(nonzero_ort.get_library_path())"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert pathlib.Path(where).is_relative_to(WORK / "venv"), where
    assert shutil.which("nonzero", path=env["PATH"]) == str(WORK / "cargo/bin/nonzero")
    for name, op in [("model.opt.onnx", b"BooleanMask"), ("model.static.onnx", b"ScatterElements")]:
        data = (work / name).read_bytes()
        assert op in data, f"{name} has no {op.decode()}"


def test_the_examples_extra_pins_what_the_tests_run():
    import tomllib

    extra = tomllib.loads((ROOT / "python/pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = {line.split("==")[0]: line for line in (ROOT / "requirements/ort-1.31.txt").read_text().splitlines()
            if "==" in line and not line.startswith("#")}
    assert extra["examples"] == [pins["onnxruntime"], pins["numpy"], pins["onnx"]]
