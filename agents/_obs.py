"""Reading the observation vector (``uno_env.engine.layout.OBS_FIELDS``) inside numba kernels.

Agents see only the observation and the legal mask (RULES.md R11). These helpers decode one
row of the observation; the ``OBS_*`` offsets are module-level ints, so numba folds them in as
constants. Relative seats: slot k of ``hand_sizes`` is the seat k places clockwise from the
observer, so the next player is slot 1 when ``direction`` is +1 and slot n-1 when it is -1.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno_env.cards import CARD_COLOR, CARD_RANK, NUM_CARD_TYPES, WILD, WILD_DRAW_FOUR, deck_counts
from uno_env.engine.layout import (
    NUM_PHASES,
    PHASE_RESPOND_DRAW_FOUR,
    PHASE_RESPOND_DRAW_TWO,
    OBS_COLOR,
    OBS_DIRECTION,
    OBS_DISCARD,
    OBS_DRAWN,
    OBS_DREW_ON,
    OBS_ELIMINATED,
    OBS_HAND,
    OBS_HAND_SIZES,
    OBS_NAMED,
    OBS_PARTNER,
    OBS_PHASE,
    OBS_PRESENT,
    OBS_TOP,
    OBS_WD4_PREV,
    MAX_PLAYERS,
)
from uno_env.rules import UnoRules

# The action ids as plain ints (numba constants), shared with the engine's kernels.
from uno_env.engine.kernels import (
    ACCEPT,
    CALL_UNO,
    CATCH_UNO,
    CHALLENGE,
    CHOOSE_RED,
    DRAW,
    PASS,
    SWAP_FIRST,
)
from uno_env.engine.kernels import DOUBLE_FIRST as PLAY_DOUBLE_FIRST
NUM_DOUBLES = 40
SKIP, REVERSE, DRAW_TWO = 10, 11, 12


def prepare(observation: np.ndarray, action_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The batch as C-contiguous float32 observations and bool masks (masks may come as int8)."""
    obs = np.ascontiguousarray(observation, dtype=np.float32)
    mask = np.ascontiguousarray(action_mask).astype(bool, copy=False)
    if obs.ndim != 2 or mask.ndim != 2 or obs.shape[0] != mask.shape[0]:
        raise ValueError(
            f"expected observation [B, D] and action_mask [B, A] with the same B, got "
            f"{obs.shape} and {mask.shape}"
        )
    return obs, mask


def rule_tables(rules: UnoRules | None) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per-type deck copies and points (int64 [57]) and the R12.9 flag of a rule set."""
    rules = UnoRules() if rules is None else rules
    deck = deck_counts(rules.deck, rules.custom_wild_count).astype(np.int64)
    points = np.asarray(rules.points, np.int64)
    return deck, points, bool(rules.wd4_wilds_count_as_match)


@njit(cache=True)
def phase_of(o):
    """Index of the one-hot phase (layout.PHASE_*)."""
    for k in range(NUM_PHASES):
        if o[OBS_PHASE + k] > 0.5:
            return k
    return -1


@njit(cache=True)
def one_hot_color(o, offset):
    """Colour 0–3 of a one-hot colour field (4 entries from ``offset``), or -1 when empty."""
    for c in range(4):
        if o[offset + c] > 0.5:
            return c
    return -1


@njit(cache=True)
def color_of(o):
    """Current colour 0–3, or -1 while a first-card wild awaits its colour."""
    return one_hot_color(o, OBS_COLOR)


@njit(cache=True)
def one_hot_card(o, offset):
    """Card type of a one-hot card field, or -1 when the field is empty."""
    for t in range(NUM_CARD_TYPES):
        if o[offset + t] > 0.5:
            return t
    return -1


@njit(cache=True)
def top_of(o):
    """Type of the top card of the discard pile."""
    return one_hot_card(o, OBS_TOP)


@njit(cache=True)
def drawn_of(o):
    """Type of the card just drawn (phase post_draw), or -1."""
    return one_hot_card(o, OBS_DRAWN)


@njit(cache=True)
def wd4_prev_color_of(o):
    """Colour in play before the pending Wild Draw Four (R6), or -1."""
    return one_hot_color(o, OBS_WD4_PREV)


@njit(cache=True)
def drew_on_color_of(o, slot):
    """Colour in play when the seat in a relative slot last ended its turn drawing without
    playing (it had no card that fitted), -1 when it has played since or never did so."""
    return one_hot_color(o, OBS_DREW_ON + 4 * slot)


@njit(cache=True)
def named_color_of(o, slot):
    """Colour the seat in a relative slot named with its last wild this round, or -1."""
    return one_hot_color(o, OBS_NAMED + 4 * slot)


@njit(cache=True)
def num_seats(o):
    """Number of players in the game."""
    n = 0
    for k in range(MAX_PLAYERS):
        if o[OBS_PRESENT + k] > 0.5:
            n += 1
    return n


@njit(cache=True)
def in_play(o, slot):
    """Whether the seat in a relative slot is still in the match (R8 elimination)."""
    return o[OBS_PRESENT + slot] > 0.5 and o[OBS_ELIMINATED + slot] < 0.5


@njit(cache=True)
def active_seats(o, n):
    """Players still in the match."""
    k = 0
    for slot in range(n):
        if in_play(o, slot):
            k += 1
    return k


@njit(cache=True)
def _slot_after(o, n, step):
    x = step % n
    for _ in range(n):
        if x == 0 or in_play(o, x):
            return x
        x = (x + step) % n
    return 0


@njit(cache=True)
def next_slot(o, n):
    """Relative slot of the next player in the current direction (eliminated seats skipped)."""
    return _slot_after(o, n, 1 if o[OBS_DIRECTION] > 0 else -1)


@njit(cache=True)
def prev_slot(o, n):
    """Relative slot of the previous player (who just played, in respond phases)."""
    return _slot_after(o, n, -1 if o[OBS_DIRECTION] > 0 else 1)


@njit(cache=True)
def is_partner(o, slot):
    """Whether a relative slot holds the observer's partner (R8 teams)."""
    return o[OBS_PARTNER + slot] > 0.5


@njit(cache=True)
def hand_size_at(o, slot):
    """Cards held by the seat in a relative slot."""
    return int(o[OBS_HAND_SIZES + slot] + 0.5)


@njit(cache=True)
def held(o, t):
    """Copies of card type t in the observer's hand."""
    return int(o[OBS_HAND + t] + 0.5)


@njit(cache=True)
def color_counts(o, out):
    """Coloured cards held per colour, into out (int64 [4]); wilds are not counted."""
    out[:] = 0
    for t in range(52):
        out[CARD_COLOR[t]] += held(o, t)


@njit(cache=True)
def most_held_color(o):
    """The colour the observer holds most coloured cards of (lowest id on a tie)."""
    counts = np.zeros(4, np.int64)
    color_counts(o, counts)
    return np.argmax(counts)


@njit(cache=True)
def wd4_legal(o, wilds_match):
    """R4, R12.9: holding no other card of the current colour, a Wild Draw Four is legal."""
    color = color_of(o)
    if color >= 0:
        for r in range(13):
            if held(o, color * 13 + r) > 0:
                return False
    if wilds_match:
        for t in range(WILD, NUM_CARD_TYPES):
            if t != WILD_DRAW_FOUR and held(o, t) > 0:
                return False
    return True


@njit(cache=True)
def unseen_counts(o, deck, out):
    """Copies of each type the observer cannot see (draw pile plus other hands), into out."""
    for t in range(NUM_CARD_TYPES):
        out[t] = max(deck[t] - held(o, t) - int(o[OBS_DISCARD + t] + 0.5), 0)


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
def kth_legal(mask_row, u):
    """A uniformly random legal action of one mask row (u uniform in [0, 1)); -1 if none."""
    count = 0
    for a in range(mask_row.shape[0]):
        if mask_row[a]:
            count += 1
    if count == 0:
        return -1
    k = min(int(u * count), count - 1)
    for a in range(mask_row.shape[0]):
        if mask_row[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True)
def is_plain_wild(t):
    """A wild other than the Wild Draw Four (Wild, Shuffle Hands, Swap Hands, Customizable)."""
    return t >= WILD and t != WILD_DRAW_FOUR


@njit(cache=True)
def rank_of(t):
    """Rank 0–12 of a coloured card, -1 for a wild."""
    return CARD_RANK[t]


@njit(cache=True)
def smallest_hand_swap(o, m, n):
    """SWAP_WITH the opponent holding the fewest cards among those offered (R5), or -1."""
    best, best_h = -1, 1 << 30
    for k in range(1, n):
        a = SWAP_FIRST + k - 1
        if m[a] and not is_partner(o, k) and hand_size_at(o, k) < best_h:
            best, best_h = a, hand_size_at(o, k)
    return best


@njit(cache=True)
def double_of(t):
    """PLAY_DOUBLE action id of a number card type (R2), or -1 for other cards."""
    if t >= 52 or CARD_RANK[t] >= 10:
        return -1
    return PLAY_DOUBLE_FIRST + CARD_COLOR[t] * 10 + CARD_RANK[t]


@njit(cache=True)
def card_of_double(a):
    """Number card type played twice by a PLAY_DOUBLE action id."""
    k = a - PLAY_DOUBLE_FIRST
    return (k // 10) * 13 + k % 10


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
    """Respond phases without a challenge: pass a stacked penalty on when allowed (R5), else take it.

    A Draw Two answers a Draw Two; a Wild Draw Four answers one only when R4 allows it (no
    bluff). Returns -1 outside the respond phases or when neither is offered.
    """
    if phase == PHASE_RESPOND_DRAW_TWO:
        for c in range(4):
            if m[c * 13 + DRAW_TWO]:
                return c * 13 + DRAW_TWO
        if m[DRAW]:
            return DRAW
    elif phase == PHASE_RESPOND_DRAW_FOUR:
        if m[WILD_DRAW_FOUR] and wd4_legal(o, wilds_match):
            return WILD_DRAW_FOUR
        if m[ACCEPT]:
            return ACCEPT
    return -1
