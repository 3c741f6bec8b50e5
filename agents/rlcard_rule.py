"""``RLCardRuleAgent``: RLCard's ``uno-rule-v1`` decision logic carried over to our rules."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno_env.cards import NUM_CARD_TYPES, WILD, WILD_DRAW_FOUR
from uno_env.engine.layout import PHASE_CHOOSE_COLOR, PHASE_PLAY, PHASE_POST_DRAW
from uno_env.rules import UnoRules

from ._obs import (
    CHOOSE_RED,
    DRAW,
    PASS,
    answer_draw_penalty,
    drawn_of,
    kth_legal,
    most_held_color,
    phase_of,
    prepare,
    rule_tables,
    uno_call_action,
    wd4_legal,
)


@njit(cache=True)
def _act_row(o, m, u, wilds_match):
    """One decision of uno-rule-v1 (see the class docstring for the rules)."""
    call = uno_call_action(m)
    if call >= 0:
        return call
    phase = phase_of(o)
    if phase == PHASE_PLAY:
        # A uniformly random legal non-wild play: RLCard filters wilds out of its choices.
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
        # RLCard offers a Wild before a Wild Draw Four (the latter only when nothing else fits).
        for t in range(WILD, NUM_CARD_TYPES):
            if t != WILD_DRAW_FOUR and m[t]:
                return t
        if m[WILD_DRAW_FOUR] and wd4_legal(o, wilds_match):
            return WILD_DRAW_FOUR
        if m[DRAW]:
            return DRAW
        if m[PASS]:
            return PASS
    elif phase == PHASE_POST_DRAW:
        d = drawn_of(o)
        if d >= 0 and m[d] and (d != WILD_DRAW_FOUR or wd4_legal(o, wilds_match)):
            return d
        if m[PASS]:
            return PASS
    elif phase == PHASE_CHOOSE_COLOR:
        return CHOOSE_RED + most_held_color(o)
    else:
        a = answer_draw_penalty(o, m, phase, wilds_match)
        if a >= 0:
            return a
    # Anything the rules above do not cover (a decision RLCard lacks, e.g. a Swap Hands target).
    return kth_legal(m, u)


@njit(cache=True)
def _act_batch(obs, mask, u, wilds_match):
    out = np.empty(obs.shape[0], np.int64)
    for b in range(obs.shape[0]):
        out[b] = _act_row(obs[b], mask[b], u[b], wilds_match)
    return out


class RLCardRuleAgent:
    """RLCard's ``uno-rule-v1`` (rlcard/models/uno_rule_models.py) under our rules.

    - play phase: draw only when nothing is playable; otherwise a uniformly random legal
      non-wild play; a wild only when no coloured card fits (a Wild before a Wild Draw Four,
      as RLCard only offers the Draw Four when nothing else fits);
    - never bluffs: it plays a Wild Draw Four only when R4 allows it, judged from its own hand
      and the current colour (holding that colour, it plays one of those cards instead);
    - choose_color: the colour it holds the most coloured cards of;
    - post_draw: plays the drawn card when it may (never as a bluff), else passes;
    - respond_draw_four: never challenges (RLCard has no challenge), so ACCEPT;
    - options RLCard lacks: answers a stacked Draw Two / Wild Draw Four with one when it may
      (R5; the Draw Four only when R4 allows it), never plays doubles (R4 `allow_doubles`),
      calls and catches UNO whenever offered (R7 `explicit`), and picks any other decision
      (a Swap Hands target) uniformly at random.
    """

    name = "rlcard_rule"

    def __init__(self, rules: UnoRules | None = None) -> None:
        """``rules`` only tells whether held wilds count against a Wild Draw Four (R12.9)."""
        self._wilds_match = rule_tables(rules)[2]

    def act(self, observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One legal action per row (int64 [B])."""
        obs, mask = prepare(observation, action_mask)
        # Draw one uniform per row whatever the branch, so the stream does not depend on play.
        u = rng.random(obs.shape[0])
        return _act_batch(obs, mask, u, self._wilds_match)
