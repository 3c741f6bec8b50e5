"""Beliefs of the searches: exclusions and soft evidence read from public history only, dealt as
said, and no cheating — two games that differ only in hidden cards give the same beliefs and the same
decisions given a seed."""

from __future__ import annotations

import numpy as np
import pytest
from builder import act, position

from agents import FlatMCAgent, make_agent
from agents.beliefs import PublicBelief, UniformBelief, make_belief, playable_set
from agents.determinized import Deal
from agents.ismcts import ISMCTSAgent
from uno_env import Engine, UnoRules
from uno_env.cards import WILD, parse_card


def played(own: str, opponent: str, draw: str, moves: tuple[str, ...]):
    """Seat 0 holds ``own``, seat 1 ``opponent``, red 3 on the pile; ``moves`` are played and it
    is seat 0's turn again. The engine keeps the round's history (the beliefs with soft evidence read it)."""
    engine = position([own, opponent], "red 3", draw=draw, history=64)
    for move in moves:
        act(engine, move)
    assert int(engine.current_player[0]) == 0
    return engine


# Pairs of games with the same public history, the hidden cards swapped between seat 1's hand
# and the draw pile. After a draw: seat 0 plays red 5, seat 1 cannot follow, draws an
# unplayable card and its turn ends.
DRAW = ("red 5, red 7, blue 3, green 1, wild", ("play red 5", "draw"))
TWINS = (
    ("yellow 1, blue 9, green 2", "green 8, blue 2"),
    ("blue 2, green 8, green 2", "blue 9, yellow 1"),
)
# After a wild: seat 0 plays red 5, seat 1 plays a wild and names blue.
WILD_PLAY = ("red 5, red 7, blue 3, green 1, yellow 4", ("play red 5", "play wild", "choose blue"))
WILD_TWINS = (
    ("wild, blue 1, blue 2, blue 9, red 9", "green 8, yellow 1, yellow 2"),
    ("wild, green 8, yellow 1, blue 9, red 9", "blue 1, blue 2, yellow 2"),
)


def twins():
    return [played(DRAW[0], h, d, DRAW[1]) for h, d in TWINS]


def wild_twins():
    return [played(WILD_PLAY[0], h, d, WILD_PLAY[1]) for h, d in WILD_TWINS]


def after_a_wild(opponent: str, draw: str):
    return played(WILD_PLAY[0], opponent, draw, WILD_PLAY[1])


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
        FlatMCAgent(UnoRules.preset("classic"), rollouts=64, max_depth=20),
        ISMCTSAgent(UnoRules.preset("classic"), iterations=32, wave=16, max_depth=20),
        FlatMCAgent(UnoRules.preset("classic"), rollouts=64, max_depth=20, belief="replay-heuristic"),
        ISMCTSAgent(UnoRules.preset("classic"), iterations=32, wave=16, max_depth=20, belief="net"),
    ],
    ids=["flatmc", "ismcts", "flatmc-replay", "ismcts-net"],
)
@pytest.mark.parametrize("pair", ["after_a_draw", "after_a_wild"])
def test_no_cheating_same_beliefs_and_decisions(agent, pair):
    a, b = twins() if pair == "after_a_draw" else wild_twins()
    assert a.hand_counts([0])[0, 1].tolist() != b.hand_counts([0])[0, 1].tolist()
    assert np.array_equal(a.observation, b.observation)
    ea, eb = (agent.belief.exclusions(e.observation[0], 0) for e in (a, b))
    assert np.array_equal(ea, eb)
    for seed in range(6):
        assert agent.act_in(a, 0, np.random.default_rng(seed)) == agent.act_in(b, 0, np.random.default_rng(seed))
        picks = [agent.act(e.observation, e.legal_mask, np.random.default_rng(seed))[0] for e in (a, b)]
        assert picks[0] == picks[1]


def test_the_determinizations_respect_the_belief():
    """Every deal the search makes gives seat 1 no red card and no wild after it drew on red."""
    a, _ = twins()
    agent = FlatMCAgent(UnoRules.preset("classic"), rollouts=8)
    ex = agent.belief.exclusions(a.observation[0], 0)
    play = Engine(64, 2, a.rules, seed=0)
    play.copy_games(a, np.zeros(64, np.int64), np.arange(64))
    agent._determinize(play, np.arange(64), 0, Deal(ex), np.random.default_rng(0))
    hands = [play.game_state(d)["hands"][1] for d in range(64)]
    assert all(not ex[1, c] for h in hands for c in h)
    assert len({tuple(h) for h in hands}) > 10


def test_a_belief_is_named_or_given():
    assert make_belief("public").name == "public"
    b = UniformBelief()
    assert make_belief(b) is b
    with pytest.raises(ValueError, match="belief must be one of"):
        FlatMCAgent(belief="psychic")
    with pytest.raises(ValueError, match="belief must be one of"):
        ISMCTSAgent(belief=3)


def test_the_registry_names_a_search_with_its_belief():
    assert make_agent("search").belief.name == "net"
    assert make_agent("search:64@uniform").belief.name == "uniform"
    agent = make_agent("ismcts:20ms@public")
    assert type(agent) is ISMCTSAgent and agent.time_ms == 20.0 and agent.belief.name == "public"
    with pytest.raises(ValueError, match="unknown belief 'psychic'"):
        make_agent("flatmc:64@psychic")


@pytest.mark.parametrize("cls", [FlatMCAgent, ISMCTSAgent])
def test_peek_keeps_the_true_hands_and_shuffles_only_the_draw_pile(cls):
    """The ceiling measurement (peek=True) sees every hand: each twin's determinizations hold its
    own true hands, and only the draw pile's order varies."""
    agent = cls(UnoRules.preset("classic"), peek=True)
    for source in twins():
        play = Engine(32, 2, source.rules, seed=0)
        play.copy_games(source, np.zeros(32, np.int64), np.arange(32))
        agent._determinize(play, np.arange(32), 0, Deal(None), np.random.default_rng(0))
        true = source.game_state(0)
        assert all(play.game_state(d)["hands"] == true["hands"] for d in range(32))
        piles = {tuple(play.draw_pile(d)) for d in range(32)}
        assert all(sorted(p) == sorted(source.draw_pile(0)) for p in piles) and len(piles) > 1


def test_peek_is_named_and_kept_out_of_fair_play():
    from arena.ladder import rate_on_ladder

    agent = make_agent("flatmc:64@peek")
    assert agent.peek and agent.name == "flatmc:64@peek"
    assert FlatMCAgent(peek=True).name == "flatmc@peek" and not make_agent("search").peek
    a, _ = twins()
    with pytest.raises(ValueError, match="act_in"):
        agent.act(a.observation, a.legal_mask, np.random.default_rng(0))
    with pytest.raises(ValueError, match="not rated on the ladder"):
        rate_on_ladder(agent)
    with pytest.raises(ValueError, match="peek must be"):
        ISMCTSAgent(peek="yes")


def test_playable_set_is_the_colour_the_rank_and_the_wilds():
    s = playable_set(parse_card("red 5"), 1)  # red 5 on top, yellow named by no one: yellow in play
    assert s[parse_card("yellow 0") : parse_card("yellow draw two") + 1].all()
    assert s[[parse_card(f"{c} 5") for c in ("red", "yellow", "green", "blue")]].all() and s[WILD:].all()
    assert s.sum() == 13 + 3 + 5
