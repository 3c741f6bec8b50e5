"""Invariant checks over a batch (used by tests and the soak run; not on the step path)."""

from __future__ import annotations

from numba import njit

from ..cards import NUM_CARD_TYPES
from .layout import (
    C_NUM_PLAYERS,
    C_RESHUFFLE_ALL,
    G_DISCARD_SIZE,
    G_DONE,
    G_DRAW_SIZE,
    G_PHASE,
    G_PLAYER,
    G_TOP,
    PHASE_PLAY,
    PHASE_POST_DRAW,
    PILE_DISCARD,
    PILE_DRAW,
    PL_HAND_SIZE,
)

OK = 0
BAD_CARD_COUNT = 1
BAD_HAND_SIZE = 2
BAD_DISCARD_COUNTS = 3
EMPTY_MASK = 4
PLAY_NOT_HELD = 5
BAD_PLAYER = 6
MASK_WHEN_OVER = 7
BAD_TOP = 8
MESSAGES = (
    "ok",
    "cards of some type are not all accounted for (hands + draw pile + discard pile != deck)",
    "a stored hand size differs from the cards in that hand",
    "the discard-pile counts differ from the discard pile",
    "the legal mask is empty while the round is on",
    "the mask offers to play a card the player does not hold",
    "current player is not a seat",
    "the mask offers an action after the round ended",
    "the card to match is not the top of the discard pile (nor kept after a reshuffle='every_played_card')",
)


@njit(cache=True)
def check_batch(s, cfg, deck, mask, out):
    """out[b] = the first violated invariant of game b (0 when all hold)."""
    g, pl, hands, piles = s[0], s[1], s[2], s[3]
    n = cfg[C_NUM_PLAYERS]
    counts = [0] * NUM_CARD_TYPES
    for b in range(g.shape[0]):
        out[b] = OK
        for t in range(NUM_CARD_TYPES):
            counts[t] = 0
        for i in range(g[b, G_DRAW_SIZE]):
            counts[piles[b, PILE_DRAW, i]] += 1
        disc = [0] * NUM_CARD_TYPES
        for i in range(g[b, G_DISCARD_SIZE]):
            counts[piles[b, PILE_DISCARD, i]] += 1
            disc[piles[b, PILE_DISCARD, i]] += 1
        for p in range(n):
            size = 0
            for t in range(NUM_CARD_TYPES):
                counts[t] += hands[b, p, t]
                size += hands[b, p, t]
            if size != pl[b, p, PL_HAND_SIZE]:
                out[b] = BAD_HAND_SIZE
        for t in range(NUM_CARD_TYPES):
            if counts[t] != deck[t]:
                out[b] = BAD_CARD_COUNT
            if disc[t] != hands[b, n, t]:
                out[b] = BAD_DISCARD_COUNTS
        d = g[b, G_DISCARD_SIZE]
        if (d > 0 and g[b, G_TOP] != piles[b, PILE_DISCARD, d - 1]) or (d == 0 and not cfg[C_RESHUFFLE_ALL]):
            out[b] = BAD_TOP
        if out[b] != OK:
            continue
        p = g[b, G_PLAYER]
        if p < 0 or p >= n:
            out[b] = BAD_PLAYER
            continue
        any_legal = False
        for a in range(mask.shape[1]):
            any_legal = any_legal or mask[b, a]
        if g[b, G_DONE]:
            if any_legal:
                out[b] = MASK_WHEN_OVER
            continue
        if not any_legal:
            out[b] = EMPTY_MASK
        phase = g[b, G_PHASE]
        if phase == PHASE_PLAY or phase == PHASE_POST_DRAW:
            for t in range(NUM_CARD_TYPES):
                if mask[b, t] and hands[b, p, t] == 0:
                    out[b] = PLAY_NOT_HELD
