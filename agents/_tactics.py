"""Pieces of play the rule-based agents share: per-rules tables, a few numba decisions and odds."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno_env.actions import ACCEPT, CALL_UNO, CATCH_UNO, DRAW, SWAP_WITH_FIRST
from uno_env.cards import DRAW_TWO, NUM_COLORS, NUM_RANKS, WILD_DRAW_FOUR
from uno_env.observation import PHASE_RESPOND_DRAW_FOUR, PHASE_RESPOND_DRAW_TWO, hand_size_at, is_partner, wd4_legal
from uno_env.rules import UnoRules


def rule_tables(rules: UnoRules | None) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per-type deck copies and points (int64 [57]) and the R12.9 flag of a rule set."""
    rules = UnoRules() if rules is None else rules
    deck = rules.counts.astype(np.int64)
    points = np.asarray(rules.points, np.int64)
    return deck, points, bool(rules.wd4_wilds_count_as_match)


@njit(cache=True)
def prob_lacks(unseen_total, unseen_of, hand_size):
    """Chance that a hand of hand_size random unseen cards holds none of unseen_of given ones."""
    p = 1.0
    for i in range(int(hand_size)):
        if unseen_total - i <= 0:
            break
        p *= max(unseen_total - unseen_of - i, 0) / (unseen_total - i)
    return p


@njit(cache=True)
def smallest_hand_swap(o, m, n):
    """SWAP_WITH the opponent holding the fewest cards among those offered (R5), or -1."""
    best, best_h = -1, 1 << 30
    for k in range(1, n):
        a = SWAP_WITH_FIRST + k - 1
        if m[a] and not is_partner(o, k) and hand_size_at(o, k) < best_h:
            best, best_h = a, hand_size_at(o, k)
    return best


@njit(cache=True)
def uno_call_action(mask_row):
    """CATCH_UNO or CALL_UNO when offered (R7 `explicit`: both only help the caller), else -1."""
    if mask_row[CATCH_UNO]:
        return CATCH_UNO
    if mask_row[CALL_UNO]:
        return CALL_UNO
    return -1


@njit(cache=True)
def answer_draw_penalty(o, m, phase, wilds_match):
    """Respond phases without a challenge: pass a stacked penalty on when allowed (R5, no bluff), else take it.

    Returns -1 outside the respond phases or when neither is offered.
    """
    if phase == PHASE_RESPOND_DRAW_TWO:
        for c in range(NUM_COLORS):
            if m[c * NUM_RANKS + DRAW_TWO]:
                return c * NUM_RANKS + DRAW_TWO
        if m[DRAW]:
            return DRAW
    elif phase == PHASE_RESPOND_DRAW_FOUR:
        if m[WILD_DRAW_FOUR] and wd4_legal(o, wilds_match):
            return WILD_DRAW_FOUR
        if m[ACCEPT]:
            return ACCEPT
    return -1
