"""Every script in examples/ runs to its end with a tiny budget, as CI runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT

EXAMPLES = ROOT / "examples"

# script -> (tiny arguments, a line its output must hold, modules it needs)
RUNS = {
    "aec_hand_written_agent.py": (["--rounds", "2", "--num-players", "3"], "player_0 (careful) won", []),
    "custom_rules.py": (["--matches", "1", "--num-players", "3"], "envs ready: PettingZoo 3 agents", []),
    "cleanrl_masked_ppo.py": (
        ["--budget", "512", "--num-envs", "8", "--num-steps", "32"],
        "done: trained 512 learner steps",
        ["torch"],
    ),
    "sb3_maskable_ppo.py": (["--budget", "128", "--eval-rounds", "1"], "evaluation:", ["torch", "sb3_contrib"]),
    "rllib_pettingzoo.py": (["--budget", "256"], "done: trained", ["torch", "ray"]),
    "tianshou_multiagent.py": (["--budget", "200", "--eval-rounds", "1"], "evaluation:", []),
    "rlcard_dqn.py": (
        ["--episodes", "3", "--eval-every", "3", "--eval-games", "2", "--max-turns", "100"],
        "done: trained 3 episodes",
        ["torch", "rlcard"],
    ),
    "agilerl_dqn_population.py": (
        ["--steps", "256", "--population", "2", "--num-envs", "8", "--evo-steps", "128", "--max-turns", "200"],
        "done: trained a population of 2 DQN agents",
        [],
    ),
    "torchrl_pettingzoo.py": (
        ["--episodes", "2", "--eval-rounds", "1", "--max-turns", "60"],
        "done: trained 2 episodes",
        ["torch", "torchrl"],
    ),
    "openspiel_uno.py": (
        ["--nfsp-episodes", "2", "--eval-games", "1", "--cfr-iterations", "1", "--max-turns", "40"],
        "CFR+: NashConv",
        ["torch", "pyspiel"],
    ),
}

# Scripts whose library cannot share this environment, and the variable naming their venv's
# python: tianshou 2.0.1 pins pandas<3 (examples/README.md). `bash .ci/install` builds the venv
# in .venvs/<name>/, where the test looks when the variable is unset.
# agilerl 2.58.0 pins pettingzoo 1.26 and pulls gymnasium 1.4 (examples/agilerl_dqn_population.py).
OWN_PYTHON = {
    "tianshou_multiagent.py": ("UNO_TIANSHOU_PYTHON", "tianshou"),
    "agilerl_dqn_population.py": ("UNO_AGILERL_PYTHON", "agilerl"),
}
VENVS = EXAMPLES.parent / ".venvs"


def python_for(script: str) -> str:
    """The interpreter that runs ``script``: this one, or its own venv's (a failure when absent)."""
    if script not in OWN_PYTHON:
        return sys.executable
    variable, venv = OWN_PYTHON[script]
    python = os.environ.get(variable) or str(VENVS / venv / "bin" / "python")
    if not shutil.which(python):
        pytest.fail(
            f"{python} is not an executable interpreter: {script} runs in a venv of its own; "
            f"build it with `bash .ci/install` (or name another in {variable})",
            pytrace=False,
        )
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
        (
            "tianshou_multiagent.py",
            ["--num-players", "3", "--seat", "3"],
            "--seat must be in 0..2 (--num-players 3), got 3",
        ),
        ("rlcard_dqn.py", ["--episodes", "0"], "--episodes, --eval-every, --eval-games and --max-turns must be"),
        ("torchrl_pettingzoo.py", ["--num-players", "11"], "--num-players must be in 2..10, got 11"),
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
