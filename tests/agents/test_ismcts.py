"""ISMCTSAgent (information-set Monte Carlo tree search): legality in every phase, determinism,
the information it uses, obvious wins found, the registry's search names and the ladders' flat-MC rung."""

from __future__ import annotations

import numpy as np
import pytest
from builder import act, position
from helpers import EVERY_RULE_SET as RULE_SETS
from helpers import walk

from agents import FlatMCAgent, HeuristicAgent, make_agent
from agents.ismcts import ISMCTSAgent
from agents.registry import SEARCH, SEARCHES
from arena import play
from arena.ladder import LADDER_V2, _rung_agents
from uno_env import Engine, UnoRules, action_name


def small(rules, **kw):
    return ISMCTSAgent(
        rules, iterations=kw.pop("iterations", 16), wave=kw.pop("wave", 8), max_depth=kw.pop("max_depth", 12), **kw
    )


@pytest.mark.parametrize("rules_name", list(RULE_SETS))
@pytest.mark.parametrize("num_players", [2, 4])
def test_act_in_returns_only_legal_actions_in_every_phase(rules_name, num_players):
    """Every seat played by the search for 40 steps: colour choices, swaps, penalties, UNO calls
    and challenges come up in these rule sets; walk() also checks the game is left untouched."""
    rules = RULE_SETS[rules_name]
    engine = Engine(3, 4 if rules.teams else num_players, rules, seed=num_players, autoreset=True)
    walk(small(rules), engine, np.random.default_rng(0), 40, use_engine=True)


@pytest.mark.parametrize(
    "settings", [{"opponents": "heuristic"}, {"tree_prior": True, "heuristic_plies": 0}, {"confidence": 1.0}]
)
def test_the_variants_play_legal_moves(settings):
    rules = UnoRules.preset("house")
    engine = Engine(3, 3, rules, seed=2, autoreset=True)
    walk(small(rules, **settings), engine, np.random.default_rng(1), 30, use_engine=True)


@pytest.mark.parametrize("rules_name", ["classic", "house"])
def test_act_from_observations_returns_only_legal_actions(rules_name):
    rules = RULE_SETS[rules_name]
    engine = Engine(3, 3, rules, seed=3, autoreset=True)
    walk(small(rules), engine, np.random.default_rng(0), 30, use_engine=False)


@pytest.mark.parametrize("use_engine", [True, False])
def test_deterministic_given_the_rng(use_engine):
    def trajectory(seed):
        engine = Engine(2, 3, seed=5, autoreset=True)
        return walk(small(UnoRules()), engine, np.random.default_rng(seed), 30, use_engine)

    assert np.array_equal(trajectory(0), trajectory(0))


def test_engine_access_match_is_reproducible():
    rules = UnoRules()
    runs = [
        play([small(rules), HeuristicAgent(rules)], 6, rules, seed=3, batch_size=3, engine_access=True)
        for _ in range(2)
    ]
    assert runs[0].wins.tolist() == runs[1].wins.tolist()
    assert runs[0].wins.sum() + runs[0].truncated == 6


def test_decisions_depend_only_on_the_information_set():
    """Two games that differ only in what seat 0 cannot see (the opponent's hand and the draw
    pile) give the same decisions for the same rng, from the engine and from the observation."""
    a = position(["red 5, red 7, blue 3, green 1", "yellow 1, blue 9"], "red 3", draw="blue 2, green 8")
    b = position(["red 5, red 7, blue 3, green 1", "blue 2, green 8"], "red 3", draw="yellow 1, blue 9")
    assert a.game_state(0)["hands"][1] != b.game_state(0)["hands"][1]
    agent = small(UnoRules(), iterations=64)
    for seed in range(6):
        assert agent.act_in(a, 0, np.random.default_rng(seed)) == agent.act_in(b, 0, np.random.default_rng(seed))
        picks = [agent.act(e.observation, e.legal_mask, np.random.default_rng(seed))[0] for e in (a, b)]
        assert picks[0] == picks[1]


def test_decisions_depend_only_on_the_information_set_mid_game():
    """The same check after 4 players have played a while (a longer history, every phase of the
    classic rules): re-dealing the hidden cards of the true game changes no decision."""
    rules = UnoRules.preset("classic")
    engine = Engine(1, 4, rules, seed=11)
    rng = np.random.default_rng(0)
    heuristic = HeuristicAgent(rules)
    agent = small(rules, iterations=32)
    checked = 0
    for _ in range(40):
        seat = int(engine.current_player[0])
        twin = Engine(1, 4, rules, seed=0)
        twin.copy_game(engine, 0, 0)
        twin.resample_hidden(0, seat, np.random.default_rng(checked + 100))
        assert np.array_equal(twin.observe(seat), engine.observe(seat))
        mine = agent.act_in(engine, 0, np.random.default_rng(checked))
        assert agent.act_in(twin, 0, np.random.default_rng(checked)) == mine
        checked += agent.last_searched
        engine.step(heuristic.act(engine.observation, engine.legal_mask, rng))
        if engine.terminated[0] or engine.truncated[0]:
            break
    assert checked > 5


SCENARIOS = [
    (["red 5", "green 1, green 2, blue 4"], "red 3", "play red 5"),
    (["red draw two, red 7, blue 4", "green 1"], "red 3", "play red draw two"),
    (["red 7, red skip", "green 1"], "red 3", "play red skip"),
    (["wild draw four, blue 1, blue 2", "green 1"], "red 3", "play wild draw four"),
]


@pytest.mark.parametrize("hands, top, best", SCENARIOS)
def test_search_finds_the_win(hands, top, best):
    engine = position(hands, top)
    agent = ISMCTSAgent(UnoRules(), iterations=512, heuristic_plies=0)
    for seed in range(2):
        assert action_name(agent.act_in(engine, 0, np.random.default_rng(seed))) == best


def test_search_names_the_colour_it_holds():
    engine = position(["wild, blue 1, blue 2, blue 5, blue 9", "green 1, red 2, yellow 5"], "red 3")
    act(engine, "play wild")
    agent = ISMCTSAgent(UnoRules(), iterations=2048, heuristic_plies=0)
    assert action_name(agent.act_in(engine, 0, np.random.default_rng(0))) == "choose blue"


def test_time_budget_runs_at_least_one_wave():
    engine = position(["red 5, red 7, blue 3", "green 1, green 2"], "red 3")
    agent = ISMCTSAgent(UnoRules(), wave=8, time_ms=1e-6)
    assert engine.legal_mask[0, agent.act_in(engine, 0, np.random.default_rng(0))] and agent.last_searched


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"iterations": 0}, "iterations must be a positive integer"),
        ({"wave": 0}, "wave must be a positive integer"),
        ({"exploration": -1}, "exploration must be a number >= 0"),
        ({"opponents": "minimax"}, "opponents must be 'ucb' or 'heuristic'"),
        ({"time_ms": 0}, "time_ms must be None or a positive"),
        ({"max_depth": 0}, "max_depth must be a positive integer"),
        ({"confidence": -1}, "confidence must be None or a number >= 0"),
    ],
)
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ISMCTSAgent(UnoRules(), **kwargs)


# --- the registry's names and ladder v1 ---------------------------------------------------------


@pytest.mark.parametrize(
    "spec, cls, budget",
    [
        ("ismcts", ISMCTSAgent, {"iterations": ISMCTSAgent().iterations, "time_ms": None}),
        ("ismcts:64", ISMCTSAgent, {"iterations": 64, "time_ms": None}),
        ("ismcts:20ms", ISMCTSAgent, {"time_ms": 20.0}),
        ("flatmc", FlatMCAgent, {"rollouts": FlatMCAgent().rollouts, "time_ms": None}),
        ("flatmc:64", FlatMCAgent, {"rollouts": 64, "time_ms": None}),
        ("flatmc:20ms", FlatMCAgent, {"time_ms": 20.0}),
    ],
)
def test_both_searches_are_nameable(spec, cls, budget):
    agent = make_agent(spec)
    assert type(agent) is cls and agent.name == spec
    assert all(getattr(agent, k) == v for k, v in budget.items())


def test_search_names_the_stronger_and_keeps_its_budget_forms():
    cls = SEARCHES[SEARCH]
    assert type(make_agent("search")) is cls and type(make_agent("search:64")) is cls
    assert make_agent("search:20ms").time_ms == 20.0 and make_agent("search:20ms").name == "search:20ms"
    with pytest.raises(ValueError, match=r"bad search budget in 'ismcts:fast'.*ismcts:256.*ismcts:20ms"):
        make_agent("ismcts:fast")


def test_the_ladders_search_rung_is_the_flat_search():
    """Ladder v2's stored games were played by FlatMCAgent(rollouts=64) with uniform deals."""
    for players in (2, 4):
        v2 = _rung_agents(LADDER_V2, players)[LADDER_V2.rungs_for(players).index("flatmc:64@uniform")]
        assert type(v2) is FlatMCAgent and (v2.rollouts, v2.time_ms, v2.belief.name) == (64, None, "uniform")
