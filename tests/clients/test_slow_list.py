"""The slow list of tests/conftest.py names what exists: a stale entry would quietly mark nothing."""

from __future__ import annotations

import ast

import pytest
from conftest import SLOW_MODULES, SLOW_TESTS
from helpers import ROOT

TESTS = ROOT / "tests"


@pytest.mark.parametrize("module", SLOW_MODULES)
def test_each_slow_module_exists(module):
    assert (TESTS / module).is_file(), f"tests/conftest.py SLOW_MODULES names {module}, which does not exist"


@pytest.mark.parametrize("entry", SLOW_TESTS)
def test_each_slow_test_is_a_test_of_its_module(entry):
    module, name = entry.split("::")
    assert module not in SLOW_MODULES, f"{entry}: its whole module is already in SLOW_MODULES"
    tree = ast.parse((TESTS / module).read_text())
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    assert name in names, f"tests/conftest.py SLOW_TESTS names {entry}, but {module} defines no {name}"
