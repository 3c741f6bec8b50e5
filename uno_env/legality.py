"""Card legality rules shared by the engine and by agents that read their own hand (R4).

The engine applies them to the true hand; an agent applies them to the hand in its observation.
Both call the same compiled function, so the rule exists once.
"""

from __future__ import annotations

from numba import njit

from .cards import NUM_CARD_TYPES, NUM_RANKS, WILD, WILD_DRAW_FOUR


@njit(cache=True)
def wd4_allowed(hand, color, wilds_match):
    """R4, R12.9: a Wild Draw Four is legal when the hand holds no other card of ``color``
    (``-1`` while a first-card wild awaits its colour), nor, with ``wilds_match``, another wild.

    ``hand`` is any 1-D array of the 57 per-type counts (the engine's int8 row or an
    observation's float32 ``hand`` field)."""
    if color >= 0:
        base = color * NUM_RANKS
        for r in range(NUM_RANKS):
            if hand[base + r] > 0:
                return False
    if wilds_match:
        for t in range(WILD, NUM_CARD_TYPES):
            if t != WILD_DRAW_FOUR and hand[t] > 0:
                return False
    return True
