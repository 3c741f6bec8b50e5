"""One definition of "an integer" (uno_env.checks): Python and NumPy integers, never a bool, and no
other copy of the check anywhere in the project."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers import ROOT

from uno_env.checks import check_int, is_int


@pytest.mark.parametrize(
    "value, expected",
    [
        (3, True),
        (np.int64(3), True),
        (np.uint8(3), True),
        (-1, True),
        (True, False),
        (np.bool_(True), False),
        (3.0, False),
        ("3", False),
        (None, False),
        (np.array(3), False),
    ],
)
def test_is_int_table(value, expected):
    assert is_int(value) is expected


@pytest.mark.parametrize(
    "value, lo, hi, message",
    [
        (0, 1, None, "n must be a positive integer, got 0"),
        (-1, 0, None, "n must be an integer >= 0, got -1"),
        (11, 2, 10, "n must be an integer in 2..10, got 11"),
        (True, 0, None, "n must be an integer >= 0, got True"),
        (2.0, 1, 5, "n must be an integer in 1..5, got 2.0"),
    ],
)
def test_check_int_says_what_is_allowed(value, lo, hi, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        check_int("n", value, lo, hi)


def test_check_int_returns_a_python_int():
    for value, lo, hi in [(np.int32(5), 1, None), (5, 5, 5), (10**12, 0, None)]:
        out = check_int("n", value, lo, hi)
        assert type(out) is int and out == value


# The spellings of the check that uno_env.checks replaces.
COPIES = re.compile(r"numbers\.Integral|\(int, np\.integer\)|isinstance\(\w+, int\) and not isinstance")


def test_the_integer_check_is_written_once():
    # The repository's own files: not hidden folders (.git, .venvs of the client examples), builds or the site.
    sources = [
        p
        for p in ROOT.rglob("*.py")
        if not any(part.startswith(".") or part in ("build", "site") for part in p.relative_to(ROOT).parts[:-1])
    ]
    found = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sources
        if p.name not in ("checks.py", "test_checks.py")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if COPIES.search(line)
    ]
    assert not found, f"use uno_env.checks.is_int / check_int instead: {found}"
