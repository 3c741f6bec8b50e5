"""Shared test set-up: ``tests/`` on the path (``builder``, ``helpers``, ``rules_reference``) for
the test modules in its folders, one folder per room, and no quiet skip for a missing dependency.

Every dependency of the suite is installed by ``bash .ci/install`` (the README's test command
runs it first). A test that reaches ``pytest.importorskip`` for an absent module fails instead
of skipping, and says which command installs it: a skipped test would pass CI while checking
nothing.
"""

import os
import sys
from pathlib import Path

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TESTS)
# The repository root too, wherever pytest runs from: for the scripts the tests import (train.py,
# evaluate.py, benchmarks), and because the folders tests/agents, tests/arena and tests/training,
# seen from tests/, would otherwise shadow the packages of the same names as namespace packages
# (the editable install's finder comes after the path's).
sys.path.insert(1, os.path.dirname(TESTS))

# The slow tests, marked ``slow`` here in one list (paths relative to tests/), so that a new test
# file needs no marker of its own: ``python -m pytest -m "not slow"`` is the quick suite of the
# inner loop (CONTRIBUTING.md, "Tests and checks"); the README's command and CI run everything.
# Whole modules first (trainings, subprocesses, builds), then single tests, every parametrization,
# of modules otherwise quick. tests/clients/test_slow_list.py checks that each entry exists.
SLOW_MODULES = (
    "clients/test_examples.py",
    "clients/test_wheel.py",
    "engine/test_information.py",
    "engine/test_soak_smoke.py",
    "envs/test_rllib.py",
    "training/test_belief_inputs.py",
    "training/test_benchmarks_smoke.py",
    "training/test_league.py",
    "training/test_policy_seq.py",
    "training/test_privileged_critic.py",
    "training/test_train_evaluate.py",
    "web/test_web_browser.py",
)
SLOW_TESTS = (
    "agents/test_agents.py::test_bluffing_heuristic_bluffs_and_rule_agents_do_not",
    "agents/test_fairness.py::test_a_shipped_agent_decides_the_same_when_the_hidden_cards_are_redealt",
    "agents/test_flatmc.py::test_beats_random_in_a_short_match",
    "agents/test_flatmc.py::test_benchmark_script_quick",
    "agents/test_llm_agent.py::test_evaluate_rates_a_chat_agent_and_writes_a_transcript_per_run",
    "agents/test_llm_agent.py::test_ray_keeps_the_chat_stats",
    "agents/test_llm_agent.py::test_two_endpoints_play_each_other",
    "arena/test_ray_tournament.py::test_ray_tournament_equals_the_single_process_table",
    "arena/test_yardstick.py::test_a_suite_memorising_agent_is_flagged_and_not_combined",
    "clients/test_docs.py::test_snippets_run",
    "engine/test_engine.py::test_parallel_driver_plays_the_same_games",
    "engine/test_properties.py::test_random_rules_play_by_the_book",
    "envs/test_gym_env.py::test_gymnasium_check_env",
    "envs/test_gym_env.py::test_gymnasium_check_env_with_history",
    "envs/test_pettingzoo_env.py::test_pettingzoo_api_test",
    "envs/test_rlcard_conformance.py::test_rlcard_games_play_the_same_under_rules_rlcard",
    "envs/test_textarena.py::test_textarena_cases_pass_in_their_own_venv",
    "envs/test_threads.py::test_sb3_env_on_threads_equals_one_thread",
    "training/test_batched_ppo.py::test_a_batched_run_saves_resumes_and_its_model_plays_by_path",
    "training/test_batched_ppo.py::test_a_batched_run_trains_with_history_self_play_and_the_league",
    "training/test_reward_option.py::test_train_trains_on_the_score_reward_and_records_it",
    "web/test_web_api.py::test_load_test_script_plays_games_to_the_end",
    "web/test_web_api.py::test_no_hidden_card_in_any_response_over_random_games",
    "web/test_web_api.py::test_record_events_from_any_start_match_the_record",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(item.path).relative_to(TESTS).as_posix()
        if path in SLOW_MODULES or f"{path}::{getattr(item, 'originalname', item.name)}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


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
