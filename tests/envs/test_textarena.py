"""UNO through TextArena's API (uno_env.textarena_env), run in textarena's own virtualenv.

textarena 0.7.4's dependencies would change this environment (openai, nltk, and through nltk's
joblib cloudpickle>=3), so it lives in ``.venvs/textarena`` (``bash .ci/install``; no torch). The cases are in
``tests/textarena_cases.py``; this file runs them with that venv's pytest, from this tree.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT

VARIABLE = "UNO_TEXTARENA_PYTHON"  # another interpreter with textarena and pytest, if set
VENV_PYTHON = ROOT / ".venvs" / "textarena" / "bin" / "python"


def textarena_python() -> str:
    """The venv's interpreter (a failure naming the command that builds it when absent)."""
    python = os.environ.get(VARIABLE) or str(VENV_PYTHON)
    if not shutil.which(python):
        pytest.fail(
            f"{python} is not an executable interpreter: the TextArena tests run in a venv of their own; "
            f"build it with `bash .ci/install` (or name another in {VARIABLE})",
            pytrace=False,
        )
    return python


def test_textarena_cases_pass_in_their_own_venv():
    # `-m pytest` from the root puts this tree first on the path, whatever the venv installed. The
    # root's addopts ask for pytest-xdist, which that venv lacks, so they are dropped; -q is kept
    # because the summary line is read below.
    done = subprocess.run(
        [
            textarena_python(),
            "-m",
            "pytest",
            "tests/textarena_cases.py",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=",
            "-q",
        ],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"\d+ passed in .*", summary), f"every case must run and pass: {summary}"


def test_without_textarena_the_import_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "textarena", None)  # as if it were not installed
    monkeypatch.delitem(sys.modules, "uno_env.textarena_env", raising=False)
    with pytest.raises(ImportError, match=r'pip install "uno_env\[textarena\]" \(in a virtualenv of its own'):
        importlib.import_module("uno_env.textarena_env")
