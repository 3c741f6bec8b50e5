"""Agents read the history in the form they declare (``history_form``: float rows or int8 tokens):
every table gives each its own, agents of either form and none share a table, and a bad form is
refused with the state unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from arena import play
from uno_env import Engine, UnoRules
from uno_env.engine.history import HISTORY_TOKEN_SIZE, HISTORY_TOKEN_VOCAB
from uno_env.gym_env import UnoVectorEnv
from uno_env.policy import history_form_of, sample_legal
from uno_env.spaces import HISTORY_SIZE
from uno_env.table import Table, ask_one


class Reader:
    """Reads ``k`` events in ``form`` and checks, at every call, that its dict is the engine's history
    of exactly the games it was asked for (the live games where its seat is to act)."""

    def __init__(self, name: str, k: int, form: str | None) -> None:
        self.name, self.history_length = name, k
        if form is not None:
            self.history_form = form
        self.table: Table | None = None
        self.index = -1
        self.only: np.ndarray | None = None  # the one game ask_one asks for
        self.calls = 0

    def act(self, observation, action_mask, rng):
        self.calls += 1
        if not self.history_length:
            assert isinstance(observation, np.ndarray)
            return sample_legal(action_mask, rng)
        form = history_form_of(self)
        keys = {"observation", "history_tokens"} if form == "tokens" else {"observation", "history", "history_counts"}
        assert set(observation) == keys
        if self.table is not None:  # the games asked: the live ones whose player to act is this agent
            e = self.table.engine
            live = np.flatnonzero(~(e.terminated | e.truncated))
            rows = live[self.table.owners(live) == self.index] if self.only is None else self.only
            np.testing.assert_array_equal(observation["observation"], e.observation[rows])
            expected = e.history_observation(e.current_player, form, self.history_length)
            for key in keys - {"observation"}:
                np.testing.assert_array_equal(observation[key], expected[key][rows])
        n = action_mask.shape[0]
        if form == "tokens":
            tokens = observation["history_tokens"]
            assert tokens.dtype == np.int8 and tokens.shape == (n, self.history_length, HISTORY_TOKEN_SIZE)
            assert (tokens >= 0).all() and (tokens < np.array(HISTORY_TOKEN_VOCAB)).all()
        else:
            assert observation["history"].shape == (n, self.history_length, HISTORY_SIZE)
        return sample_legal(action_mask, rng)


def test_a_table_gives_each_agent_the_history_in_its_own_form():
    agents = [Reader("rows", 4, "rows"), Reader("tokens", 6, "tokens"), Reader("plain", 0, None)]
    e = Engine(12, 3, UnoRules(), seed=3, history=6)
    table = Table(e, agents, np.random.default_rng(0))
    for i, a in enumerate(agents):
        a.table, a.index = table, i
    table.seat_agent[:] = np.array([0, 1, 2])[(np.arange(3)[None, :] + np.arange(12)[:, None]) % 3]
    e.reset()
    for _ in range(60):
        table.step()
    assert all(a.calls > 10 for a in agents)
    # one game at a time (the web table, uno-play, labelling): each game's own seat and history
    asked = 0
    for g in np.flatnonzero(~(e.terminated | e.truncated)).tolist():
        agent = agents[int(table.owners(np.array([g]))[0])]
        agent.only = np.array([g])
        calls = agent.calls
        assert e.legal_mask[g, ask_one(agent, e, g, np.random.default_rng(g))]
        asked += agent.calls - calls
    assert asked > 0


def test_agents_of_both_forms_play_a_duplicate_match_and_sit_in_an_env():
    agents = [Reader("rows", 5, "rows"), Reader("tokens", 3, "tokens")]
    result = play(agents, 8, seed=4, batch_size=4, duplicate=True)
    assert result.games == 8 and all(a.calls for a in agents)
    # the vector envs' opponents: a learner reading tokens, opponents of each form
    env = UnoVectorEnv(4, 3, history=4, history_form="tokens", opponents=agents)
    obs, info = env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(30):
        assert obs["history_tokens"].shape == (4, 4, HISTORY_TOKEN_SIZE)
        obs, *_, info = env.step(sample_legal(info["action_mask"], rng))
    assert all(a.calls > 2 for a in agents)


@pytest.mark.parametrize("form", ["floats", "", None, 1, ("tokens",)])
def test_a_bad_history_form_is_refused_with_the_state_unchanged(form):
    bad = Reader("bad", 4, "rows")
    bad.history_form = form
    with pytest.raises(ValueError, match=r"agent 'bad' declares history_form=.*one of \('rows', 'tokens'\)"):
        history_form_of(bad)
    e = Engine(2, 2, UnoRules(), seed=1, history=4)
    with pytest.raises(ValueError, match="history_form"):
        Table(e, [bad], np.random.default_rng(0))
    with pytest.raises(ValueError, match="history_form"):
        ask_one(bad, e, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="history_form"):
        play([bad, Reader("rows", 4, "rows")], 2, seed=1)
    good = Reader("good", 4, "tokens")
    env = UnoVectorEnv(2, 2, history=4, opponents=[good])
    with pytest.raises(ValueError, match="history_form"):
        env.set_opponents(bad)
    assert env.driver.groups[0] == [good]
