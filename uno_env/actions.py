"""Action ids (docs/rules.md R2): one ``Discrete(116)`` space shared by every rule set.

Actions a rule set does not use are always masked out; ``uno_env.docs.ACTION_GROUPS`` says what
each range of ids means and ``action_name(a)`` names one id."""

from __future__ import annotations

from enum import IntEnum

from numba import njit

from .cards import (
    CARD_COLOR,
    CARD_NAMES,
    CARD_RANK,
    COLOR_NAMES,
    NUM_CARD_TYPES,
    NUM_COLORS,
    NUM_NUMBER_RANKS,
    NUM_RANKS,
    WILD,
)
from .rules import MAX_PLAYERS

NUM_ACTIONS = 116

# The ids as plain ints, each named as its ``Action`` member (the public names): the one source
# for the engine's kernels, agents and docs (numba folds module-level ints into compiled code as
# constants; IntEnum members would be objects). Ranges are named by R2's action and _FIRST/_LAST.
PLAY_FIRST = 0
DRAW = 57
PASS = 58
CHOOSE_RED = 59
CHOOSE_YELLOW = 60
CHOOSE_GREEN = 61
CHOOSE_BLUE = 62
CHALLENGE = 63
ACCEPT = 64
CALL_UNO = 65
CATCH_UNO = 66
SWAP_WITH_FIRST = 67
SWAP_WITH_LAST = SWAP_WITH_FIRST + MAX_PLAYERS - 2  # SWAP_WITH +1 .. +9
PLAY_DOUBLE_FIRST = SWAP_WITH_LAST + 1
NUM_DOUBLES = NUM_COLORS * NUM_NUMBER_RANKS


class Action(IntEnum):
    """Named action ids; PLAY of card type t is simply ``t`` (0–56)."""

    DRAW = DRAW
    PASS = PASS
    CHOOSE_RED = CHOOSE_RED
    CHOOSE_YELLOW = CHOOSE_YELLOW
    CHOOSE_GREEN = CHOOSE_GREEN
    CHOOSE_BLUE = CHOOSE_BLUE
    CHALLENGE = CHALLENGE
    ACCEPT = ACCEPT
    CALL_UNO = CALL_UNO
    CATCH_UNO = CATCH_UNO
    SWAP_WITH_FIRST = SWAP_WITH_FIRST
    PLAY_DOUBLE_FIRST = PLAY_DOUBLE_FIRST


@njit(cache=True)
def double_of(card):
    """PLAY_DOUBLE action id of a number card type (R2), or -1 for any other card."""
    if card >= WILD or CARD_RANK[card] >= NUM_NUMBER_RANKS:
        return -1
    return PLAY_DOUBLE_FIRST + CARD_COLOR[card] * NUM_NUMBER_RANKS + CARD_RANK[card]


@njit(cache=True)
def card_of_double(action):
    """Number card type played twice by a PLAY_DOUBLE action id."""
    k = action - PLAY_DOUBLE_FIRST
    return (k // NUM_NUMBER_RANKS) * NUM_RANKS + k % NUM_NUMBER_RANKS


def choose_color(color: int) -> int:
    """Action id of CHOOSE_COLOR for a colour 0–3."""
    return CHOOSE_RED + int(color)


def swap_with(offset: int) -> int:
    """Action id of SWAP_WITH the player ``offset`` (1–9) seats further clockwise."""
    return SWAP_WITH_FIRST + int(offset) - 1


def play_double(card: int) -> int:
    """Action id of PLAY_DOUBLE for a number card type."""
    color, rank = divmod(int(card), NUM_RANKS)
    return PLAY_DOUBLE_FIRST + color * NUM_NUMBER_RANKS + rank


def _build_names() -> tuple[str, ...]:
    names = [f"play {CARD_NAMES[t]}" for t in range(NUM_CARD_TYPES)]
    names += ["draw", "pass"]
    names += [f"choose {c}" for c in COLOR_NAMES]
    names += ["challenge", "accept", "call uno", "catch uno"]
    names += [f"swap with +{k}" for k in range(1, MAX_PLAYERS)]
    names += [f"play double {COLOR_NAMES[c]} {r}" for c in range(NUM_COLORS) for r in range(NUM_NUMBER_RANKS)]
    assert len(names) == NUM_ACTIONS
    return tuple(names)


ACTION_NAMES: tuple[str, ...] = _build_names()


def action_name(action: int) -> str:
    """Readable name of an action id, e.g. ``"play red 7"``, ``"choose blue"``."""
    if not 0 <= int(action) < NUM_ACTIONS:
        raise ValueError(f"action id must be in 0..{NUM_ACTIONS - 1}, got {action!r}")
    return ACTION_NAMES[int(action)]
