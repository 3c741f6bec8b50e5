"""uno_env.spaces: one source of observation bounds for every env; the bounds hold in play (R1, R8, R11)."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from helpers import MIXED_RULES, mixed

import uno_env
import uno_env.pettingzoo_env
from uno_env import NUM_CARD_TYPES, Engine, UnoRules, sample_legal
from uno_env.cards import deck_counts
from uno_env.gym_env import UnoEnv, UnoVectorEnv
from uno_env.observation import OBS_FIELDS, OBS_OFFSETS, observation_size
from uno_env.spaces import action_space, observation_bounds, observation_space

PER_SEAT = ("hand_sizes", "seat_present", "scores", "uno_called", "eliminated", "catchable", "partner")
WIDTH = {name: size for name, size, _ in OBS_FIELDS}

CASES = {
    "classic 2p": (2, UnoRules()),
    "official 3p": (3, UnoRules.preset("official")),
    "house 5p open hands": (5, UnoRules.preset("house", open_hands=True)),
    "swap_hands 10p": (10, UnoRules.preset("swap_hands", hand_size=5)),
    "teams match 4p": (4, mixed("teams_match", hand_size=3, target_points=60)),
    "elimination match 3p, stacking": (3, mixed("elimination_stacking", hand_size=3, target_points=40)),
    "doubles, explicit UNO, open hands 2p": (2, MIXED_RULES["open_doubles_explicit"]),
}


def always_zero(rules: UnoRules, num_players: int) -> np.ndarray:
    """Indices that are 0 in every observation, from the layout's meaning (not from the bounds)."""
    zero = np.zeros(observation_size(rules.open_hands), bool)
    absent = deck_counts(rules.deck, rules.custom_wild_count) == 0
    for name in ("hand", "top_card", "drawn_card", "discard_counts"):
        zero[OBS_OFFSETS[name] : OBS_OFFSETS[name] + NUM_CARD_TYPES] |= absent
    for name in PER_SEAT:
        zero[OBS_OFFSETS[name] + num_players : OBS_OFFSETS[name] + WIDTH[name]] = True
    if not rules.teams:
        zero[OBS_OFFSETS["partner"] : OBS_OFFSETS["partner"] + WIDTH["partner"]] = True
    if rules.open_hands:
        base = observation_size(False)
        for m in range(1, zero.size // NUM_CARD_TYPES):
            block = slice(base + (m - 1) * NUM_CARD_TYPES, base + m * NUM_CARD_TYPES)
            zero[block] |= absent if m < num_players else True
    return zero


@pytest.mark.parametrize("name", list(CASES))
def test_every_env_uses_the_same_space(name):
    P, rules = CASES[name]
    space = observation_space(rules, P)
    low, high = observation_bounds(rules, P)
    assert space == gymnasium.spaces.Box(low, high, dtype=np.float32)
    assert low.dtype == high.dtype == np.float32 and low.shape == (Engine(1, P, rules).observation_size,)
    assert uno_env.raw_env(num_players=P, rules=rules).observation_space("player_0")["observation"] == space
    assert uno_env.env(num_players=P, rules=rules).observation_space("player_1")["observation"] == space
    assert UnoEnv(num_players=P, rules=rules).observation_space == space
    venv = UnoVectorEnv(2, num_players=P, rules=rules)
    assert venv.single_observation_space == space and venv.single_action_space == action_space()
    assert action_space() == gymnasium.spaces.Discrete(116)
    assert uno_env.pettingzoo_env.observation_bounds is observation_bounds  # one function, re-exported


@pytest.mark.parametrize("name", list(CASES))
def test_bounds_are_wide_only_where_the_value_is_always_zero(name):
    """Gymnasium warns on low == high: such dimensions (and only those) are [0, 1]."""
    P, rules = CASES[name]
    low, high = observation_bounds(rules, P)
    assert (low < high).all()
    zero = always_zero(rules, P)
    assert (low[zero] == 0).all() and (high[zero] == 1).all()
    deck = deck_counts(rules.deck, rules.custom_wild_count)
    hand = slice(OBS_OFFSETS["hand"], OBS_OFFSETS["hand"] + NUM_CARD_TYPES)
    np.testing.assert_array_equal(high[hand], np.where(deck > 0, deck, 1))  # R1: copies in the deck
    assert high[OBS_OFFSETS["hand_sizes"]] == deck.sum() and low[OBS_OFFSETS["direction"]] == -1


@pytest.mark.parametrize("name", list(CASES))
def test_observations_of_every_seat_stay_in_bounds_in_random_play(name):
    """Every seat's view, in every phase and of every finished round, is inside the bounds, and
    the always-zero indices are 0."""
    P, rules = CASES[name]
    low, high = observation_bounds(rules, P)
    zero = always_zero(rules, P)
    e = Engine(48, P, rules.replace(max_turns=400), seed=0)
    rng = np.random.default_rng(0)
    view = np.empty((e.num_envs, e.observation_size), np.float32)
    ends = 0
    for _ in range(400):
        for seat in range(P):
            e.observe(seat, out=view)
            bad = np.argwhere((view < low) | (view > high))
            assert bad.size == 0, f"seat {seat}, game {bad[0][0]}, index {bad[0][1]} = {view[tuple(bad[0])]}"
            assert not view[:, zero].any()
        done = e.terminated | e.truncated
        if done.any():
            ends += int(done.sum())
            e.reset(games=done)  # after the finished views were checked above
        e.step(sample_legal(e.legal_mask, rng))
    assert ends > 0


@pytest.mark.parametrize(
    "args, match",
    [
        (("classic", 2), "rules must be a UnoRules"),
        ((UnoRules(), 1), r"num_players must be an integer in 2\.\.10, got 1"),
        ((UnoRules(), 11), "num_players"),
        ((UnoRules(), 2.0), "num_players"),
        ((UnoRules(), True), "num_players"),
    ],
)
def test_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        observation_bounds(*args)
    with pytest.raises(ValueError, match=match):
        observation_space(*args)
