"""Progress you can see (issue 36): the set-up says what it does before each long step and how
long it took, and cargo, maturin and pip show their own progress (no --quiet)."""

import os
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = "building the library and the nonzero command (cargo, release; about 6 minutes on 2 cores the first time, seconds after)..."


def test_setup_says_what_it_builds_and_how_long_it_took():
    proc = subprocess.run(["scripts/setup"], cwd=ROOT, env={**os.environ, "NONZERO_SETUP_ORT": "1.31"},
                          capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "", "progress goes to stderr, so that run-models' results stay clean"
    err = proc.stderr.splitlines()
    assert BUILD in err, err
    after = err[err.index(BUILD) + 1:]
    # cargo's own status lines (here at least its `Finished`), then the step's time.
    assert any(line.strip().startswith("Finished `release` profile") for line in after), after
    assert re.fullmatch(r"\.\.\. done in \d+ s", after[-1]), after


def test_the_long_steps_are_not_quiet():
    """The long steps' commands, where --quiet would hide cargo's progress (and its "Blocking
    waiting for file lock") or pip's."""
    long_steps = {
        "scripts/setup": r"cargo build --release",
        "scripts/env.sh": r"-m pip install",
        "scripts/ray/venv.sh": r"maturin build",
        "scripts/test": r"maturin build",
        "scripts/package": r"maturin build",
        "scripts/static/stage.sh": r"cargo build --release",
    }
    for path, command in long_steps.items():
        lines = [line for line in (ROOT / path).read_text().splitlines() if re.search(command, line)]
        assert lines, (path, command)
        for line in lines:
            assert "--quiet" not in line and not re.search(r"\s-q(\s|$)", line), (path, line)
