"""The yardstick (arena.yardstick): its fixed suite, its cost, its scoring and its fairness."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json

import numpy as np
import pytest
from builder import redeal_hidden

import arena.yardstick as ys
from agents import make_agent
from uno_env.text import engine_prompt


@pytest.fixture(scope="module")
def suite():
    return ys.load_suite()


def test_the_stored_suite_is_the_version_and_loads_identically(suite):
    with open(ys.suite_path()) as f:
        digest = hashlib.sha256(f.read().encode()).hexdigest()
    # The version's meaning is this file: a change to it is a new version, never an edit.
    assert digest == ys.SUITE_SHA256[ys.VERSION]
    again = ys.load_suite()
    assert again == suite and again.version == ys.VERSION == "v1"
    assert len(suite.positions) >= 500 and suite.anchors == ["greedy", "heuristic"]
    for p in suite.positions:
        assert len(p.moves) == len(p.values) >= 2 and all(0.0 <= v <= 1.0 for v in p.values)
    # One schema reads and writes a position: the build's stored form is what was loaded.
    with open(ys.suite_path()) as f:
        assert [p.to_json() for p in suite.positions] == json.load(f)["positions"]


def test_positions_replay_exactly_and_a_changed_one_is_refused(suite):
    for p in suite.positions[:5]:
        engine = ys.position_engine(p, suite.rules)
        assert set(np.flatnonzero(engine.legal_mask[0]).tolist()) == set(p.moves)
    p = next(p for p in suite.positions if len(p.actions) >= 2)
    for bad in (dataclasses.replace(p, actions=p.actions[:-1]), dataclasses.replace(p, rng_state=p.rng_state + 1)):
        with pytest.raises(ValueError, match="no longer replays to the stored round"):
            ys.position_engine(bad, suite.rules)


def test_agreement_and_regret_on_a_hand_made_position():
    p = ys.Position(0, (), 0, "", moves=(3, 7, 9), values=(0.5, 0.62, 0.62))
    assert ys.score_choice(p, 7) == (True, 0.0)
    assert ys.score_choice(p, 9) == (True, 0.0)  # a tie with the best counts as agreement
    agree, regret = ys.score_choice(p, 3)
    assert not agree and regret == pytest.approx(0.12, rel=1e-4)
    with pytest.raises(ValueError, match=r"action 4 is not one of the position's legal moves \[3, 7, 9\]"):
        ys.score_choice(p, 4)
    score = ys.PositionScore([7, 3, 9, 3], np.array([True, False, True, False]), np.array([0.0, 0.12, 0.0, 0.12]), 0.0)
    share, lo, hi = score.agreement
    half = 1.959963984540054 * np.std([1, 0, 1, 0], ddof=1) / 2
    assert share == 0.5 and (lo, hi) == pytest.approx((0.5 - half, 0.5 + half), rel=1e-4)
    assert score.mean_regret[0] == pytest.approx(0.06, rel=1e-4)


def test_the_calibration_curve_passes_its_agents_and_falls_with_regret(suite):
    points = suite.calibration["points"]
    for regret, rating, _ in points:
        assert ys.curve_rating(points, regret)[0] == pytest.approx(rating, rel=1e-4)
    assert ys.curve_rating(points, 0.01)[0] > ys.curve_rating(points, 0.05)[0]
    # Between two agents: linear in log(regret), with the larger of their leave-one-out errors.
    hand = [(0.01, 1700.0, 5.0), (0.04, 1500.0, 30.0)]
    assert ys.curve_rating(hand, 0.02) == pytest.approx((1600.0, 30.0), rel=1e-4)
    assert ys.curve_rating(hand, 0.005)[0] == pytest.approx(1800.0, rel=1e-4)  # the end stretch, extended
    assert ys.leave_one_out([*hand, (0.02, 1650.0, 0.0)]) == pytest.approx([100.0, 100.0, -50.0], rel=1e-4)
    r, lo, hi = ys.positions_rating(hand, (0.02, 0.02, 0.02))
    assert r == pytest.approx(1600.0) and hi - r == pytest.approx(1.959963984540054 * 30.0, rel=1e-4)


class PromptAgent:
    """A fair agent that reads what a chat model reads (its seat's prompt) and answers from it."""

    fair_engine_access = True
    name = "prompt"

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def act(self, observation, action_mask, rng):
        raise AssertionError("the yardstick asks an agent with engine access through act_in")

    def act_in(self, engine, i, rng):
        prompt = engine_prompt(engine, i, limit=40)
        self.prompts.append(prompt)
        moves = np.flatnonzero(engine.legal_mask[i])
        return int(moves[int(hashlib.sha256(prompt.encode()).hexdigest(), 16) % moves.size])


@pytest.mark.parametrize("spec", ["search:64", "heuristic", "prompt"])
def test_a_fair_agents_answer_does_not_change_when_the_hidden_cards_are_redealt(suite, spec):
    agent = PromptAgent() if spec == "prompt" else make_agent(spec, suite.rules, num_players=2)
    history = ys._history_for(agent)
    checked = 0
    for k, p in enumerate(suite.positions[:12]):
        engine = ys.position_engine(p, suite.rules, history)
        twin = copy.deepcopy(engine)
        if not redeal_hidden(twin, 0, p.seat, np.random.default_rng(k)):
            continue
        answers = [ys.ask_position(agent, e, ys.position_rng(suite, k)) for e in (engine, twin)]
        assert answers[0] == answers[1]
        checked += 1
    assert checked >= 5
    if spec == "prompt":
        assert len(set(agent.prompts[0::2])) > 1 and agent.prompts[0::2] == agent.prompts[1::2]


class RowsAgent(PromptAgent):
    """A ``PromptAgent`` that answers many games in one call, as a chat agent does."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def act_in_rows(self, engine, rows, rngs):
        self.calls.append(len(rows))
        return [self.act_in(engine, i, g) for i, g in zip(rows, rngs, strict=True)]


def test_positions_asked_together_get_the_answers_asked_one_by_one(suite):
    engines = [ys.position_engine(p, suite.rules, 40) for p in suite.positions[:6]]
    together, alone = RowsAgent(), PromptAgent()
    rngs = [ys.position_rng(suite, k) for k in range(6)]
    answers = ys.ask_positions(together, engines, rngs)
    assert together.calls == [6]
    assert answers == [ys.ask_position(alone, e, ys.position_rng(suite, k)) for k, e in enumerate(engines)]
    assert together.prompts == alone.prompts


def small_suite(suite, n=3):
    return dataclasses.replace(suite, positions=suite.positions[:n])


def test_the_cost_is_printed_before_the_agent_is_asked(suite, monkeypatch, capsys, tmp_path):
    seen: list[str] = []

    class Spy(PromptAgent):
        def act_in(self, engine, i, rng):
            seen.append(capsys.readouterr().out)
            return super().act_in(engine, i, rng)

    monkeypatch.setattr(ys, "load_suite", lambda version: small_suite(suite))
    monkeypatch.setattr("agents.registry.make_agent", lambda *a, **k: Spy())
    out = tmp_path / "r.json"
    result = ys.main(ys.Args(agent="spy", parts=("positions",), out=str(out)))
    assert seen and seen[0].startswith("yardstick v1 for spy: cost: 3 position decisions + about 0 decisions")
    assert "prompt tokens" in seen[0]
    assert result is not None and len(result.positions.actions) == 3
    data = json.loads(out.read_text())
    assert data["positions"]["count"] == 3 and data["cost"]["planned_requests"] == 3
    assert "games" not in data


def test_the_full_cost_counts_both_parts(suite):
    cost = ys.plan_cost(suite, make_agent("heuristic"), sample=10)
    assert cost.positions == len(suite.positions) and cost.games == 2 * 2 * suite.definition["games"]["deals"]
    assert 1500 <= cost.requests <= 2200 and cost.prompt_tokens_per_decision > 50
    assert f"{cost.positions:,} position decisions" in cost.text()


def test_cost_only_runs_nothing(capsys, monkeypatch):
    monkeypatch.setattr(ys, "rate", lambda *a, **k: pytest.fail("cost_only must not rate"))
    assert ys.main(ys.Args(agent="heuristic", cost_only=True)) is None
    assert "cost:" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agent", "nonsense"], "unknown agent 'nonsense'"),
        (["--agent", "heuristic", "--parts", "moves"], "--parts must be some of positions, games, got moves"),
        (["--agent", "heuristic", "--version", "v9"], "no yardstick suite 'v9'"),
        (["--agent", "search:0"], "bad search budget"),
    ],
)
def test_a_bad_spec_or_option_is_refused_clearly(argv, message, tmp_path):
    with pytest.raises(SystemExit, match=message):
        ys.cli([*argv, "--out", str(tmp_path / "x.json")])
    assert not (tmp_path / "x.json").exists()


def test_an_unknown_option_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        ys.cli(["--agent", "heuristic", "--bogus"])
    assert exc.value.code != 0
