"""The README tells the truth: its tables are the ones built from the code, and its test command is CI's."""

import re
from pathlib import Path

from uno_env.docs import action_table, observation_table
from uno_env.observation import OBS_BASE_SIZE, OBS_OPEN_SIZE

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _section(name):
    match = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", README, re.S)
    assert match, f"README lacks the {name} table markers"
    return match.group(1).strip()


def test_action_table_matches_code():
    assert _section("actions") == action_table()


def test_observation_table_matches_code():
    assert _section("observation") == observation_table()
    assert f"D = {OBS_BASE_SIZE} ({OBS_OPEN_SIZE} with `open_hands`)" in README


def test_readme_test_command_is_what_ci_runs():
    commands = re.findall(r"^pip install torch==2\.13\.0 && (.*)$", README, re.M)
    assert len(commands) >= 2, "README must open with the two commands"
    test_command = commands[1]
    ci = (ROOT / ".ci" / "run").read_text()
    install, run = test_command.split(" && ")
    assert install in ci and run in ci
