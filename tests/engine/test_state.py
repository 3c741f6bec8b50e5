"""The whole state (``Engine.state``, ``observation.STATE_FIELDS``): hidden information for critics.

It must hold every card exactly once (own hand, other hands, draw pile, discard pile), begin with
the observing seat's observation, and be the only place hidden cards appear: the observation of a
hidden twin (everything the seat cannot see redealt) is unchanged while the state changes.
"""

from __future__ import annotations

import numpy as np
import pytest

from uno_env import Engine, UnoRules, sample_legal
from uno_env.cards import NUM_CARD_TYPES, deck_counts
from uno_env.observation import (
    OBS_BASE_SIZE,
    OBS_DISCARD,
    OBS_HAND,
    STATE_DRAW_PILE,
    STATE_FIELDS,
    STATE_OTHER_HANDS,
    STATE_SIZE,
    STATE_TO_ACT,
)
from uno_env.rules import MAX_PLAYERS


def _played(num_players: int, rules: UnoRules, steps: int, seed: int = 0) -> Engine:
    engine = Engine(64, num_players, rules, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        live = ~(engine.terminated | engine.truncated)
        actions = np.where(live, sample_legal(engine.legal_mask, rng), -1)
        engine.step(actions)
    return engine


def test_state_fields_add_up_to_state_size():
    assert sum(size for _, size, _ in STATE_FIELDS) == STATE_SIZE


@pytest.mark.parametrize("num_players", [2, 4, 10])
@pytest.mark.parametrize("preset", ["classic", "house"])
@pytest.mark.parametrize("steps", [0, 7, 40])
def test_state_holds_every_card_once_and_starts_with_the_observation(num_players, preset, steps):
    rules = UnoRules.preset(preset)
    engine = _played(num_players, rules, steps)
    for seat in range(num_players):
        state = engine.state(seat)
        assert state.shape == (64, STATE_SIZE) and state.dtype == np.float32
        np.testing.assert_array_equal(state[:, :OBS_BASE_SIZE], engine.observe(seat)[:, :OBS_BASE_SIZE])
        others = state[:, STATE_OTHER_HANDS:STATE_DRAW_PILE].reshape(64, MAX_PLAYERS - 1, NUM_CARD_TYPES)
        total = (
            state[:, OBS_HAND : OBS_HAND + NUM_CARD_TYPES]
            + others.sum(1)
            + state[:, STATE_DRAW_PILE : STATE_DRAW_PILE + NUM_CARD_TYPES]
            + state[:, OBS_DISCARD : OBS_DISCARD + NUM_CARD_TYPES]
        )
        expected = deck_counts(rules.deck, rules.custom_wild_count).astype(np.float32)
        np.testing.assert_array_equal(total, np.broadcast_to(expected, total.shape))
        for b in range(4):
            game = engine.game_state(b)
            for k in range(1, num_players):
                held = np.bincount(game["hands"][(seat + k) % num_players], minlength=NUM_CARD_TYPES)
                np.testing.assert_array_equal(others[b, k - 1], held)
            np.testing.assert_array_equal(others[b, num_players - 1 :], 0)
            to_act = state[b, STATE_TO_ACT : STATE_TO_ACT + MAX_PLAYERS]
            if game["phase"] == "round_over":
                assert not to_act.any()
            else:
                assert np.flatnonzero(to_act).tolist() == [(game["current_player"] - seat) % num_players]


def test_hidden_twin_changes_the_state_but_not_the_observation():
    engine = _played(3, UnoRules.preset("classic"), 5, seed=3)
    twin = Engine(64, 3, engine.rules)
    twin.copy_games(engine, np.arange(64), np.arange(64))
    live = np.flatnonzero(~(engine.terminated | engine.truncated))
    twin.resample_hidden(live, 0, np.random.default_rng(9))
    np.testing.assert_array_equal(twin.observe(0)[live], engine.observe(0)[live])
    assert (twin.state(0)[live] != engine.state(0)[live]).any(axis=1).mean() > 0.9


def test_state_out_and_games_arguments():
    engine = _played(2, UnoRules.preset("classic"), 3)
    out = np.full((64, STATE_SIZE), 7.0, np.float32)
    engine.state(1, out=out, games=[2, 5])
    np.testing.assert_array_equal(out[[2, 5]], engine.state(1)[[2, 5]])
    assert (out[0] == 7.0).all()
    per_game = engine.state(np.arange(64) % 2)
    np.testing.assert_array_equal(per_game[1::2], engine.state(1)[1::2])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seats": 2}, "seats must be integers in 0..1"),
        ({"seats": [0, 1, 0]}, "seats must be one seat or 64 seats"),
        ({"seats": 0, "out": np.zeros((64, STATE_SIZE), np.float64)}, "out must be a writeable C-contiguous float32"),
        ({"seats": 0, "out": np.zeros((64, 10), np.float32)}, "out must be a writeable C-contiguous float32"),
    ],
)
def test_state_rejects_bad_arguments(kwargs, message):
    engine = Engine(64, 2, seed=0)
    with pytest.raises(ValueError, match=message):
        engine.state(**kwargs)


@pytest.mark.parametrize("num_players", [2, 4, 10])
@pytest.mark.parametrize("preset", ["classic", "official", "house"])
def test_state_stays_inside_state_space_over_random_play(num_players, preset):
    from uno_env.spaces import state_space

    rules = UnoRules.preset(preset)
    space = state_space(rules, num_players)
    engine = Engine(64, num_players, rules, seed=1)
    rng = np.random.default_rng(1)
    for _ in range(60):
        for row in engine.state(np.arange(64) % num_players):
            assert space.contains(row)
        live = ~(engine.terminated | engine.truncated)
        engine.step(np.where(live, sample_legal(engine.legal_mask, rng), -1))
