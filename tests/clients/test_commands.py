"""What every command says before its work: the numba compile notice (uno_env.compile_notice) and the
help texts' list of rule presets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import tyro
from helpers import ROOT

from uno_env import PRESETS
from uno_env.compile_notice import NOTICE

# A module with one cached kernel, as the package's kernels are: cold on its first import here.
KERNEL = """
from numba import njit

@njit(cache=True)
def twice(x):
    return 2 * x
"""

RUN = """
import sys
from uno_env.compile_notice import announce_compiling
announce_compiling("uno-test")
announce_compiling("uno-test")  # idempotent: one listener, one line
import kernel
print(kernel.twice(21))
"""


def _run(cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_DISABLE_JIT", "NUMBA_CACHE_DIR")}
    env["PYTHONPATH"] = os.pathsep.join([str(cwd), str(ROOT)])
    done = subprocess.run([sys.executable, "-c", RUN], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_a_cold_cache_is_announced_once_and_a_warm_one_is_silent(tmp_path):
    (tmp_path / "kernel.py").write_text(KERNEL)
    notice = NOTICE.format(command="uno-test")
    cold = _run(tmp_path)
    assert cold.stdout.strip() == "42"
    assert cold.stderr.count(notice) == 1, cold.stderr
    assert "once per install" in notice and "minute" in notice
    warm = _run(tmp_path)  # the kernel now loads from numba's cache beside its source
    assert warm.stdout.strip() == "42" and notice not in warm.stderr, warm.stderr


def test_every_command_announces_compiling():
    """Each command's entry point installs the notice before its first kernel runs."""
    entry_points = {
        "uno_env/demo.py": 'announce_compiling("uno-demo")',
        "uno_env/replay_cli.py": 'announce_compiling("uno-replay")',
        "uno_web/terminal.py": 'announce_compiling("uno-play")',
        "uno_web/server.py": 'announce_compiling("uno-web")',
        "training/main.py": "announce_compiling(script)",
        "arena/evaluate.py": "announce_compiling(script)",
    }
    for path, call in entry_points.items():
        assert call in (ROOT / path).read_text(), f"{path} does not call {call}"


def _help(args_class, capsys) -> str:
    with pytest.raises(SystemExit):
        tyro.cli(args_class, args=["--help"])
    return " ".join(capsys.readouterr().out.replace("│", " ").split())


def test_help_texts_name_every_rule_preset(capsys):
    from arena.evaluate import Args as EvaluateArgs
    from uno_env.demo import Args as DemoArgs
    from uno_web.terminal import Args as PlayArgs

    classes = [PlayArgs, EvaluateArgs, DemoArgs]
    try:
        from training.main import Args as TrainArgs
    except ImportError:  # the train extra: tests/conftest.py reports what is missing elsewhere
        pass
    else:
        classes.append(TrainArgs)
    assert "rlcard" in PRESETS
    for args_class in classes:
        text = _help(args_class, capsys)
        assert f"a preset ({', '.join(PRESETS)})" in text, (args_class.__module__, text)


def test_train_help_is_short_and_says_what_the_command_does():
    pytest.importorskip("stable_baselines3", reason="the train extra is not installed")
    out = subprocess.run(
        [sys.executable, "-c", "from training.main import cli; cli(['--help'], 'train.py')"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    ).stdout
    lines = out.splitlines()
    assert lines[2].startswith("Train a UNO agent"), out[:400]
    assert len(lines) <= 150 and max(len(line) for line in lines) <= 120, (len(lines), out[:400])
