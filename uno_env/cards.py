"""Card type ids (docs/rules.md R1) and lookup tables, built once at import.

A card *type* is what the rules care about (two copies of "red 7" are one type): the coloured
cards ``card_type(color, rank)`` first, then the wilds ``WILD`` .. ``WILD_CUSTOMIZABLE``."""

from __future__ import annotations

from enum import IntEnum

import numpy as np

NUM_COLORS = 4
NUM_RANKS = 13
NUM_CARD_TYPES = 57
MAX_DECK_SIZE = 112

COLOR_NAMES = ("red", "yellow", "green", "blue")


class Rank(IntEnum):
    """Coloured ranks: numbers 0–9 and the three coloured action cards (R1)."""

    SKIP = 10
    REVERSE = 11
    DRAW_TWO = 12


# Plain ints (numba folds module-level ints into kernels as constants).
SKIP = int(Rank.SKIP)
REVERSE = int(Rank.REVERSE)
DRAW_TWO = int(Rank.DRAW_TWO)
NUM_NUMBER_RANKS = 10  # ranks 0-9 are number cards (the cards PLAY_DOUBLE plays, R2)

WILD = 52
WILD_DRAW_FOUR = 53
WILD_SHUFFLE_HANDS = 54
WILD_SWAP_HANDS = 55
WILD_CUSTOMIZABLE = 56

_RANK_NAMES = tuple(str(r) for r in range(NUM_NUMBER_RANKS)) + ("skip", "reverse", "draw two")
_WILD_NAMES = ("wild", "wild draw four", "wild shuffle hands", "wild swap hands", "wild customizable")


def card_type(color: int, rank: int) -> int:
    """Type id of a coloured card."""
    return color * NUM_RANKS + rank


def _build_names() -> tuple[str, ...]:
    names = [f"{COLOR_NAMES[t // NUM_RANKS]} {_RANK_NAMES[t % NUM_RANKS]}" for t in range(WILD)]
    return tuple(names) + _WILD_NAMES


CARD_NAMES: tuple[str, ...] = _build_names()
_NAME_TO_TYPE = {name: t for t, name in enumerate(CARD_NAMES)}

# Per-type lookup tables used by the kernels. -1 marks "not applicable" (wilds have no colour).
CARD_COLOR = np.array([t // NUM_RANKS if t < WILD else -1 for t in range(NUM_CARD_TYPES)], np.int8)
CARD_RANK = np.array([t % NUM_RANKS if t < WILD else -1 for t in range(NUM_CARD_TYPES)], np.int8)
IS_WILD = np.array([t >= WILD for t in range(NUM_CARD_TYPES)], bool)
IS_NUMBER = np.array([t < WILD and t % NUM_RANKS < NUM_NUMBER_RANKS for t in range(NUM_CARD_TYPES)], bool)
for _table in (CARD_COLOR, CARD_RANK, IS_WILD, IS_NUMBER):
    _table.flags.writeable = False


def card_name(card: int) -> str:
    """Readable name of a card type, e.g. ``card_name(20) == "yellow 7"``."""
    if not 0 <= int(card) < NUM_CARD_TYPES:
        raise ValueError(f"card type id must be in 0..{NUM_CARD_TYPES - 1}, got {card!r}")
    return CARD_NAMES[int(card)]


def parse_card(name: str) -> int:
    """Type id of a card name such as ``"red 7"``, ``"blue skip"`` or ``"wild draw four"``."""
    key = " ".join(str(name).lower().split())
    if key not in _NAME_TO_TYPE:
        raise ValueError(
            f"unknown card name {name!r}; expected '<colour> <0-9|skip|reverse|draw two>' with a "
            f"colour in {COLOR_NAMES}, or one of {_WILD_NAMES}"
        )
    return _NAME_TO_TYPE[key]


def deck_counts(deck: str, custom_wild_count: int = 3) -> np.ndarray:
    """Copies of each card type in a deck (R1), as an int8 array of 57 counts."""
    counts = np.zeros(NUM_CARD_TYPES, np.int8)
    for color in range(NUM_COLORS):
        counts[card_type(color, 0)] = 1
        for rank in range(1, NUM_RANKS):
            counts[card_type(color, rank)] = 2
    counts[WILD] = 4
    counts[WILD_DRAW_FOUR] = 4
    if deck == "shuffle_hands":
        counts[WILD_SHUFFLE_HANDS] = 1
        counts[WILD_CUSTOMIZABLE] = custom_wild_count
    elif deck == "swap_hands":
        counts[WILD_SWAP_HANDS] = 1
        counts[WILD_CUSTOMIZABLE] = custom_wild_count
    elif deck != "classic":
        raise ValueError(f"deck must be one of 'classic', 'shuffle_hands', 'swap_hands'; got {deck!r}")
    return counts


def default_card_points(deck: str) -> tuple[int, ...]:
    """Points of each card type under R8 for a deck."""
    points = [0] * NUM_CARD_TYPES
    for t in range(WILD):
        rank = t % NUM_RANKS
        points[t] = rank if rank < NUM_NUMBER_RANKS else 20
    points[WILD] = points[WILD_DRAW_FOUR] = 50
    extra = 40 if deck == "swap_hands" else 50
    points[WILD_SHUFFLE_HANDS] = points[WILD_SWAP_HANDS] = points[WILD_CUSTOMIZABLE] = extra
    return tuple(points)
