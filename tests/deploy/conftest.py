"""Shared set-up of tests/deploy (the deploy stage of scripts/test, run by .venv-deploy-qnn's
Python): the rows each test records, written to build/deploy/report.md and report.json when the
session ends (report.py)."""

import pytest

import report


@pytest.fixture(scope="session")
def rows():
    """{judge: {(model id, form[, backend]): row}}: what each test records."""
    table = {"qnn": {}, "litert": {}, "fuzz": {}}
    yield table
    report.write(table)
