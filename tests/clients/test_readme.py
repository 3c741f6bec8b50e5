"""The README tells the truth: its tables are the ones built from the code, its test command is CI's,
and its seeded snippets print the same on every run."""

import re

from helpers import ROOT, printed_twice, snippets

from tools.readme import readme_tables, render_readme
from uno_env.actions import NUM_ACTIONS
from uno_env.docs import ACTION_GROUPS
from uno_env.observation import OBS_BASE_SIZE, OBS_OPEN_SIZE

README = (ROOT / "README.md").read_text()
REGENERATE = "python -m tools.readme --write-readme"


def test_readme_tables_match_the_code():
    for name in readme_tables():
        assert f"<!-- {name}:start -->" in README and f"<!-- {name}:end -->" in README, (
            f"README lacks the {name} markers"
        )
    assert render_readme(README) == README, f"README's tables differ from the code; regenerate them: {REGENERATE}"
    assert f"D = {OBS_BASE_SIZE} ({OBS_OPEN_SIZE} with `open_hands`)" in README


def test_action_groups_cover_every_id_once_in_order():
    """A new action id needs a meaning in uno_env.docs.ACTION_GROUPS."""
    firsts = [first for first, _, _ in ACTION_GROUPS]
    assert firsts == [0] + [last + 1 for _, last, _ in ACTION_GROUPS[:-1]]
    assert ACTION_GROUPS[-1][1] == NUM_ACTIONS - 1


def test_drifted_readme_is_caught():
    drifted = README.replace("| 57 | DRAW", "| 58 | DRAW", 1)
    assert drifted != README and render_readme(drifted) == README


def test_readme_test_command_is_what_ci_runs():
    train = re.findall(
        r"^pip install torch==2\.13\.0 && pip install -e \"\.\[train\]\" && python train\.py$", README, re.M
    )
    tests = re.findall(r"^bash \.ci/install && python -m pytest$", README, re.M)
    assert len(train) == 1 and len(tests) == 1, "README must open with the two commands"
    ci_commands = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    for part in tests[0].split(" && "):
        assert any(line.startswith(part) for line in ci_commands), f".ci/run does not run {part!r}"


def test_the_pettingzoo_snippet_prints_the_same_game_on_every_run():
    """reset(seed=...) seeds the game; the snippet seeds its random play (the action spaces) too."""
    (code,) = [s for s in snippets("../README.md") if "uno_env.env(" in s]
    printed = printed_twice(code)
    assert printed[0].strip() and printed[0] == printed[1]
