"""FlatMCAgent (flat Monte Carlo over determinized deals): legality, determinism, the information
it uses, scenarios where the search must find the win, and play(engine_access=True)."""

from __future__ import annotations

import numpy as np
import pytest
from builder import act, position
from helpers import EVERY_RULE_SET, ROOT, walk

from agents import FlatMCAgent, HeuristicAgent, RandomAgent
from agents.belief_policy import shipped_belief_policy
from agents.beliefs.net import EVIDENCE_ROWS
from agents.pretrained import shipped_policy
from agents.registry import SEARCH_BLUEPRINT, make_agent
from arena import play
from uno_env import Engine, UnoRules, action_name
from uno_env.actions import Action

RULE_SETS = EVERY_RULE_SET


def small(rules, **kw):
    return FlatMCAgent(rules, rollouts=kw.pop("rollouts", 8), max_depth=kw.pop("max_depth", 12), **kw)


def plain(rules=None, **kw):
    """The search alone: no heuristic replies in the rollouts and no pull towards its move."""
    return FlatMCAgent(rules or UnoRules(), heuristic_plies=0, confidence=None, **kw)


@pytest.mark.parametrize("rules_name", list(RULE_SETS))
@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_act_in_returns_only_legal_actions(rules_name, num_players):
    rules = RULE_SETS[rules_name]
    if rules.teams:
        num_players = 4
    engine = Engine(3, num_players, rules, seed=num_players, autoreset=True)
    walk(small(rules), engine, np.random.default_rng(0), 40, use_engine=True)


@pytest.mark.parametrize("rules_name", list(RULE_SETS))
@pytest.mark.parametrize("num_players", [2, 5])
def test_act_from_observations_returns_only_legal_actions(rules_name, num_players):
    rules = RULE_SETS[rules_name]
    if rules.teams:
        num_players = 4
    engine = Engine(3, num_players, rules, seed=num_players, autoreset=True)
    walk(small(rules), engine, np.random.default_rng(0), 40, use_engine=False)


@pytest.mark.parametrize("use_engine", [True, False])
def test_deterministic_given_the_rng(use_engine):
    def trajectory(seed):
        engine = Engine(2, 3, seed=5, autoreset=True)
        return walk(small(UnoRules()), engine, np.random.default_rng(seed), 30, use_engine)

    first = trajectory(0)
    assert np.array_equal(first, trajectory(0))


def test_engine_access_match_is_reproducible_and_counts_every_game():
    rules = UnoRules()
    runs = [
        play([small(rules), HeuristicAgent(rules)], 6, rules, seed=3, batch_size=3, engine_access=True)
        for _ in range(2)
    ]
    assert runs[0].wins.tolist() == runs[1].wins.tolist()
    assert runs[0].wins.sum() + runs[0].truncated == 6
    assert runs[0].seat_games.tolist() == [[3, 3], [3, 3]]


def test_observation_search_uses_only_the_observation():
    """Two games that differ only in what seat 0 cannot see (the opponent's hand and the draw
    pile) give the same observation, hence the same decision for the same rng."""
    a = position(["red 5, red 7, blue 3, green 1", "yellow 1, blue 9"], "red 3", draw="blue 2, green 8")
    b = position(["red 5, red 7, blue 3, green 1", "blue 2, green 8"], "red 3", draw="yellow 1, blue 9")
    assert a.game_state(0)["hands"][1] != b.game_state(0)["hands"][1]
    assert np.array_equal(a.observation, b.observation)
    agent = small(UnoRules(), rollouts=64)
    pick = [agent.act(e.observation, e.legal_mask, np.random.default_rng(9))[0] for e in (a, b)]
    assert pick[0] == pick[1]


# --- scenarios: the search must find the obvious win ----------------------------------------

SCENARIOS = [
    # (hands, top, the move to find, why)
    (["red 5", "green 1, green 2, blue 4"], "red 3", "play red 5", "the last card wins (R8)"),
    (["red draw two, red 7, blue 4", "green 1"], "red 3", "play red draw two", "stop the player on one card"),
    (["red 7, red skip", "green 1"], "red 3", "play red skip", "Skip, then the last card: out in one turn (R5)"),
    (
        ["wild draw four, blue 1, blue 2", "green 1"],
        "red 3",
        "play wild draw four",
        "a legal Wild Draw Four on the player with one card",
    ),
]


@pytest.mark.parametrize("use_engine", [True, False])
@pytest.mark.parametrize("hands, top, best, why", SCENARIOS)
def test_search_finds_the_win(hands, top, best, why, use_engine):
    engine = position(hands, top)
    agent = plain(rollouts=256)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        a = agent.act_in(engine, 0, rng) if use_engine else agent.act(engine.observation, engine.legal_mask, rng)[0]
        assert action_name(a) == best, why


def test_search_names_the_colour_it_holds():
    """After a wild, holding only blue cards: choose blue (searched only with the engine)."""
    engine = position(["wild, blue 1, blue 2, blue 5, blue 9", "green 1, red 2, yellow 5"], "red 3")
    act(engine, "play wild")
    # Measured values (win rates 0.45 for blue, 0.38-0.40 for the others) are close, so the
    # budget must be large enough for the gap to stand out of the rollout noise.
    agent = plain(rollouts=2048)
    for seed in range(2):
        assert action_name(agent.act_in(engine, 0, np.random.default_rng(seed))) == "choose blue"


def test_draw_two_on_the_next_of_three_players_with_one_card():
    engine = position(["red draw two, red 7, blue 4", "green 1", "yellow 2, yellow 3, green 5, blue 6"], "red 3")
    agent = plain(rollouts=256)
    for seed in range(3):
        assert action_name(agent.act_in(engine, 0, np.random.default_rng(seed))) == "play red draw two"


def test_without_evidence_the_heuristic_move_stands():
    """confidence: with one rollout per move the paired difference has no standard error, so
    the search keeps HeuristicAgent's move (asked first, with the same generator)."""
    rules = UnoRules()
    engine = Engine(8, 2, rules, seed=6, autoreset=True)
    heuristic, agent = HeuristicAgent(rules), FlatMCAgent(rules, rollouts=2)
    rng = np.random.default_rng(0)
    searched = 0
    for step in range(40):
        for i in range(8):
            a = agent.act_in(engine, i, np.random.default_rng(step))
            if agent.last_searched:
                searched += 1
                h = heuristic.act(
                    engine.observation[i : i + 1], engine.legal_mask[i : i + 1], np.random.default_rng(step)
                )
                assert a == h[0]
        engine.step(RandomAgent().act(engine.observation, engine.legal_mask, rng))
    assert searched > 50


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_without_evidence_the_blueprint_move_stands(num_players):
    """blueprint: the move kept unless beaten is the shipped policy's where one was trained for
    the table (2 and 4 players, classic) when the blueprint names it, the heuristic's elsewhere:
    {2: "pretrained"} names it at 2 players only."""
    rules = UnoRules()
    engine = Engine(8, num_players, rules, seed=6, autoreset=True)
    policy = shipped_policy(rules, num_players)
    assert (policy is None) == (num_players == 3)
    heuristic = HeuristicAgent(rules)
    agents = {
        "pretrained": FlatMCAgent(rules, rollouts=2, blueprint="pretrained"),
        "by table": FlatMCAgent(rules, rollouts=2, blueprint={2: "pretrained"}),
    }
    rng = np.random.default_rng(0)
    searched = 0
    for step in range(30):
        for i in range(8):
            o, m = engine.observation[i : i + 1], engine.legal_mask[i : i + 1]
            h = heuristic.act(o, m, np.random.default_rng(step))[0]
            for kind, agent in agents.items():
                a = agent.act_in(engine, i, np.random.default_rng(step))
                if agent.last_searched:
                    searched += 1
                    if kind == "by table" and num_players != 2 or policy is None:
                        assert a == h
                    else:
                        assert a == policy.act(o, m)[0]
        engine.step(RandomAgent().act(engine.observation, engine.legal_mask, rng))
    assert searched > 50


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_the_belief_blueprint_reads_the_round_where_a_belief_policy_was_trained(num_players):
    """blueprint="belief": at 2 players the shipped belief policy's move, from the seat's history;
    where the engine keeps no history, or at a table no belief policy was trained for, the
    shipped policy's (4 players), else the heuristic's (3)."""
    rules = UnoRules()
    engines = {k: Engine(8, num_players, rules, seed=6, autoreset=True, history=k) for k in (0, EVIDENCE_ROWS)}
    reader = shipped_belief_policy(rules, num_players)
    policy = shipped_policy(rules, num_players)
    assert (reader is None) == (num_players != 2)
    heuristic = HeuristicAgent(rules)
    agent = FlatMCAgent(rules, rollouts=2, blueprint="belief")
    assert agent.history_length == EVIDENCE_ROWS
    rng = np.random.default_rng(0)
    searched, differ = 0, 0
    for step in range(30):
        for k, engine in engines.items():
            for i in range(8):
                o, m = engine.observation[i : i + 1], engine.legal_mask[i : i + 1]
                a = agent.act_in(engine, i, np.random.default_rng(step))
                if not agent.last_searched:
                    continue
                searched += 1
                if k and reader is not None:
                    rows, counts = engine.history(int(engine.current_player[i]), games=[i])
                    view = {"observation": o, "history": rows[i : i + 1], "history_counts": counts[i : i + 1]}
                    assert a == reader.act(view, m)[0]
                    differ += int(a != policy.act(o, m)[0])
                elif policy is not None:
                    assert a == policy.act(o, m)[0]
                else:
                    assert a == heuristic.act(o, m, np.random.default_rng(step))[0]
            engine.step(RandomAgent().act(engine.observation, engine.legal_mask, rng))
    assert searched > 50
    assert reader is None or differ > 0  # the reader is not the plain policy under another name


def test_registry_search_is_on_top_of_the_shipped_policy():
    assert make_agent("search").blueprint == SEARCH_BLUEPRINT == "belief"
    assert make_agent("search:64@public").blueprint == SEARCH_BLUEPRINT
    assert make_agent("flatmc").blueprint == make_agent("ismcts").blueprint == "heuristic"


def test_trivial_decisions_are_not_searched():
    engine = position(["green 5, blue 7", "green 1"], "red 3", allow_voluntary_draw=True)
    agent = FlatMCAgent(UnoRules())
    assert np.flatnonzero(engine.legal_mask[0]).tolist() == [int(Action.DRAW)]
    assert agent.act_in(engine, 0, np.random.default_rng(0)) == int(Action.DRAW)
    assert not agent.last_searched


def test_time_budget_runs_at_least_one_round():
    engine = position(["red 5, red 7, blue 3", "green 1, green 2"], "red 3")
    agent = FlatMCAgent(UnoRules(), rollouts=16, time_ms=1e-6)
    a = agent.act_in(engine, 0, np.random.default_rng(0))
    assert engine.legal_mask[0, a]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rollouts": 0}, "rollouts must be a positive integer"),
        ({"max_depth": 0}, "max_depth must be a positive integer"),
        ({"time_ms": -1}, "time_ms must be None or a positive"),
        ({"confidence": -1}, "confidence must be None or a number >= 0"),
        ({"heuristic_plies": -2}, "heuristic_plies must be an integer >= 0"),
        ({"blueprint": "ppo"}, "blueprint must be one of .'heuristic', 'pretrained', 'belief'. or a mapping"),
        ({"blueprint": {1: "pretrained"}}, r"got the entry 1: 'pretrained'"),
        ({"blueprint": {2: "greedy"}}, r"got the entry 2: 'greedy'"),
        ({"blueprint": ["pretrained"]}, "got list"),
    ],
)
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        FlatMCAgent(UnoRules(), **kwargs)


def test_beats_random_in_a_short_match():
    """A sanity check of strength, not the README figure (lab/search_agent.py)."""
    rules = UnoRules()
    r = play([FlatMCAgent(rules, rollouts=32, max_depth=40), RandomAgent()], 40, rules, seed=1, engine_access=True)
    assert r.wins[0] >= 30
    r = play([FlatMCAgent(rules, rollouts=32, max_depth=40), RandomAgent()], 20, rules, seed=1)
    assert r.wins[0] >= 14


def test_engine_search_decision_depends_only_on_the_information_set():
    """act_in copies the true game, but its re-deal gathers the hidden cards in id order before
    shuffling: two games of one information set give the same decisions for the same rng."""
    a = position(["red 5, red 7, blue 3, green 1", "yellow 1, blue 9"], "red 3", draw="blue 2, green 8")
    b = position(["red 5, red 7, blue 3, green 1", "blue 2, green 8"], "red 3", draw="yellow 1, blue 9")
    agent = small(UnoRules(), rollouts=64)
    for seed in range(10):
        assert agent.act_in(a, 0, np.random.default_rng(seed)) == agent.act_in(b, 0, np.random.default_rng(seed))


def test_act_in_works_on_an_engine_without_observations():
    rules = UnoRules()
    quiet, loud = Engine(2, 2, rules, seed=4, observations=False), Engine(2, 2, rules, seed=4)
    agent = small(rules)
    for _ in range(20):
        a = [agent.act_in(e, 1, np.random.default_rng(1)) for e in (quiet, loud)]
        assert a[0] == a[1] and loud.legal_mask[1, a[0]]
        quiet.step(np.array([-1, a[0]]))
        loud.step(np.array([-1, a[1]]))


def test_benchmark_script_quick(tmp_path):
    """python -m lab.search_agent --quick runs both searches and reports consistent figures (no speed asserted)."""
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    out = tmp_path / "search.json"
    proc = subprocess.run(
        [sys.executable, "-m", "lab.search_agent", "--quick", "--json", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = json.loads(out.read_text())
    assert [f["agent"] for f in rows] == ["flatmc:64", "ismcts:64"]
    for figures in rows:
        assert figures["games"] == 40 and 0 <= figures["wins"] <= 40
        assert figures["ci95"][0] <= figures["win_rate"] <= figures["ci95"][1]
        assert 0 < figures["searched_decisions"] <= figures["decisions"]
        assert f"| {figures['agent']} | 40 | {figures['wins']} |" in proc.stdout


@pytest.mark.parametrize("preset", ["classic", "official", "swap_hands", "house", "rlcard"])
def test_batched_redeal_keeps_what_the_seat_knows(preset):
    """The search's batched re-deal (Engine.copy_games + resample_hidden over many games) keeps
    the seat's hand, every public fact and every count, moves only hidden cards, and deals
    differently."""
    rules = UnoRules.preset(preset)
    engine = Engine(1, 3, rules, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(30):
        engine.step(RandomAgent().act(engine.observation, engine.legal_mask, rng))
    seat = int(engine.current_player[0])
    root = Engine(32, 3, rules, seed=0)
    root.copy_game(engine, 0, 0)
    root.copy_games(root, np.zeros(31, np.int64), np.arange(1, 32))
    before, pile = engine.game_state(0), engine.draw_pile(0)
    root.resample_hidden(np.arange(32), seat, rng)
    assert root.check_invariants() == []
    hidden = sorted(pile + [c for p, h in enumerate(before["hands"]) if p != seat for c in h])
    deals = set()
    for d in range(32):
        after = root.game_state(d)
        assert after["hands"][seat] == before["hands"][seat]
        assert [len(h) for h in after["hands"]] == [len(h) for h in before["hands"]]
        for key in (
            "discard_pile",
            "draw_pile_size",
            "current_player",
            "phase",
            "current_color",
            "scores",
            "direction",
            "pending_draw",
            "turn",
            "uno_called",
        ):
            assert after[key] == before[key], key
        assert sorted(root.draw_pile(d) + [c for p, h in enumerate(after["hands"]) if p != seat for c in h]) == hidden
        assert np.array_equal(root.observe(seat)[d], engine.observe(seat)[0])
        deals.add(str(after["hands"]) + str(root.draw_pile(d)))
    assert len(deals) == 32
    with pytest.raises(ValueError, match="games"):
        root.resample_hidden(np.arange(33), seat, rng)


def test_benchmark_opponents_are_copies_or_a_mixed_table():
    from lab.search_agent import Args, opponent_specs

    assert opponent_specs(Args(opponent="heuristic", num_players=3)) == ["heuristic", "heuristic"]
    mixed = Args(opponent="heuristic + rlcard_rule+greedy", num_players=4)
    assert opponent_specs(mixed) == ["heuristic", "rlcard_rule", "greedy"]
    with pytest.raises(ValueError, match=r"names 2 seats; a mixed table names one per other seat \(3 at"):
        opponent_specs(Args(opponent="heuristic+greedy", num_players=4))
