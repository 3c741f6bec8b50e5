"""Shared test set-up: ``tests/`` on the path (``builder``, ``helpers``, ``rules_reference``) for
the test modules in its folders, one folder per room, and no quiet skip for a missing dependency.

Every dependency of the suite is installed by ``bash .ci/install`` (the README's test command
runs it first). A test that reaches ``pytest.importorskip`` for an absent module fails instead
of skipping, and says which command installs it: a skipped test would pass CI while checking
nothing.
"""

import os
import sys

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TESTS)
# The repository root too, wherever pytest runs from: for the scripts the tests import (train.py,
# evaluate.py, benchmarks), and because the folders tests/agents, tests/arena and tests/training,
# seen from tests/, would otherwise shadow the packages of the same names as namespace packages
# (the editable install's finder comes after the path's).
sys.path.insert(1, os.path.dirname(TESTS))

INSTALL = "bash .ci/install"  # the README's set-up; also what .ci/run runs
MISSING = "could not import"  # the start of pytest.importorskip's skip reason


def missing_dependency(what: str) -> str:
    """The failure message of a test whose dependency ``what`` is absent."""
    return f"{what}: the test dependencies are missing; install them all with `{INSTALL}` (README)"


def _fail_missing(report: pytest.CollectReport | pytest.TestReport) -> None:
    if report.skipped and isinstance(report.longrepr, tuple) and report.longrepr[2].startswith(f"Skipped: {MISSING}"):
        report.outcome = "failed"
        report.longrepr = missing_dependency(report.longrepr[2].removeprefix("Skipped: "))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _fail_missing(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _fail_missing(outcome.get_result())
