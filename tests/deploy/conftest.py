"""Shared set-up of tests/deploy (the deploy stages of scripts/test, run by .venv-deploy-qnn's
Python): the rows each test records, written to build/deploy/report.md and report.json when the
session ends (report.py). test_rknn.py belongs to the `deploy_rknn` stage alone
(NONZERO_DEPLOY_RKNN=1), whose venv the other stages do not make."""

import os

import pytest

import report

RKNN = os.environ.get("NONZERO_DEPLOY_RKNN") == "1"
# The deploy_rknn stage runs test_rknn.py alone; the others never collect it.
collect_ignore = [] if RKNN else ["test_rknn.py"]


@pytest.fixture(scope="session")
def rows():
    """{judge: {(model id, form[, backend]): row}}: what each test records (`tails`: test_tails.py)."""
    table = {"qnn": {}, "litert": {}, "rknn": {}, "fuzz": {}, "tails": {}}
    yield table
    report.write(table, name="report-rknn" if RKNN else "report")
