"""The one table (``uno_env.table``) and duplicate deals (``arena.play(duplicate=True)``).

Every game loop asks its agents through ``Table``: the checks below hold for all of them, and
``test_no_loop_asks_agents_outside_the_table`` keeps it so.
"""

from __future__ import annotations

import ast
from statistics import NormalDist

import numpy as np
import pytest
from helpers import ROOT

from agents.registry import make_agent
from arena import play, tournament
from arena.ratings import paired_interval
from uno_env import Engine, RandomAgent
from uno_env.policy import EngineAgent, uses_engine
from uno_env.table import Table, ask_one


class Fixed:
    """Always the first legal action (deterministic, ignores its generator)."""

    name = "fixed"

    def act(self, observation, action_mask, rng):
        return np.asarray(action_mask).argmax(1).astype(np.int64)


class Searching(Fixed):
    """An engine agent that records the games it was asked about."""

    name = "searching"

    def __init__(self):
        self.asked = []

    def act_in(self, engine, i, rng):
        self.asked.append(i)
        return int(engine.legal_mask[i].argmax())


def test_table_routes_each_seat_to_its_agent_and_leaves_unplayed_seats_alone():
    engine = Engine(6, 3, seed=0)
    a, b = Fixed(), Searching()
    table = Table(engine, [a, b], np.random.default_rng(0), engine_access=True)
    table.seat_agent[:, 0] = 0
    table.seat_agent[:, 1] = 1  # seat 2 is nobody's: its games are not stepped
    before = engine.current_player.copy()
    taken = table.step()
    owned = before != 2
    assert taken == int(owned.sum())
    assert sorted(b.asked) == np.flatnonzero(before == 1).tolist()
    np.testing.assert_array_equal(table.actions[~owned], -1)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda obs, mask: np.zeros(obs.shape[0] + 1, np.int64), r"int64 actions of shape \(\d+,\)"),
        (lambda obs, mask: np.zeros(obs.shape[0]), "float64 actions"),
        (lambda obs, mask: np.full(obs.shape[0], 116), "action 116 for game"),
        (lambda obs, mask: np.full(obs.shape[0], -1), "action -1 for game"),
    ],
)
def test_table_refuses_bad_answers_and_leaves_the_games_unchanged(answer, message):
    class Bad:
        name = "bad"

        def act(self, observation, action_mask, rng):
            return answer(observation, action_mask)

    engine = Engine(4, 2, seed=1)
    before = engine.game_state(0)
    table = Table(engine, [Bad()], np.random.default_rng(0))
    table.seat_agent[:] = 0
    with pytest.raises(ValueError, match=message):
        table.step()
    assert engine.game_state(0) == before


def test_an_illegal_action_is_refused_naming_the_agent_that_chose_it():
    class Cheat:
        name = "cheat"

        def act(self, observation, action_mask, rng):
            return np.asarray(action_mask).argmin(1).astype(np.int64)  # an illegal id in every row

    engine = Engine(4, 2, seed=1)
    before = [engine.game_state(i) for i in range(4)]
    table = Table(engine, [Fixed(), Cheat()], np.random.default_rng(0))
    table.seat_agent[:, 0], table.seat_agent[:, 1] = 0, 1
    with pytest.raises(
        ValueError, match=r"agent 'cheat' returned an illegal action: game \d+: action \d+ .* is not legal"
    ):
        table.step()
    assert [engine.game_state(i) for i in range(4)] == before


def test_ask_one_checks_act_in_answers():
    class BadSearch(Fixed):
        def act_in(self, engine, i, rng):
            return 999

    engine = Engine(1, 2, seed=0)
    with pytest.raises(ValueError, match="999 from act_in"):
        ask_one(BadSearch(), engine, 0, np.random.default_rng(0))
    # Without engine access the same agent is asked with its observation row.
    assert ask_one(BadSearch(), engine, 0, np.random.default_rng(0), engine_access=False) == int(
        engine.legal_mask[0].argmax()
    )


def test_engine_agent_protocol():
    assert uses_engine(Searching()) and isinstance(Searching(), EngineAgent)
    assert not uses_engine(Fixed()) and not uses_engine(RandomAgent())


def test_a_mirrored_agent_scores_exactly_half_on_duplicate_deals():
    for agents, players in (([RandomAgent(), RandomAgent()], 2), ([make_agent("heuristic")] * 4, 4)):
        r = play(agents, 40 * players, seed=5, duplicate=True, batch_size=64)
        assert len(set(r.wins.tolist())) == 1, r.wins  # every agent won as often as every other
        assert r.deal_wins is not None and r.deal_wins.shape == (40, players)


def test_duplicate_deals_replay_the_same_cards_for_every_rotation():
    """Same deal, rotated seats: every rotation starts from the same generator state (same deck order)."""
    starts = {}

    class Spy(Fixed):
        def act_in(self, engine, i, rng):
            return int(engine.legal_mask[i].argmax())

    def record(engine, rows, won, seats, games):
        for r, g in zip(rows.tolist(), games.tolist(), strict=True):
            starts.setdefault(g // 2, set()).add(engine.record(r)["start"]["rng_state"])

    play([Spy(), RandomAgent()], 40, engine_rules(), 3, batch_size=7, duplicate=True, record=True, on_finish=record)
    assert len(starts) == 20 and all(len(hands) == 1 for hands in starts.values())


def engine_rules():
    from uno_env import UnoRules

    return UnoRules.preset("classic")


def test_duplicate_results_do_not_depend_on_the_batch_size():
    agents = [make_agent("heuristic"), RandomAgent()]
    a = play(agents, 60, seed=2, duplicate=True, batch_size=7)
    b = play(agents, 60, seed=2, duplicate=True, batch_size=60)
    np.testing.assert_array_equal(a.deal_wins, b.deal_wins)


def test_duplicate_needs_whole_rotations():
    with pytest.raises(ValueError, match="multiple of the 2 players"):
        play([RandomAgent(), RandomAgent()], 11, duplicate=True)
    with pytest.raises(ValueError, match="multiples of the 3 players"):
        tournament([RandomAgent()] * 3, 30, num_players=3, chunk_games=10, duplicate=True)


def test_duplicate_tables_and_tournaments_report_paired_intervals():
    agents = [make_agent("heuristic"), make_agent("rlcard_rule")]
    r = play(agents, 200, seed=1, duplicate=True)
    assert r.deal_wins is not None and r.deal_wins.sum() == r.wins.sum()
    assert r.ci95[0] == pytest.approx(paired_interval(r.deal_wins[:, 0] / 2))
    t = tournament(agents, 200, seed=1, chunk_games=100, duplicate=True)
    assert t.config["duplicate"] is True
    assert t.tables[0][1].deal_wins.shape == (100, 2)


def test_paired_interval():
    assert paired_interval(np.full(10, 0.5)) == (0.5, 0.5)
    lo, hi = paired_interval(np.array([0.0, 1.0] * 50))
    assert lo == pytest.approx(0.5 - NormalDist().inv_cdf(0.975) * np.std([0.0, 1.0] * 50, ddof=1) / 10)
    assert hi == pytest.approx(1 - lo)


# Game loops that must ask their agents through uno_env.table (no act()/act_in() calls of their own).
# (file, the class holding the loop, or None for the whole file)
LOOPS = [
    ("uno_env/_vector_driver.py", None),
    ("arena/match.py", None),
    ("training/expert.py", "_Labeller"),
    ("uno_web/terminal.py", None),
    ("uno_web/session.py", None),
    ("uno_web/games.py", None),
]


@pytest.mark.parametrize(("path", "scope"), LOOPS)
def test_no_loop_asks_agents_outside_the_table(path, scope):
    tree: ast.AST = ast.parse((ROOT / path).read_text())
    if scope is not None:
        tree = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == scope)
    calls = [
        n.func.attr
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("act", "act_in")
    ]
    checks = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Name)
        and n.func.id in ("getattr", "hasattr")
        and any(isinstance(a, ast.Constant) and a.value == "act_in" for a in n.args)
    ]
    assert not calls, f"{path} calls {calls}: ask agents through uno_env.table (Table.ask / ask_one)"
    assert not checks, f"{path} checks for act_in itself: use uno_env.policy.uses_engine"
