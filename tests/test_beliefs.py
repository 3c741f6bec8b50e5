"""Beliefs of the searches (issue 30): exclusions read from public history only, dealt as said,
and no cheating — two games that differ only in hidden cards give the same beliefs and the same
decisions given a seed."""

from __future__ import annotations

import numpy as np
import pytest

from agents import SearchAgent, make_agent
from agents.beliefs import PublicBelief, UniformBelief, make_belief
from agents.mcts import ISMCTSAgent
from tests.builder import act, position
from uno_env import Engine, UnoRules
from uno_env.cards import WILD, parse_card


def after_a_draw(opponent: str, draw: str):
    """Seat 0 plays red 5; seat 1 cannot follow, draws an unplayable card and its turn ends."""
    engine = position(["red 5, red 7, blue 3, green 1, wild", opponent], "red 3", draw=draw)
    act(engine, "play red 5")
    act(engine, "draw")
    assert int(engine.current_player[0]) == 0
    return engine


# The same public history (seat 1 drew one card on red and kept it), the hidden cards swapped
# between seat 1's hand and the draw pile.
TWINS = (
    ("yellow 1, blue 9, green 2", "green 8, blue 2"),
    ("blue 2, green 8, green 2", "blue 9, yellow 1"),
)


def twins():
    return [after_a_draw(h, d) for h, d in TWINS]


def test_public_belief_reads_the_draw_on_red():
    a, _ = twins()
    ex = PublicBelief().exclusions(a.observation[0], 0)
    assert ex is not None and ex.shape == (2, 57)
    assert ex[1, parse_card("red 0") : parse_card("red draw two") + 1].all() and ex[1, WILD:].all()
    assert not ex[1, parse_card("yellow 0") : WILD].any() and not ex[0].any()
    assert UniformBelief().exclusions(a.observation[0], 0) is None


def test_the_twins_differ_only_in_hidden_cards():
    a, b = twins()
    assert a.game_state(0)["hands"][1] != b.game_state(0)["hands"][1]
    assert np.array_equal(a.observation, b.observation) and np.array_equal(a.legal_mask, b.legal_mask)


@pytest.mark.parametrize(
    "agent",
    [
        SearchAgent(UnoRules.preset("classic"), rollouts=64, max_depth=20),
        ISMCTSAgent(UnoRules.preset("classic"), iterations=32, wave=16, max_depth=20),
    ],
    ids=["flatmc", "ismcts"],
)
def test_no_cheating_same_beliefs_and_decisions(agent):
    a, b = twins()
    ea, eb = (agent.belief.exclusions(e.observation[0], 0) for e in (a, b))
    assert np.array_equal(ea, eb)
    for seed in range(6):
        assert agent.act_in(a, 0, np.random.default_rng(seed)) == agent.act_in(b, 0, np.random.default_rng(seed))
        picks = [agent.act(e.observation, e.legal_mask, np.random.default_rng(seed))[0] for e in (a, b)]
        assert picks[0] == picks[1]


def test_the_determinizations_respect_the_belief():
    """Every deal the search makes gives seat 1 no red card and no wild after it drew on red."""
    a, _ = twins()
    agent = SearchAgent(UnoRules.preset("classic"), rollouts=8)
    ex = agent.belief.exclusions(a.observation[0], 0)
    play = Engine(64, 2, a.rules, seed=0)
    play.copy_games(a, np.zeros(64, np.int64), np.arange(64))
    agent._determinize(play, np.arange(64), 0, ex, np.random.default_rng(0))
    hands = [play.game_state(d)["hands"][1] for d in range(64)]
    assert all(not ex[1, c] for h in hands for c in h)
    assert len({tuple(h) for h in hands}) > 10


def test_a_belief_is_named_or_given():
    assert make_belief("public").name == "public"
    b = UniformBelief()
    assert make_belief(b) is b
    with pytest.raises(ValueError, match="belief must be one of"):
        SearchAgent(belief="psychic")
    with pytest.raises(ValueError, match="belief must be one of"):
        ISMCTSAgent(belief=3)


def test_the_registry_names_a_search_with_its_belief():
    assert make_agent("search").belief.name == "public"
    assert make_agent("search:64@uniform").belief.name == "uniform"
    agent = make_agent("ismcts:20ms@public")
    assert type(agent) is ISMCTSAgent and agent.time_ms == 20.0 and agent.belief.name == "public"
    with pytest.raises(ValueError, match="belief must be one of"):
        make_agent("flatmc:64@psychic")


@pytest.mark.parametrize("cls", [SearchAgent, ISMCTSAgent])
def test_peek_keeps_the_true_hands_and_shuffles_only_the_draw_pile(cls):
    """The ceiling measurement (peek=True) sees every hand: each twin's determinizations hold its
    own true hands, and only the draw pile's order varies."""
    agent = cls(UnoRules.preset("classic"), peek=True)
    for source in twins():
        play = Engine(32, 2, source.rules, seed=0)
        play.copy_games(source, np.zeros(32, np.int64), np.arange(32))
        agent._determinize(play, np.arange(32), 0, None, np.random.default_rng(0))
        true = source.game_state(0)
        assert all(play.game_state(d)["hands"] == true["hands"] for d in range(32))
        piles = {tuple(play.draw_pile(d)) for d in range(32)}
        assert all(sorted(p) == sorted(source.draw_pile(0)) for p in piles) and len(piles) > 1


def test_peek_is_named_and_kept_out_of_fair_play():
    from arena.ladder import rate_on_ladder

    agent = make_agent("flatmc:64@peek")
    assert agent.peek and agent.name == "flatmc:64@peek"
    assert SearchAgent(peek=True).name == "flatmc@peek" and not make_agent("search").peek
    a, _ = twins()
    with pytest.raises(ValueError, match="act_in"):
        agent.act(a.observation, a.legal_mask, np.random.default_rng(0))
    with pytest.raises(ValueError, match="not rated on the ladder"):
        rate_on_ladder(agent)
    with pytest.raises(ValueError, match="peek must be"):
        ISMCTSAgent(peek="yes")
