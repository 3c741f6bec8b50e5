"""Decisions the simple rule-based players share (numba, one observation row at a time).

``RLCardRuleAgent``, ``GreedyAgent`` and ``FlatMCAgent``'s rollouts differ only in the card they
play in phase ``play``; every other decision is ``routine_action`` (docs/agents.md).
"""

from __future__ import annotations

from numba import njit

from uno_env.actions import CHOOSE_RED, DRAW, PASS
from uno_env.cards import NUM_CARD_TYPES, WILD, WILD_DRAW_FOUR
from uno_env.observation import (
    PHASE_CHOOSE_COLOR,
    PHASE_CHOOSE_SWAP_TARGET,
    PHASE_PLAY,
    PHASE_POST_DRAW,
    drawn_of,
    most_held_color,
    num_seats,
    wd4_legal,
)
from uno_env.policy import kth_legal

from ._tactics import answer_draw_penalty, smallest_hand_swap, uno_call_action


@njit(cache=True)
def draw_or_pass(m):
    """DRAW, else PASS, else -1: what a player does when it will not play."""
    if m[DRAW]:
        return DRAW
    if m[PASS]:
        return PASS
    return -1


@njit(cache=True)
def routine_action(o, m, u, phase, wilds_match):
    """The shared decision; -1 in phase play when no UNO call is offered."""
    call = uno_call_action(m)
    if call >= 0:
        return call
    if phase == PHASE_PLAY:
        return -1
    if phase == PHASE_POST_DRAW:
        d = drawn_of(o)
        if d >= 0 and m[d] and (d != WILD_DRAW_FOUR or wd4_legal(o, wilds_match)):
            return d
        if m[PASS]:
            return PASS
    elif phase == PHASE_CHOOSE_COLOR:
        return CHOOSE_RED + most_held_color(o)
    elif phase == PHASE_CHOOSE_SWAP_TARGET:
        a = smallest_hand_swap(o, m, num_seats(o))
        if a >= 0:
            return a
    else:
        a = answer_draw_penalty(o, m, phase, wilds_match)
        if a >= 0:
            return a
    return kth_legal(m, u)


@njit(cache=True)
def rlcard_play(o, m, u, wilds_match):
    """uno-rule-v1 in phase play: a uniformly random legal coloured card; else a wild (a Wild
    before a Wild Draw Four, the Draw Four only when R4 allows it); else draw or pass."""
    count = 0
    for t in range(WILD):
        if m[t]:
            count += 1
    if count > 0:
        k = min(int(u * count), count - 1)
        for t in range(WILD):
            if m[t]:
                if k == 0:
                    return t
                k -= 1
    for t in range(WILD, NUM_CARD_TYPES):
        if t != WILD_DRAW_FOUR and m[t]:
            return t
    if m[WILD_DRAW_FOUR] and wd4_legal(o, wilds_match):
        return WILD_DRAW_FOUR
    a = draw_or_pass(m)
    return a if a >= 0 else kth_legal(m, u)


@njit(cache=True)
def rlcard_row(o, m, u, phase, wilds_match):
    """One whole decision of RLCardRuleAgent (also the search's rollout policy)."""
    a = routine_action(o, m, u, phase, wilds_match)
    return a if a >= 0 else rlcard_play(o, m, u, wilds_match)
