"""Every script in examples/ runs to its end with a tiny budget (issue 16: examples run in CI)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"

# script -> (tiny arguments, a line its output must hold, modules it needs)
RUNS = {
    "aec_hand_written_agent.py": (["--rounds", "2", "--players", "3"], "player_0 (careful) won", []),
    "custom_rules.py": (["--matches", "1", "--players", "3"], "envs ready: PettingZoo 3 agents", []),
    "cleanrl_masked_ppo.py": (
        ["--budget", "512", "--num-envs", "8", "--num-steps", "32"],
        "done: trained 512 learner steps",
        ["torch"],
    ),
    "sb3_maskable_ppo.py": (["--budget", "128", "--eval-rounds", "1"], "evaluation:", ["torch", "sb3_contrib"]),
    "rllib_pettingzoo.py": (["--budget", "256"], "done: trained", ["torch", "ray"]),
    "tianshou_multiagent.py": (["--budget", "200", "--eval-rounds", "1"], "evaluation:", []),
    "openspiel_uno.py": (
        ["--nfsp-episodes", "2", "--eval-games", "1", "--cfr-iterations", "1", "--max-turns", "40"],
        "CFR+: NashConv",
        ["torch", "pyspiel"],
    ),
}

# Scripts whose library cannot share this environment, and the variable naming their venv's
# python: tianshou 2.0.1 pins pandas<3 (examples/README.md). .ci/run builds the venv and sets it.
OWN_PYTHON = {"tianshou_multiagent.py": "UNO_TIANSHOU_PYTHON"}
VENV_SETUP = (
    "python -m venv /tmp/uno_env_tianshou && /tmp/uno_env_tianshou/bin/pip install torch==2.13.0 "
    "&& /tmp/uno_env_tianshou/bin/pip install tianshou==2.0.1 -e . "
    "&& export UNO_TIANSHOU_PYTHON=/tmp/uno_env_tianshou/bin/python (as .ci/run does)"
)


def python_for(script: str) -> str:
    """The interpreter that runs ``script``: this one, or its own venv's (skipped when unset)."""
    variable = OWN_PYTHON.get(script)
    if variable is None:
        return sys.executable
    python = os.environ.get(variable)
    if not python:
        pytest.skip(f"{variable} is not set: {script} runs in its own venv; build it with: {VENV_SETUP}")
    # Set but wrong is a broken CI setup, not a missing optional library: fail, do not skip.
    assert shutil.which(python), f"{variable}={python!r} is not an executable interpreter"
    return python


def test_every_example_is_run_here():
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(RUNS)


@pytest.mark.parametrize("script", sorted(RUNS))
def test_example_runs(script):
    argv, expected, needs = RUNS[script]
    python = python_for(script)
    for module in needs:
        pytest.importorskip(module)
    done = subprocess.run(
        [python, str(EXAMPLES / script), *argv], capture_output=True, text=True, timeout=600, cwd=EXAMPLES.parent
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert expected in done.stdout, done.stdout[-2000:]


@pytest.mark.parametrize(
    "script, argv, message",
    [
        ("aec_hand_written_agent.py", ["--rounds", "0"], "--rounds must be at least 1"),
        ("cleanrl_masked_ppo.py", ["--budget", "10"], "--budget >= num-envs * num-steps"),
        ("custom_rules.py", ["--matches", "0"], "--matches must be at least 1"),
        ("tianshou_multiagent.py", ["--players", "3", "--seat", "3"], "--seat must be in 0..2 (--players 3), got 3"),
    ],
)
def test_bad_budgets_are_refused_with_what_is_allowed(script, argv, message):
    done = subprocess.run(
        [python_for(script), str(EXAMPLES / script), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=EXAMPLES.parent,
    )
    assert done.returncode == 2 and message in done.stderr
