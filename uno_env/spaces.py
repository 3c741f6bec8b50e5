"""The Gymnasium spaces of every ``uno_env`` environment: one source of observation bounds (docs/spaces.md).

``D`` is ``uno_env.observation.observation_size(rules.open_hands)``; a field this module does not
know is left unbounded rather than guessed."""

from __future__ import annotations

import dataclasses

import numpy as np
from gymnasium import spaces

from .actions import NUM_ACTIONS
from .cards import NUM_CARD_TYPES
from .checks import HISTORY_FORMS, check_history_form, check_int

# The vocabularies of a history row's kind and reason, for readers of the rows.
from .engine.events import DRAW_REASONS as DRAW_REASONS
from .engine.events import EVENT_NAMES as EVENT_NAMES
from .engine.history import (
    HISTORY_COUNTS_SIZE,
    HISTORY_OFFSETS,
    HISTORY_SIZE,
    HISTORY_TOKEN_SIZE,
    HISTORY_TOKEN_VOCAB,
)
from .engine.layout import MAX_HISTORY
from .observation import (
    OBS_BASE_SIZE,
    OBS_FIELDS,
    OBS_OFFSETS,
    STATE_DRAW_PILE,
    STATE_OTHER_HANDS,
    STATE_SIZE,
    STATE_TO_ACT,
    observation_size,
)
from .rules import MAX_PLAYERS, UnoRules, check_num_players

__all__ = [
    "MAX_HISTORY",
    "HISTORY_FORMS",
    "observation_bounds",
    "observation_space",
    "action_space",
    "state_bounds",
    "state_space",
    "history_spaces",
]

# Fields with one slot per relative seat (slot k: the seat k places clockwise from the observer).
_PER_SEAT = ("hand_sizes", "seat_present", "scores", "uno_called", "eliminated", "catchable", "partner")
# Fields with four slots (one per colour) per relative seat.
_PER_SEAT_COLOR = ("drew_on_color", "named_color")


def observation_bounds(rules: UnoRules, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-index ``(low, high)`` of the observation vector under ``rules`` (docs/spaces.md)."""
    if not isinstance(rules, UnoRules):
        raise ValueError(f"rules must be a UnoRules (see UnoRules.preset), got {type(rules).__name__}")
    check_num_players(num_players)
    size = observation_size(rules.open_hands)
    base = observation_size(False)
    deck = rules.counts.astype(np.float32)
    cards = float(deck.sum())
    points = float(np.dot(deck, np.asarray(rules.points, np.float32)))
    one = (0.0, 1.0)
    known: dict[str, tuple[float | np.ndarray, float | np.ndarray]] = {
        "hand": (0.0, deck),
        "top_card": one,
        "current_color": one,
        "phase": one,
        "direction": (-1.0, 1.0),
        # Stacked penalties add up draw cards (R5, R6): never more than the deck holds.
        "pending_draw": (0.0, cards),
        "drawn_card": one,
        "hand_sizes": (0.0, cards),
        "seat_present": one,
        "scores": (0.0, (rules.target_points + points) / 100.0),
        "uno_called": one,
        "discard_counts": (0.0, deck),
        "draw_pile_size": (0.0, cards),
        "wd4_prev_color": one,
        "is_current": one,
        "eliminated": one,
        "catchable": one,
        "partner": one if rules.teams else (0.0, 0.0),
        # Rounds finished: a one-round episode shows 1 only in its final view (R8 scoring
        # counts the round); a match has no fixed length.
        "round": (0.0, 1.0 if rules.episode == "round" else np.inf),
        "drew_on_color": one,
        "named_color": one,
    }
    low = np.full(size, -np.inf, np.float32)
    high = np.full(size, np.inf, np.float32)
    for name, width, _ in OBS_FIELDS:
        if name in known:
            at = OBS_OFFSETS[name]
            low[at : at + width], high[at : at + width] = known[name]
            if name in _PER_SEAT:
                low[at + num_players : at + width] = high[at + num_players : at + width] = 0.0
            elif name in _PER_SEAT_COLOR:
                low[at + 4 * num_players : at + width] = high[at + 4 * num_players : at + width] = 0.0
    if size > base:
        # open_hands (R11): block m - 1 holds the hand of relative seat m (1..MAX_PLAYERS - 1).
        blocks = (size - base) // NUM_CARD_TYPES
        low[base:] = 0.0
        high[base:] = np.tile(deck, blocks)
        high[base + (num_players - 1) * NUM_CARD_TYPES :] = 0.0
    high = np.where(high == low, low + 1.0, high).astype(np.float32)
    return low, high


def observation_space(rules: UnoRules, num_players: int) -> spaces.Box:
    """``Box(low, high, (D,), float32)`` with ``observation_bounds(rules, num_players)``."""
    low, high = observation_bounds(rules, num_players)
    return spaces.Box(low, high, dtype=np.float32)


def action_space() -> spaces.Discrete:
    """``Discrete(116)``: the action ids of docs/rules.md R2, the same under every rule set."""
    return spaces.Discrete(NUM_ACTIONS)


def state_bounds(rules: UnoRules, num_players: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-index ``(low, high)`` of the whole state (``Engine.state``): the observation's bounds
    without open hands, then every other hand, the draw pile's counts and the seat to act."""
    low_obs, high_obs = observation_bounds(dataclasses.replace(rules, open_hands=False), num_players)
    deck = rules.counts.astype(np.float32)
    low = np.zeros(STATE_SIZE, np.float32)
    high = np.zeros(STATE_SIZE, np.float32)
    low[:OBS_BASE_SIZE], high[:OBS_BASE_SIZE] = low_obs, high_obs
    high[STATE_OTHER_HANDS : STATE_OTHER_HANDS + (num_players - 1) * NUM_CARD_TYPES] = np.tile(deck, num_players - 1)
    high[STATE_DRAW_PILE : STATE_DRAW_PILE + NUM_CARD_TYPES] = deck
    high[STATE_TO_ACT : STATE_TO_ACT + num_players] = 1.0
    high = np.where(high == low, low + 1.0, high).astype(np.float32)
    return low, high


def state_space(rules: UnoRules, num_players: int) -> spaces.Box:
    """``Box(low, high, (S,), float32)`` with ``state_bounds(rules, num_players)``."""
    low, high = state_bounds(rules, num_players)
    return spaces.Box(low, high, dtype=np.float32)


def history_spaces(history: int, form: str = "rows") -> dict[str, spaces.Box]:
    """The observation entries ``history=K`` adds to an env, by ``form``: rows and counts, or int8 tokens."""
    check_int("history", history, 1, MAX_HISTORY)
    if check_history_form(form) == "tokens":
        high = np.broadcast_to(np.array(HISTORY_TOKEN_VOCAB, np.int64) - 1, (history, HISTORY_TOKEN_SIZE)).astype(
            np.int8
        )
        return {"history_tokens": spaces.Box(np.zeros_like(high), high, dtype=np.int8)}
    high = np.ones((history, HISTORY_SIZE), np.float32)
    high[:, HISTORY_OFFSETS["number"]] = np.inf
    return {
        "history": spaces.Box(np.zeros_like(high), high, dtype=np.float32),
        "history_counts": spaces.Box(0.0, np.inf, (MAX_PLAYERS, HISTORY_COUNTS_SIZE), dtype=np.float32),
    }
