"""Every shipped agent is fair: its decision depends only on what its seat can see.

For each agent, positions are reached by seeded random play; a twin of each game has everything
the acting seat cannot see redealt (the other hands and the draw pile, by ``builder.redeal_hidden``,
which does not trust the engine's own idea of what is hidden); the agent is asked in both with
generators in the same state and must choose the same action. A search re-deals hidden cards
itself, so it is fair only if its re-deals depend on nothing but what the seat sees.
"""

from __future__ import annotations

import numpy as np
import pytest
from builder import twin_positions

from agents.registry import make_agent
from uno_env import Engine, UnoRules
from uno_env.policy import history_length_of
from uno_env.table import ask_one

# Every name of agents.registry.agent_names() and every belief of the searches, at small budgets.
SHIPPED_2P = [
    "random",
    "rlcard_rule",
    "greedy",
    "heuristic",
    "pretrained",
    "belief_policy",
    "search:24",
    "flatmc:24",
    "flatmc:24@uniform",
    "flatmc:24@net",
    "flatmc:24@replay-heuristic",
    "ismcts:24",
    "ismcts:24@net",
]
SHIPPED_4P = [
    "pretrained-4p",
    "heuristic",
    "search:16",
    "ismcts:16@net",
    "flatmc:16@net",
    "flatmc:16@replay-heuristic",
    "ismcts:16",
]
HISTORY = 256  # events the engine keeps: as many as any agent here reads


@pytest.fixture(scope="module")
def positions_2p():
    return twin_positions(2, 14, seed=11, history=HISTORY)


@pytest.fixture(scope="module")
def positions_4p():
    return twin_positions(4, 10, seed=23, history=HISTORY)


def _check_fair(agent, positions: list[tuple[Engine, Engine, int]]) -> None:
    assert history_length_of(agent) <= HISTORY
    assert len(positions) >= 6
    for k, (engine, twin, seat) in enumerate(positions):
        assert engine.game_state(0)["hands"] != twin.game_state(0)["hands"]
        assert np.array_equal(engine.observation[0], twin.observation[0])
        a = ask_one(agent, engine, 0, np.random.default_rng(k))
        b = ask_one(agent, twin, 0, np.random.default_rng(k))
        assert a == b, f"{agent.name} at seat {seat} chose {a}, and {b} once the hidden cards were redealt"


@pytest.mark.parametrize("spec", SHIPPED_2P)
def test_a_shipped_agent_decides_the_same_when_the_hidden_cards_are_redealt(spec, positions_2p):
    _check_fair(make_agent(spec, UnoRules(), num_players=2), positions_2p)


@pytest.mark.parametrize("spec", SHIPPED_4P)
def test_a_shipped_agent_decides_the_same_at_four_players(spec, positions_4p):
    _check_fair(make_agent(spec, UnoRules(), num_players=4), positions_4p)


def test_the_check_catches_an_agent_that_reads_a_hidden_hand(positions_2p):
    """An agent choosing by the size of the next seat's hand in cards it cannot see fails the check."""

    class Peeker:
        name = "peeker"

        def act_in(self, engine, i, rng):
            legal = np.flatnonzero(engine.legal_mask[i])
            state = engine.game_state(i)
            hidden = state["hands"][1 - state["current_player"]]
            return int(legal[sum(hidden) % legal.size])

        def act(self, observation, action_mask, rng):
            raise AssertionError("a peeker is asked through act_in")

    with pytest.raises(AssertionError, match="once the hidden cards were redealt"):
        _check_fair(Peeker(), positions_2p)
